// The lease row of decide (DESIGN §15), as a table: held here, the rows go on; another machine's
// fresh lease, a lost race, an unreadable ref or a remote gone past ttl − margin, nothing starts,
// and a manager of this host's own is fenced (evidence, exact-pid stop, claim broken,
// lease_lost). It comes right after rule 0, before finished, stood down and paused.
import { describe, expect, it } from "vitest";
import { stillHeld } from "../../src/lease/rule.js";
import type { Facts, LeaseFacts } from "../../src/watchdog/gather/facts.js";
import { decide as ask, type Decision, isNeeds } from "../../src/watchdog/rules/decide.js";
import { effectName } from "../../src/watchdog/rules/effects.js";
import { ago, ev, factsAt, MIN, POLICY, ST } from "./decide-world.js";

function decide(facts: Facts): Decision {
  const d = ask({ ...facts, unread: [] }, POLICY);
  if (isNeeds(d)) throw new Error(`decide asked for ${d.needs.join(", ")}`);
  return d;
}

const HOLD = 13 * MIN; // ttl 15m − margin 2m
const other = { machine_id: "m2", hostname: "mini-2", epoch: 4, renewed_at: ago(1), age_ms: MIN };
const lease = (over: Partial<LeaseFacts>): LeaseFacts => ({
  ref: "refs/sheepdog/lease/catalog",
  state: "held",
  epoch: 3,
  holder: { ...other, machine_id: "m1", hostname: "mini-1", epoch: 3 },
  since_renewal_ms: 5 * MIN,
  hold_ms: HOLD,
  was_held: true,
  ...over,
});
const alive = {
  state: "alive" as const,
  pid: 4242,
  start_time: ST,
  machine_id: "m1",
  hostname: "mini-1",
  claimed_at: ago(30),
};
const live = [
  ev(31, "manager_started", {
    reason: "r",
    planned: false,
    launcher: "command",
    pid: 4242,
    start_time: ST,
  }),
  ev(30, "claimed", { pid: 4242, start_time: ST }),
];
const beat = { at: ago(2), pid: 4242, start_time: ST, context_tokens: 1000 };
// lease_lost first: lease.json says "not held" before the stop, so a claim meanwhile is refused.
const FENCE = ["lease_lost", "keep_evidence", "stop:holder", "break_claim"];

interface Row {
  name: string;
  lease?: LeaseFacts;
  over?: Partial<Facts>;
  events?: ReturnType<typeof ev>[];
  decision: string;
  effects: string[];
  reason?: RegExp;
}

const rows: Row[] = [
  {
    name: "held here: the rows go on (a fresh holder is ok)",
    lease: lease({}),
    over: { claim: alive, heartbeat: beat },
    events: live,
    decision: "ok",
    effects: [],
  },
  {
    name: "held here just now by a takeover, no claim: a start",
    lease: lease({ how: "taken_over", was_held: false, since_renewal_ms: null }),
    decision: "start",
    effects: ["start"],
  },
  {
    name: "another machine's fresh lease, nothing here: leased_elsewhere, nothing done",
    lease: lease({
      state: "elsewhere",
      epoch: null,
      holder: other,
      was_held: false,
      since_renewal_ms: null,
    }),
    decision: "leased_elsewhere",
    effects: [],
    reason: /^the lease is held by mini-2 \(epoch 4, renewed 1m ago\): nothing starts here$/,
  },
  {
    name: "taken over by a newer epoch while this host's manager runs: fenced at once",
    lease: lease({ state: "elsewhere", epoch: null, holder: other }),
    over: { claim: alive, heartbeat: beat },
    events: live,
    decision: "leased_elsewhere",
    effects: FENCE,
    reason:
      /^this host lost the lease: taken over by mini-2 \(epoch 4\); its manager pid 4242 is stopped/,
  },
  {
    name: "a renewal whose compare-and-swap lost, no manager: lease_lost only",
    lease: lease({ state: "lost_race", epoch: null, holder: other }),
    decision: "leased_elsewhere",
    effects: ["lease_lost"],
  },
  {
    name: "the remote unreachable, renewed 3m ago (and still held at the next tick): the rows go on",
    lease: lease({
      state: "unreachable",
      since_renewal_ms: 3 * MIN,
      error: "fatal: unable to access",
    }),
    over: { claim: alive, heartbeat: beat },
    events: live,
    decision: "ok",
    effects: [],
  },
  {
    name: "the remote unreachable, renewed 8m ago: the next tick (5m) would be past ttl − margin, so it fences now",
    lease: lease({
      state: "unreachable",
      since_renewal_ms: 8 * MIN,
      error: "fatal: unable to access",
    }),
    over: { claim: alive, heartbeat: beat },
    events: live,
    decision: "leased_elsewhere",
    effects: FENCE,
    reason: /no renewal for 8m: the remote cannot be reached \(fatal: unable to access\)/,
  },
  {
    name: "the remote unreachable and this host never held it: nothing starts",
    lease: lease({
      state: "unreachable",
      epoch: null,
      holder: null,
      was_held: false,
      since_renewal_ms: null,
      error: "timed out",
    }),
    decision: "leased_elsewhere",
    effects: [],
    reason: /cannot be reached \(timed out\) and this host has never held it/,
  },
  {
    name: "a ref that is no lease: never taken over; a manager here is fenced",
    lease: lease({ state: "unreadable", epoch: null, holder: null, sha: "0123456789abcdef" }),
    over: { claim: alive, heartbeat: beat },
    events: live,
    decision: "leased_elsewhere",
    effects: FENCE,
  },
  {
    name: "before finished: a manager here is still fenced",
    lease: lease({ state: "elsewhere", epoch: null, holder: other }),
    over: { claim: alive, heartbeat: beat, finished: { at: ago(3), note: null } },
    events: live,
    decision: "leased_elsewhere",
    effects: FENCE,
  },
  {
    name: "before a pause: a manager here is still fenced",
    lease: lease({ state: "elsewhere", epoch: null, holder: other }),
    over: {
      claim: alive,
      heartbeat: beat,
      paused: { at: ago(5), until: ago(-60), reason: "limit", window: "five_hour" },
    },
    events: live,
    decision: "leased_elsewhere",
    effects: FENCE,
  },
  {
    name: "a start on its way when the lease is lost: stopped, it would claim a program not held here",
    lease: lease({ state: "elsewhere", epoch: null, holder: other }),
    over: { last_start_process: "alive" },
    events: [
      ev(1, "manager_started", {
        reason: "r",
        planned: false,
        launcher: "command",
        pid: 5151,
        start_time: ST,
      }),
    ],
    decision: "leased_elsewhere",
    effects: ["lease_lost", "stop:leftover"],
  },
  {
    name: "a start whose process is not known to run (a pane, no pid) on a standby: left, not stopped and paged every tick",
    lease: lease({ state: "elsewhere", epoch: null, holder: other, was_held: false }),
    events: [
      ev(1, "manager_started", { reason: "r", planned: false, launcher: "tmux", pane: "%3" }),
    ],
    decision: "leased_elsewhere",
    effects: [],
  },
  {
    name: "its own start on its way (a pane, no pid) when this host loses the lease: stopped, its pane closed",
    lease: lease({ state: "elsewhere", epoch: null, holder: other, was_held: true }),
    events: [
      ev(1, "manager_started", { reason: "r", planned: false, launcher: "tmux", pane: "%3" }),
    ],
    decision: "leased_elsewhere",
    effects: ["lease_lost", "stop:leftover"],
  },
  {
    name: "rule 0 still comes first",
    lease: lease({ state: "elsewhere", epoch: null, holder: other }),
    over: { tick_lock: { held: true, pid: 9, at: ago(0) } },
    decision: "locked",
    effects: [],
  },
  {
    name: "no lease: single-host, as before",
    decision: "start",
    effects: ["start"],
  },
];

describe("the lease row (DESIGN §15)", () => {
  it.each(rows)("$name", (r) => {
    const facts = factsAt(r.events ?? [], { ...r.over, ...(r.lease ? { lease: r.lease } : {}) });
    const d = decide(facts);
    expect(d.decision).toBe(r.decision);
    expect(d.effects.map(effectName)).toEqual(r.effects);
    if (r.reason) expect(d.reason).toMatch(r.reason);
  });

  it("the fence stops exactly the holder's pid and start time, and names the new holder", () => {
    const d = decide(
      factsAt(live, {
        claim: alive,
        heartbeat: beat,
        lease: lease({ state: "elsewhere", epoch: null, holder: other }),
      }),
    );
    expect(d.effects).toContainEqual(
      expect.objectContaining({
        kind: "stop",
        who: "holder",
        pid: 4242,
        start_time: ST,
        machine_id: "m1",
      }),
    );
    expect(d.effects[0]).toEqual({
      kind: "lease_lost",
      reason: "taken over by mini-2 (epoch 4)",
      cause: "elsewhere",
      holder: "mini-2",
      epoch: 4,
    });
  });

  it("stillHeld: an unrenewed lease is kept while the next tick is still inside ttl − margin", () => {
    const l = (since: number | null, over: Partial<LeaseFacts> = {}) =>
      lease({ state: "unreachable", since_renewal_ms: since, ...over });
    expect(stillHeld(l(7 * MIN), 5 * MIN)).toBe(true);
    expect(stillHeld(l(8 * MIN), 5 * MIN)).toBe(false);
    expect(stillHeld(l(8 * MIN), MIN)).toBe(true);
    expect(stillHeld(l(null), MIN)).toBe(false);
    expect(stillHeld(l(MIN, { was_held: false }), MIN)).toBe(false);
    // Only an unreachable remote keeps it: a remote that answered with another holder does not.
    expect(stillHeld(l(MIN, { state: "elsewhere" }), MIN)).toBe(false);
  });
});
