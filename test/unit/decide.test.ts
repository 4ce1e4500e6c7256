import { describe, expect, it } from "vitest";
import type { JournalEvent } from "../../src/journal/journal.js";
import type { MergeLockState } from "../../src/merge-lock/lock.js";
import {
  decide as ask,
  type DecidePolicy,
  type Decision,
  isNeeds,
} from "../../src/watchdog/decide.js";
import { effectName } from "../../src/watchdog/effects.js";
import type { ClaimFacts, Facts } from "../../src/watchdog/facts.js";
import { ago, ev, factsAt, MIN, NOW, POLICY, ST } from "./decide-world.js";

/** decide with every fact read: always an answer (a request for facts fails the test). */
function decide(facts: Facts, policy: DecidePolicy): Decision {
  const d = ask(facts, policy);
  if (isNeeds(d)) throw new Error(`decide asked for ${d.needs.join(", ")}`);
  return d;
}

const started = (m: number, planned = false, fields: Record<string, unknown> = {}) =>
  ev(m, "manager_started", { reason: "r", planned, launcher: "command", ...fields });
const intending = (m: number, planned = false) =>
  ev(m, "manager_starting", { reason: "r", planned, launcher: "herdr", launch_began: ago(m) });
const claimed = (m: number, pid: number) => ev(m, "claimed", { pid, start_time: ST });
const saved = (m: number, pid: number, progress: string | null = null) =>
  ev(m, "saved", { pid, context_tokens: 1000, progress, pushed: null });
const handOver = (m: number, pid: number, progress: string | null = "p") =>
  ev(m, "hand_over", { pid, context_tokens: 201_000, note: "context full", progress });

const alive = (pid: number, claimedMinAgo: number, state: ClaimFacts["state"] = "alive") =>
  ({
    state,
    pid,
    start_time: ST,
    machine_id: "m1",
    hostname: "host",
    claimed_at: ago(claimedMinAgo),
  }) as ClaimFacts;
const beat = (m: number, pid: number, start_time?: string) => ({
  at: ago(m),
  pid,
  context_tokens: 1000,
  ...(start_time ? { start_time } : {}),
});

/**
 * A decision's effects by kind, each with its payload (`start`, `stop_holder`…): what the rows
 * below assert, beside the ordered list of effect names.
 */
interface Payloads {
  unpause?: { reason: string };
  pause?: {
    until: string;
    reason: string;
    window: string | null;
    needs_person?: { advice: string; text: string };
  };
  record_refusal?: unknown;
  keep_evidence?: { pid: number };
  stop_holder?: boolean;
  stop_note?: { reason: string; planned: true };
  stop_handed_over?: unknown;
  stop_leftover?: unknown;
  break_claim?: boolean;
  stand_down?: { reason: string };
  start?: { reason: string; planned: boolean };
}
type View = Omit<Decision, "effects"> & Payloads;

function viewOf(d: Decision): View {
  const { effects, ...rest } = d;
  const v: View = { ...rest };
  for (const e of effects) {
    if (e.kind === "stop") {
      const { kind: _, who, ...payload } = e;
      if (who === "holder") {
        v.stop_holder = true;
        if (e.note) v.stop_note = e.note;
      } else if (who === "handed_over") v.stop_handed_over = payload;
      else v.stop_leftover = e.start;
    } else if (e.kind === "break_claim") v.break_claim = true;
    else {
      const { kind, ...payload } = e;
      (v as unknown as Record<string, unknown>)[kind] = payload;
    }
  }
  return v;
}

interface Case {
  name: string;
  events?: JournalEvent[];
  facts?: Partial<Facts>;
  policy?: Partial<DecidePolicy>;
  want: Partial<View> & { decision: Decision["decision"] };
  /** The decision's effects, in act's order. */
  effects?: string[];
  /** Effects that must be absent from the decision. */
  absent?: (keyof View)[];
  reason?: RegExp;
  /** What the `stood_down` event will say. */
  standDown?: RegExp;
}

const factsOf = (c: Case): Facts => factsAt(c.events ?? [], c.facts);

// A manager that claimed 60m ago and saved 10m ago, after a planned first start.
const HEALTHY = [started(61, true), claimed(60, 42), saved(10, 42)];
const liveLock = (liveness: "alive" | "dead" | "foreign", ageMin: number): MergeLockState => ({
  held: true,
  holder: { pid: 77, start_time: "x", machine_id: "m9", item: "PR-12", at: ago(ageMin) },
  liveness,
  age_ms: ageMin * MIN,
});
/** Three managers that each handed over with the fingerprint the first found at its first save. */
const NO_PROGRESS = [
  started(90, true),
  claimed(89, 1),
  saved(88, 1, "fp"),
  handOver(70, 1, "fp"),
  started(69, true),
  claimed(68, 2),
  saved(67, 2, "fp"),
  handOver(50, 2, "fp"),
  started(49, true),
  claimed(48, 3),
  handOver(30, 3, "fp"),
];
const threeCrashes = [
  started(100, true),
  started(50),
  claimed(49, 2),
  started(30),
  claimed(29, 3),
  started(10),
  claimed(9, 4),
];

const cases: Case[] = [
  // Rule 0
  {
    name: "0: another live tick holds the lock",
    effects: [],
    facts: { tick_lock: { held: true, pid: 99, at: ago(0) } },
    want: { decision: "locked", rule: 0 },
  },
  // Rule 1
  {
    name: "1: finished",
    effects: [],
    facts: { finished: { at: ago(30), note: "backlog done" } },
    want: { decision: "finished", rule: 1 },
    reason: /backlog done.*reopen/,
  },
  {
    name: "1: finished beats stood down and paused",
    effects: [],
    facts: {
      finished: { at: ago(30), note: null },
      stood_down: { at: ago(20), reason: "x" },
      paused: { at: ago(1), until: ago(-60), reason: "p", window: null },
    },
    want: { decision: "finished" },
  },
  // Rule 2
  {
    name: "2: stood down",
    effects: [],
    facts: { stood_down: { at: ago(20), reason: "crash loop" } },
    want: { decision: "hold", rule: 2 },
    reason: /crash loop.*resume/,
  },
  // Rules 3 and 4
  {
    name: "3: paused and now < until",
    effects: [],
    facts: { paused: { at: ago(10), until: ago(-1), reason: "seat limited", window: "five_hour" } },
    want: { decision: "wait_pause", rule: 3 },
  },
  {
    name: "4: paused and now == until: unpause, then the rows below (a planned start)",
    effects: ["unpause", "start"],
    events: [...HEALTHY, ev(5, "released", { pid: 42 })],
    facts: { paused: { at: ago(10), until: ago(0), reason: "seat limited", window: null } },
    want: {
      decision: "start",
      rule: 13,
      start: {
        reason: `the pause until ${ago(0)} is over; no manager holds the claim`,
        planned: true,
      },
    },
  },
  {
    name: "4: a usage pause over, the holder died meanwhile: a planned restart naming the window reset",
    effects: ["unpause", "break_claim", "start"],
    events: HEALTHY,
    facts: {
      claim: alive(42, 60, "dead"),
      paused: { at: ago(30), until: ago(1), reason: "seat limited", window: "five_hour" },
    },
    want: {
      decision: "restart_dead",
      unpause: { reason: `the usage pause is over: the five_hour window reset at ${ago(1)}` },
      start: {
        reason: `the usage pause is over: the five_hour window reset at ${ago(1)}; the previous manager stopped: holder pid 42 is dead`,
        planned: true,
      },
    },
  },
  {
    name: "4: a usage pause over, the holder alive and silent since before it: claim_grace from the reset to go on by itself",
    effects: ["unpause"],
    events: threeCrashes,
    facts: {
      claim: alive(4, 9),
      heartbeat: null,
      paused: { at: ago(8), until: ago(0), reason: "seat limited", window: "seven_day" },
      seat: { seat: "/s", limited: false, until: null, reason: "reset", window: null },
    },
    policy: { staleAfter: 5 * MIN },
    // 9m since the claim, 8m of them paused: 1m of its own time.
    want: { decision: "ok", rule: 7, heartbeat_age_ms: 1 * MIN, gap_credit_ms: 8 * MIN },
    reason: /8m inside a usage pause is not counted/,
  },
  {
    name: "4: the tick that ends a usage pause comes after claim_grace (the host slept through the reset): a planned stop, no crash-loop count",
    effects: ["unpause", "keep_evidence", "stop:holder", "break_claim", "start"],
    events: threeCrashes,
    facts: {
      claim: alive(4, 40),
      heartbeat: null,
      paused: { at: ago(30), until: ago(15), reason: "seat limited", window: "seven_day" },
      seat: { seat: "/s", limited: false, until: null, reason: "reset", window: null },
    },
    policy: { staleAfter: 5 * MIN },
    want: {
      decision: "restart_stuck",
      stop_holder: true,
      heartbeat_age_ms: 25 * MIN,
      stop_note: {
        reason: expect.stringMatching(
          /^stopped for the usage pause; pid 4: no save since it claimed 25m ago/,
        ) as never,
        planned: true,
      },
      start: expect.objectContaining({ planned: true }) as never,
    },
    absent: ["stand_down"],
  },
  // Time inside a usage pause (DESIGN §6)
  {
    name: "7: time inside a usage pause is not counted against the holder",
    effects: [],
    events: [
      ...HEALTHY,
      ev(200, "paused", { until: ago(20), reason: "seat limited", window: "five_hour" }),
      ev(20, "unpaused"),
    ],
    facts: { claim: alive(42, 300), heartbeat: beat(210, 42) },
    want: { decision: "ok", rule: 7, heartbeat_age_ms: 30 * MIN, gap_credit_ms: 180 * MIN },
    reason: /3h inside a usage pause is not counted/,
  },
  {
    name: "7: after a usage pause, a holder stale by its own time has claim_grace from the reset",
    effects: [],
    events: [
      ...HEALTHY,
      ev(205, "paused", { until: ago(5), reason: "seat limited", window: "five_hour" }),
      ev(5, "unpaused"),
    ],
    facts: { claim: alive(42, 300), heartbeat: beat(250, 42) },
    want: { decision: "ok", rule: 7, heartbeat_age_ms: 50 * MIN },
    reason: new RegExp(
      `usage pause ended at ${ago(5)}: it has until ${ago(-5)} \\(claim_grace 10m\\) to go on by itself`,
    ),
  },
  {
    name: "9: claim_grace after the pause is over and the holder is still silent: stuck",
    effects: ["keep_evidence", "stop:holder", "break_claim", "start"],
    events: [
      ...HEALTHY,
      ev(205, "paused", { until: ago(15), reason: "seat limited", window: "five_hour" }),
      ev(15, "unpaused"),
    ],
    facts: { claim: alive(42, 300), heartbeat: beat(250, 42) },
    want: { decision: "restart_stuck", heartbeat_age_ms: 60 * MIN, gap_credit_ms: 190 * MIN },
    absent: ["stop_note"],
  },
  {
    name: "9: a person's pause (no window) is no usage pause: its time counts",
    effects: ["keep_evidence", "stop:holder", "break_claim", "start"],
    events: [
      ...HEALTHY,
      ev(200, "paused", { until: ago(20), reason: "by hand", window: null }),
      ev(20, "unpaused"),
    ],
    facts: { claim: alive(42, 300), heartbeat: beat(210, 42) },
    want: { decision: "restart_stuck", heartbeat_age_ms: 210 * MIN, gap_credit_ms: 0 },
  },
  {
    name: "9: a person's unpause ends the usage pause where it was made",
    effects: ["keep_evidence", "stop:holder", "break_claim", "start"],
    events: [
      ...HEALTHY,
      ev(200, "paused", { until: ago(-100), reason: "seat limited", window: "five_hour" }),
      ev(100, "unpaused", { by: "person" }),
    ],
    facts: { claim: alive(42, 300), heartbeat: beat(210, 42) },
    want: { decision: "restart_stuck", heartbeat_age_ms: 110 * MIN, gap_credit_ms: 100 * MIN },
  },
  {
    name: "7: a sleep inside a usage pause is credited once",
    effects: [],
    events: [
      ...HEALTHY,
      ev(200, "paused", { until: ago(20), reason: "seat limited", window: "five_hour" }),
      ev(20, "unpaused"),
    ],
    facts: {
      claim: alive(42, 300),
      heartbeat: beat(210, 42),
      gaps: [{ from: ago(150), to: ago(60) }],
    },
    want: { decision: "ok", heartbeat_age_ms: 30 * MIN, gap_credit_ms: 180 * MIN },
  },
  {
    name: "4: pause over but the seat is still limited: unpause and pause again",
    effects: ["unpause", "pause"],
    facts: {
      paused: { at: ago(60), until: ago(1), reason: "x", window: null },
      seat: {
        seat: "/s",
        limited: true,
        until: ago(-30),
        reason: "5h at 100%",
        window: "five_hour",
      },
    },
    want: { decision: "pause", rule: 5 },
  },
  {
    name: "4: pause over, a live fresh manager: unpause, ok",
    effects: ["unpause"],
    events: HEALTHY,
    facts: {
      claim: alive(42, 60),
      heartbeat: beat(10, 42),
      paused: { at: ago(60), until: ago(1), reason: "x", window: null },
    },
    want: { decision: "ok" },
  },
  // Rule 5
  {
    name: "5: seat limited with a known reset",
    effects: ["pause"],
    events: HEALTHY,
    facts: {
      claim: alive(42, 60),
      heartbeat: beat(10, 42),
      seat: {
        seat: "/s",
        limited: true,
        until: ago(-90),
        reason: "5h at 100%",
        window: "five_hour",
      },
    },
    want: {
      decision: "pause",
      rule: 5,
      pause: {
        until: ago(-90),
        reason: `seat /s is limited (5h at 100%) until ${ago(-90)}`,
        window: "five_hour",
      },
    },
    absent: ["start", "stop_holder", "unpause"],
  },
  {
    name: "5: a refusal in the transcript is named in the pause's reason",
    effects: ["pause"],
    events: HEALTHY,
    facts: {
      claim: alive(42, 60, "dead"),
      seat: {
        seat: "/s",
        limited: true,
        until: ago(-60),
        reason: "five_hour window at 100% until 13:00Z",
        window: "five_hour",
        refusal: {
          text: "Claude AI usage limit reached",
          at: ago(2),
          resets_at: ago(-60),
          named_reset: false,
          transcript: "/s/projects/-x/a.jsonl",
        },
      },
    },
    want: { decision: "pause", rule: 5 },
    absent: ["start", "break_claim"],
    reason:
      /ends in a usage-limit refusal naming no reset, so it is re-checked after usage\.pause_fallback \(1h\)/,
  },
  {
    name: "5: a refusal naming no reset (an org's spend cap): the pause carries what a person must do",
    effects: ["pause"],
    events: HEALTHY,
    facts: {
      claim: alive(42, 60, "dead"),
      seat: {
        seat: "/s",
        limited: true,
        until: ago(-60),
        reason: "seven_day usage-limit refusal until 13:00Z",
        window: "seven_day",
        refusal: {
          text: "You've hit your org's monthly spend limit · ask your admin to raise it at https://claude.ai/admin-settings/usage",
          at: ago(2),
          resets_at: ago(-60),
          named_reset: false,
          transcript: "/s/projects/-x/a.jsonl",
          window: "seven_day",
          exact: true,
          limit_type: "overage",
          needs_person: "ask your admin to raise it at https://claude.ai/admin-settings/usage",
        },
      },
    },
    want: {
      decision: "pause",
      rule: 5,
      pause: {
        until: ago(-60),
        reason: expect.stringMatching(/a person must act: Claude Code said "You've hit your org's/),
        window: "seven_day",
        needs_person: {
          advice: "ask your admin to raise it at https://claude.ai/admin-settings/usage",
          text: "You've hit your org's monthly spend limit · ask your admin to raise it at https://claude.ai/admin-settings/usage",
        },
      },
    },
    absent: ["start", "break_claim"],
  },
  {
    name: "5: seat limited with no reset named: pause_fallback",
    effects: ["pause"],
    facts: {
      seat: { seat: "/s", limited: true, until: null, reason: "refusal", window: null },
    },
    want: { decision: "pause" },
  },
  // Rule 6
  {
    name: "6: claim from another machine",
    effects: [],
    facts: { claim: alive(42, 300, "foreign") },
    want: { decision: "foreign", rule: 6 },
    absent: ["start", "break_claim"],
  },
  // Rule 7 and heartbeat age
  {
    name: "7: alive, saved 10m ago",
    effects: [],
    events: HEALTHY,
    facts: { claim: alive(42, 60), heartbeat: beat(10, 42) },
    want: { decision: "ok", rule: 7, heartbeat_age_ms: 10 * MIN },
  },
  {
    name: "7: one millisecond younger than stale_after is ok",
    effects: [],
    events: HEALTHY,
    facts: {
      claim: alive(42, 60),
      heartbeat: { ...beat(0, 42), at: new Date(NOW - 45 * MIN + 1).toISOString() },
    },
    want: { decision: "ok" },
  },
  {
    name: "9: exactly at stale_after is stale",
    effects: ["keep_evidence", "stop:holder", "break_claim", "start"],
    events: HEALTHY,
    facts: { claim: alive(42, 60), heartbeat: beat(45, 42) },
    want: { decision: "restart_stuck", rule: 9, heartbeat_age_ms: 45 * MIN },
  },
  {
    name: "7: a new holder is judged from its claim, not its predecessor's heartbeat",
    effects: [],
    events: [...HEALTHY, started(3), claimed(2, 43)],
    facts: { claim: alive(43, 2), heartbeat: beat(50, 42) },
    want: { decision: "ok", heartbeat_age_ms: 2 * MIN },
  },
  {
    name: "9: a new holder that never saved goes stale from its claim time",
    effects: ["keep_evidence", "stop:holder", "break_claim", "start"],
    events: [...HEALTHY, started(47), claimed(46, 43)],
    facts: { claim: alive(43, 46), heartbeat: beat(50, 42) },
    want: { decision: "restart_stuck" },
    reason: /no save since it claimed 46m ago/,
  },
  {
    name: "7: a heartbeat with the holder's pid but another start time does not count",
    effects: ["keep_evidence", "stop:holder", "break_claim", "start"],
    events: HEALTHY,
    facts: { claim: alive(42, 50), heartbeat: beat(1, 42, "linux:boot:other") },
    want: { decision: "restart_stuck", heartbeat_age_ms: 50 * MIN },
  },
  {
    name: "7: a heartbeat older than the claim does not make it older",
    effects: [],
    events: HEALTHY,
    facts: { claim: alive(42, 5), heartbeat: beat(90, 42) },
    want: { decision: "ok", heartbeat_age_ms: 5 * MIN },
  },
  // Rule 8
  {
    name: "8: stale, merge lock held by a live holder here, younger than merge_max",
    effects: [],
    events: HEALTHY,
    facts: { claim: alive(42, 60), heartbeat: beat(50, 42), merge_lock: liveLock("alive", 119) },
    want: { decision: "merge_in_flight", rule: 8 },
    absent: ["stop_holder", "start"],
  },
  {
    name: "9: stale, merge lock held by a live holder here for 5h: the merge is itself stuck",
    effects: ["keep_evidence", "stop:holder", "break_claim", "start"],
    events: HEALTHY,
    facts: { claim: alive(42, 60), heartbeat: beat(50, 42), merge_lock: liveLock("alive", 300) },
    want: { decision: "restart_stuck", rule: 9 },
  },
  {
    name: "9: a stale manager holding its own merge lock past merge_max is restarted (issue 18)",
    effects: ["keep_evidence", "stop:holder", "break_claim", "start"],
    events: HEALTHY,
    facts: {
      claim: alive(42, 180),
      heartbeat: beat(170, 42),
      merge_lock: {
        held: true,
        holder: { pid: 42, start_time: ST, machine_id: "m1", item: "PR-3", at: ago(150) },
        liveness: "alive",
        age_ms: 150 * MIN,
      },
    },
    want: { decision: "restart_stuck", rule: 9 },
  },
  {
    name: "8: stale, merge lock from another machine younger than merge_max",
    effects: [],
    events: HEALTHY,
    facts: { claim: alive(42, 60), heartbeat: beat(50, 42), merge_lock: liveLock("foreign", 119) },
    want: { decision: "merge_in_flight" },
  },
  {
    name: "9: stale, merge lock from another machine at merge_max",
    effects: ["keep_evidence", "stop:holder", "break_claim", "start"],
    events: HEALTHY,
    facts: { claim: alive(42, 60), heartbeat: beat(50, 42), merge_lock: liveLock("foreign", 120) },
    want: { decision: "restart_stuck" },
  },
  {
    name: "9: stale, merge lock held by a dead holder here",
    effects: ["keep_evidence", "stop:holder", "break_claim", "start"],
    events: HEALTHY,
    facts: { claim: alive(42, 60), heartbeat: beat(50, 42), merge_lock: liveLock("dead", 5) },
    want: { decision: "restart_stuck" },
  },
  {
    name: "9: stale, merge lock unreadable (remote unreachable): no merge to protect",
    effects: ["keep_evidence", "stop:holder", "break_claim", "start"],
    events: HEALTHY,
    facts: {
      claim: alive(42, 60),
      heartbeat: beat(50, 42),
      merge_lock: { held: false, error: "git ls-remote: could not read from remote" },
    },
    want: { decision: "restart_stuck" },
  },
  {
    name: "7: fresh beats a merge lock (rule 7 before rule 8)",
    effects: [],
    events: HEALTHY,
    facts: { claim: alive(42, 60), heartbeat: beat(1, 42), merge_lock: liveLock("alive", 5) },
    want: { decision: "ok" },
  },
  // Rule 9
  {
    name: "9: stuck: stop, break, start unplanned",
    effects: ["keep_evidence", "stop:holder", "break_claim", "start"],
    events: HEALTHY,
    facts: { claim: alive(42, 60), heartbeat: beat(47, 42) },
    want: {
      decision: "restart_stuck",
      stop_holder: true,
      break_claim: true,
      start: {
        reason: "the previous manager (pid 42) was stuck: no save for 47m (stale after 45m)",
        planned: false,
      },
    },
    absent: ["stop_note"],
    reason: /^pid 42: no save for 47m \(stale after 45m\)$/,
  },
  {
    name: "9 + guard: stuck after 3 unplanned starts: stopped first, then stand down",
    effects: ["keep_evidence", "stop:holder", "stand_down"],
    events: [...threeCrashes, saved(8, 4)],
    facts: { claim: alive(4, 9), heartbeat: beat(8, 4) },
    policy: { staleAfter: 5 * MIN },
    want: { decision: "stand_down", rule: 9, stop_holder: true },
    absent: ["start", "break_claim"],
    standDown:
      /^pid 4 was stuck: no save for 8m \(stale after 5m\); stopped, and crash loop: 3 unplanned starts within 1h .*; the managers' output is in \.sheepdog\/manager\.log$/,
  },
  // Rule 10
  {
    name: "10: holder dead",
    effects: ["break_claim", "start"],
    events: HEALTHY,
    facts: { claim: alive(42, 60, "dead"), heartbeat: beat(1, 42) },
    want: { decision: "restart_dead", rule: 10, break_claim: true },
    absent: ["stop_holder"],
    reason: /pid 42 is dead/,
  },
  {
    name: "10 → 11: a dead holder that handed over before it died: a planned start after its hand-over, not a crash (issue 18)",
    effects: ["break_claim", "stop:handed_over", "start"],
    events: [...HEALTHY, handOver(2, 42)],
    facts: { claim: alive(42, 60, "dead"), heartbeat: beat(2, 42) },
    want: {
      decision: "start_after_hand_over",
      rule: 11,
      break_claim: true,
      start: expect.objectContaining({ planned: true }) as never,
    },
    reason:
      /handed over at 201000 tokens: context full \(holder pid 42 handed over, then died before it released its claim\)/,
  },
  {
    name: "10: a dead holder that did not hand over is still a crash",
    effects: ["break_claim", "start"],
    events: [...HEALTHY, handOver(2, 41)],
    facts: { claim: alive(42, 60, "dead") },
    want: { decision: "restart_dead", rule: 10 },
  },
  {
    name: "10: holder pid reused",
    effects: ["break_claim", "start"],
    events: HEALTHY,
    facts: { claim: alive(42, 60, "reused") },
    want: { decision: "restart_dead" },
    reason: /another process/,
  },
  {
    name: "10: holder unreadable",
    effects: ["break_claim", "start"],
    events: HEALTHY,
    facts: { claim: { state: "unreadable", problem: "claim/holder.json is not valid JSON" } },
    want: { decision: "restart_dead" },
    reason: /not valid JSON/,
  },
  {
    name: "10 + guard: dead after 3 unplanned starts: stand down, claim left",
    effects: ["stand_down"],
    events: threeCrashes,
    facts: { claim: alive(4, 9, "dead") },
    want: { decision: "stand_down", rule: 10 },
    absent: ["start", "break_claim", "stop_holder"],
    standDown:
      /^holder pid 4 is dead; crash loop: 3 unplanned starts within 1h \(the last 10m ago\); another would fail the same way; the managers' output is in \.sheepdog\/manager\.log$/,
  },
  {
    name: "10 + guard: a tmux-launched manager's stand-down names no manager.log",
    effects: ["stand_down"],
    events: [
      started(100, true, { launcher: "tmux" }),
      started(50, false, { launcher: "tmux" }),
      claimed(49, 2),
      started(30, false, { launcher: "tmux" }),
      claimed(29, 3),
      started(10, false, { launcher: "tmux" }),
      claimed(9, 4),
    ],
    facts: { claim: alive(4, 9, "dead") },
    want: { decision: "stand_down", rule: 10 },
    standDown:
      /^holder pid 4 is dead; crash loop: 3 unplanned starts within 1h[^;]*; another would fail the same way$/,
  },
  // Crash-loop guard boundaries
  {
    name: "guard: 2 unplanned starts in the hour: the 3rd goes ahead",
    effects: ["break_claim", "start"],
    events: [started(100, true), started(50), claimed(49, 2), started(30), claimed(29, 3)],
    facts: { claim: alive(3, 29, "dead") },
    want: {
      decision: "restart_dead",
      start: { reason: "the previous manager stopped: holder pid 3 is dead", planned: false },
    },
  },
  {
    name: "guard: one of 3 unplanned starts older than the window does not count",
    effects: ["break_claim", "start"],
    events: [
      started(100, true),
      started(61),
      claimed(60, 2),
      started(30),
      claimed(29, 3),
      started(10),
      claimed(9, 4),
    ],
    facts: { claim: alive(4, 9, "dead") },
    want: { decision: "restart_dead" },
  },
  {
    name: "guard: a start exactly `within` ago still counts",
    effects: ["stand_down"],
    events: [
      started(100, true),
      started(60),
      claimed(59, 2),
      started(30),
      claimed(29, 3),
      started(10),
      claimed(9, 4),
    ],
    facts: { claim: alive(4, 9, "dead") },
    want: { decision: "stand_down" },
  },
  {
    name: "guard: planned starts do not count",
    effects: ["break_claim", "start"],
    events: [
      started(100, true),
      started(50),
      claimed(49, 2),
      handOver(40, 2),
      started(39, true),
      claimed(38, 3),
      started(30),
      claimed(29, 4),
    ],
    facts: { claim: alive(4, 29, "dead") },
    want: { decision: "restart_dead" },
  },
  {
    name: "guard: only starts after the last `cleared` count, and the next start is planned",
    effects: ["break_claim", "start"],
    events: [...threeCrashes.slice(0, 5), ev(20, "stood_down", { reason: "x" }), ev(15, "cleared")],
    facts: { claim: alive(3, 29, "dead") },
    want: {
      decision: "restart_dead",
      start: { reason: "the previous manager stopped: holder pid 3 is dead", planned: true },
    },
  },
  {
    name: "guard: after cleared, unplanned starts count again from zero",
    effects: ["break_claim", "start"],
    events: [
      ...threeCrashes,
      ev(8, "stood_down", { reason: "x" }),
      ev(7, "cleared"),
      started(6, true),
      claimed(5, 5),
      started(4),
      claimed(3, 6),
    ],
    facts: { claim: alive(6, 3, "dead") },
    want: {
      decision: "restart_dead",
      start: { reason: "the previous manager stopped: holder pid 6 is dead", planned: false },
    },
  },
  // Rule 11
  {
    name: "11: hand-over after the last start: planned start naming tokens and note",
    effects: ["stop:handed_over", "start"],
    events: [...HEALTHY, handOver(2, 42, "p1")],
    want: {
      decision: "start_after_hand_over",
      rule: 11,
      start: {
        reason: "the previous manager handed over at 201000 tokens: context full",
        planned: true,
      },
      stop_handed_over: {
        pid: 42,
        start_time: ST,
        start: expect.objectContaining({ at: ago(61), launcher: "command" }) as never,
      },
    },
  },
  {
    name: "11: the hand-over event's own start time names the manager to stop",
    effects: ["stop:handed_over", "start"],
    events: [started(61, true, { pane: "%3" }), claimed(60, 42), handOver(2, 42)].map((e) =>
      e.type === "hand_over" ? { ...e, start_time: "linux:boot:77" } : e,
    ),
    want: {
      decision: "start_after_hand_over",
      stop_handed_over: {
        pid: 42,
        start_time: "linux:boot:77",
        start: expect.objectContaining({ pane: "%3" }) as never,
      },
    },
  },
  {
    name: "11: a manager that claimed before the last start is not that start's pane",
    effects: ["stop:handed_over", "start"],
    events: [
      started(61, true, { pane: "%3" }),
      claimed(60, 42),
      started(30, false, { pane: "%4" }),
    ].concat(handOver(2, 42)),
    want: {
      decision: "start_after_hand_over",
      stop_handed_over: expect.objectContaining({ pid: 42, start: null }) as never,
    },
  },
  {
    name: "11: a hand-over start is planned even in a crash loop",
    effects: ["stop:handed_over", "start"],
    events: [...threeCrashes, handOver(1, 4)],
    want: { decision: "start_after_hand_over" },
  },
  {
    name: "12: a hand-over older than the last start is not rule 11",
    effects: [],
    events: [...HEALTHY, handOver(5, 42), started(3, true)],
    want: { decision: "starting", rule: 12 },
  },
  {
    name: "11: no progress in 3 managers: stand down",
    effects: ["stop:handed_over", "stand_down"],
    events: NO_PROGRESS,
    want: {
      decision: "stand_down",
      rule: 11,
      stand_down: { reason: expect.stringMatching(/no progress/) as unknown as string },
    },
    absent: ["start"],
  },
  {
    name: "11: after `resume`, hand-overs before it do not count: the pending hand-over starts (planned)",
    effects: ["stop:handed_over", "start"],
    events: [...NO_PROGRESS, ev(29, "stood_down", { reason: "no progress" }), ev(20, "cleared")],
    want: {
      decision: "start_after_hand_over",
      rule: 11,
      start: expect.objectContaining({ planned: true }) as never,
    },
    absent: ["stand_down"],
  },
  {
    name: "11: after `resume`, two more unchanged hand-overs are not a stand-down",
    effects: ["stop:handed_over", "start"],
    events: [
      ...NO_PROGRESS,
      ev(29, "stood_down", { reason: "no progress" }),
      ev(28, "cleared"),
      started(27, true),
      claimed(26, 4),
      saved(25, 4, "fp"),
      handOver(20, 4, "fp"),
      started(19, true),
      claimed(18, 5),
      handOver(15, 5, "fp"),
    ],
    want: { decision: "start_after_hand_over" },
  },
  {
    name: "11: after `resume`, three more unchanged hand-overs stand down again",
    effects: ["stop:handed_over", "stand_down"],
    events: [
      ...NO_PROGRESS,
      ev(29, "stood_down", { reason: "no progress" }),
      ev(28, "cleared"),
      started(27, true),
      claimed(26, 4),
      saved(25, 4, "fp"),
      handOver(20, 4, "fp"),
      started(19, true),
      claimed(18, 5),
      handOver(15, 5, "fp"),
      started(14, true),
      claimed(13, 6),
      handOver(10, 6, "fp"),
    ],
    want: { decision: "stand_down", rule: 11 },
  },
  {
    name: "11: a manager that claimed before `resume` and handed over after it counts",
    effects: ["stop:handed_over", "stand_down"],
    events: [
      ...NO_PROGRESS.slice(0, 8),
      started(49, true),
      claimed(48, 3),
      saved(47, 3, "fp"),
      ev(40, "cleared"),
      handOver(30, 3, "fp"),
      started(29, true),
      claimed(28, 4),
      handOver(20, 4, "fp"),
      started(19, true),
      claimed(18, 5),
      handOver(10, 5, "fp"),
    ],
    want: { decision: "stand_down", rule: 11 },
  },
  {
    name: "11: the first manager found another fingerprint at its first save: progress was made",
    effects: ["stop:handed_over", "start"],
    events: [
      started(90, true),
      claimed(89, 1),
      saved(88, 1, "fp0"),
      saved(80, 1, "fp"),
      handOver(70, 1, "fp"),
      started(69, true),
      claimed(68, 2),
      handOver(50, 2, "fp"),
      started(49, true),
      claimed(48, 3),
      handOver(30, 3, "fp"),
    ],
    want: { decision: "start_after_hand_over" },
  },
  {
    name: "11: a changed fingerprint in the last hand-over is not a stand-down",
    effects: ["stop:handed_over", "start"],
    events: [
      started(90, true),
      claimed(89, 1),
      saved(88, 1, "fp"),
      handOver(70, 1, "fp"),
      started(69, true),
      claimed(68, 2),
      handOver(50, 2, "fp"),
      started(49, true),
      claimed(48, 3),
      handOver(30, 3, "fp2"),
    ],
    want: { decision: "start_after_hand_over" },
  },
  {
    name: "11: two unchanged hand-overs of 3 are not a stand-down",
    effects: ["stop:handed_over", "start"],
    events: [
      started(69, true),
      claimed(68, 2),
      saved(67, 2, "fp"),
      handOver(50, 2, "fp"),
      started(49, true),
      claimed(48, 3),
      handOver(30, 3, "fp"),
    ],
    want: { decision: "start_after_hand_over" },
  },
  {
    name: "11: a crash among the last 3 managers is not a no-progress stand-down",
    effects: ["stop:handed_over", "start"],
    events: [
      started(90, true),
      claimed(89, 1),
      saved(88, 1, "fp"),
      ev(70, "claim_broken", { pid: 1 }),
      started(69),
      claimed(68, 2),
      handOver(50, 2, "fp"),
      started(49, true),
      claimed(48, 3),
      handOver(30, 3, "fp"),
    ],
    want: { decision: "start_after_hand_over" },
  },
  {
    name: "11: null fingerprints never stand down",
    effects: ["stop:handed_over", "start"],
    events: [
      started(90, true),
      claimed(89, 1),
      handOver(70, 1, null),
      started(69, true),
      claimed(68, 2),
      handOver(50, 2, null),
      started(49, true),
      claimed(48, 3),
      handOver(30, 3, null),
    ],
    want: { decision: "start_after_hand_over" },
  },
  // A wall clock stepped back (issue 18): monotonic time since the stamp says how far.
  {
    name: "9: the clock stepped back an hour after the last save: the hour counts, stuck at 70m",
    effects: ["keep_evidence", "stop:holder", "break_claim", "start"],
    events: HEALTHY,
    facts: {
      claim: alive(42, 60),
      heartbeat: { ...beat(10, 42), mono_ms: 5_000_000, boot: "b1" },
      now_mono: { mono_ms: 5_000_000 + 70 * MIN, boot: "b1" },
    },
    want: { decision: "restart_stuck", heartbeat_age_ms: 70 * MIN },
    reason: /no save for 1h10m .*the clock was stepped back 1h since: counted/,
  },
  {
    name: "7: the same save on another boot: no step can be read, wall time alone",
    effects: [],
    events: HEALTHY,
    facts: {
      claim: alive(42, 60),
      heartbeat: { ...beat(10, 42), mono_ms: 5_000_000, boot: "b1" },
      now_mono: { mono_ms: 5_000_000 + 70 * MIN, boot: "b2" },
    },
    want: { decision: "ok", rule: 7, heartbeat_age_ms: 10 * MIN },
  },
  {
    name: "7: the host slept (less monotonic time than wall time): never a step",
    effects: [],
    events: HEALTHY,
    facts: {
      claim: alive(42, 60),
      heartbeat: { ...beat(10, 42), mono_ms: 5_000_000, boot: "b1" },
      now_mono: { mono_ms: 5_000_000 + 2 * MIN, boot: "b1" },
    },
    want: { decision: "ok", rule: 7, heartbeat_age_ms: 10 * MIN },
  },
  {
    name: "7: a second of difference (two processes' reads, NTP slewing) is no step",
    effects: [],
    events: HEALTHY,
    facts: {
      claim: alive(42, 60),
      heartbeat: { ...beat(10, 42), mono_ms: 5_000_000, boot: null },
      now_mono: { mono_ms: 5_000_000 + 10 * MIN + 1500, boot: null },
    },
    want: { decision: "ok", rule: 7, heartbeat_age_ms: 10 * MIN },
  },
  {
    name: "13: a start journaled before the clock stepped back an hour is past claim_grace",
    effects: ["stop:leftover", "start"],
    events: [started(5, true, { pid: 500, start_time: "s", mono_ms: 1_000_000, boot: "b1" })],
    facts: { now_mono: { mono_ms: 1_000_000 + 65 * MIN, boot: "b1" } },
    want: { decision: "start", rule: 13 },
  },
  {
    name: "12: the same start with no step is still waited for",
    effects: [],
    events: [started(5, true, { pid: 500, start_time: "s", mono_ms: 1_000_000, boot: "b1" })],
    facts: { now_mono: { mono_ms: 1_000_000 + 5 * MIN, boot: "b1" } },
    want: { decision: "starting", rule: 12 },
  },
  {
    name: "7: a step back, then a usage pause stamped before the save's wall time: the pause still counts",
    effects: [],
    events: [
      ...HEALTHY,
      // After the clock went back an hour, the pause began at a wall time before the save's.
      ev(55, "paused", { until: ago(5), reason: "seat limited", window: "five_hour" }),
      ev(5, "unpaused"),
    ],
    facts: {
      claim: alive(42, 60),
      heartbeat: { ...beat(10, 42), mono_ms: 9_000_000, boot: "b1" },
      now_mono: { mono_ms: 9_000_000 + 70 * MIN, boot: "b1" },
    },
    // 70m since the save by the monotonic clock, 50m of it inside the pause: 20m of silence.
    want: { decision: "ok", rule: 7, heartbeat_age_ms: 20 * MIN },
  },
  // A start's intent (issue 18), journaled before its launch.
  {
    name: "crash loop: a launch whose manager claimed and then failed counts once",
    events: [
      ...HEALTHY,
      ev(50, "claim_broken"),
      intending(40),
      ev(39, "claimed", { pid: 7, start_time: ST }),
      ev(39, "manager_start_failed", { launcher: "herdr", reason: "boom", planned: false }),
      ev(30, "claim_broken"),
      intending(20),
      ev(19, "manager_start_failed", { launcher: "herdr", reason: "boom", planned: false }),
    ],
    want: { decision: "start", rule: 13 },
  },
  {
    name: "13: a start cut short and journaled so, then a failed relaunch: no second leftover",
    effects: ["start"],
    events: [
      ...HEALTHY,
      ev(30, "claim_broken"),
      intending(25),
      ev(12, "start_cut_short", { launcher: "herdr", launch_began: ago(25) }),
      intending(12),
      ev(12, "manager_start_failed", { launcher: "herdr", reason: "boom", planned: false }),
    ],
    want: { decision: "start", rule: 13 },
    reason: /the last start .* failed: boom/,
  },
  {
    name: "12: an intent no outcome followed (the tick died mid-launch): waited on, not launched again",
    effects: [],
    events: [...HEALTHY, ev(9, "claim_broken"), intending(3)],
    want: { decision: "starting", rule: 12 },
    reason: /its launch was not journaled: the tick that began it ended mid-launch/,
  },
  {
    name: "13: the cut-short start past claim_grace: started anew, the intent is the leftover",
    effects: ["stop:leftover", "start"],
    events: [...HEALTHY, ev(20, "claim_broken"), intending(11)],
    want: { decision: "start", rule: 13 },
    reason: /cut short mid-launch and nothing claimed/,
  },
  {
    name: "12: an intent and its manager_started are one start, waited on by its pid",
    effects: [],
    events: [
      ...HEALTHY,
      ev(9, "claim_broken"),
      intending(3),
      started(3, false, { pid: 600, start_time: "s", launch_began: ago(3) }),
    ],
    want: { decision: "starting", rule: 12 },
    reason: /pid 600/,
  },
  {
    name: "13: an intent whose launch failed: the failure is what the next start answers",
    effects: ["start"],
    events: [
      ...HEALTHY,
      ev(9, "claim_broken"),
      intending(3),
      ev(3, "manager_start_failed", { launcher: "command", reason: "boom", planned: false }),
    ],
    want: { decision: "start", rule: 13 },
    reason: /the last start .* failed: boom/,
  },
  {
    name: "crash loop: starts cut short mid-launch count, as unplanned starts",
    events: [
      ...HEALTHY,
      ev(50, "claim_broken"),
      intending(40),
      intending(28),
      intending(16),
      ev(12, "claimed", { pid: 7, start_time: ST }),
      ev(11, "claim_broken"),
    ],
    want: { decision: "stand_down" },
  },
  // Rule 12
  {
    name: "12: started 9m ago, nothing claimed: wait",
    effects: [],
    events: [started(9, true, { pid: 500, start_time: "s" })],
    want: { decision: "starting", rule: 12 },
    reason: /pid 500/,
  },
  {
    name: "7 and 12 name the transient unit a manager runs in",
    events: [
      started(1, true, { pid: 500, start_time: "s", unit: "sheepdog-catalog-manager-x.scope" }),
    ],
    facts: { last_start_process: "alive" },
    want: { decision: "starting", rule: 12 },
    reason: /\(pid 500 in sheepdog-catalog-manager-x\.scope\)/,
  },
  {
    name: "12: started 1m ago, its process still runs: wait",
    events: [started(1, true, { pid: 500, start_time: "s" })],
    facts: { last_start_process: "alive" },
    want: { decision: "starting", rule: 12 },
  },
  {
    name: "12→13: started 1m ago, its process already exited: not waited for, start again",
    events: [started(1, true, { pid: 500, start_time: "s" })],
    facts: { last_start_process: "dead" },
    want: {
      decision: "start",
      rule: 13,
      start: expect.objectContaining({ planned: false }) as never,
      stop_leftover: expect.objectContaining({ pid: 500 }) as never,
    },
    reason: /pid 500\) exited before it claimed/,
  },
  {
    name: "12→13: a dead start in a crash loop stands down",
    events: [
      ...threeCrashes,
      ev(8, "released", { pid: 4 }),
      started(1, false, { pid: 9, start_time: "s" }),
    ],
    facts: { last_start_process: "dead" },
    want: { decision: "stand_down", rule: 13 },
  },
  {
    name: "13: a failed first start is retried, unplanned, naming the failure",
    events: [ev(5, "manager_start_failed", { launcher: "herdr", reason: "held at a dialog" })],
    want: {
      decision: "start",
      rule: 13,
      start: expect.objectContaining({ planned: false }) as never,
    },
    reason: /last start .*herdr\) failed: held at a dialog/,
  },
  {
    name: "13: three failed starts count as unplanned starts: stand down instead of a fourth",
    events: [
      ev(30, "manager_start_failed", { launcher: "herdr", reason: "held at a dialog" }),
      ev(20, "manager_start_failed", { launcher: "herdr", reason: "held at a dialog" }),
      ev(10, "manager_start_failed", { launcher: "herdr", reason: "held at a dialog" }),
    ],
    want: { decision: "stand_down", rule: 13 },
    absent: ["start"],
    standDown: /failed: held at a dialog; crash loop: 3 unplanned starts/,
  },
  {
    name: "13: two failed starts after a claimed manager died are not yet a crash loop",
    events: [
      started(50, true),
      claimed(49, 2),
      ev(20, "released", { pid: 2 }),
      ev(15, "manager_start_failed", { launcher: "command", reason: "ENOENT" }),
      ev(10, "manager_start_failed", { launcher: "command", reason: "ENOENT" }),
    ],
    want: { decision: "start", rule: 13 },
  },
  {
    name: "13: failed starts after a hand-over are retried unplanned, so the guard stands down",
    events: [
      started(60, true),
      claimed(59, 2),
      handOver(40, 2),
      ev(30, "manager_start_failed", { launcher: "herdr", reason: "held at a dialog" }),
      ev(20, "manager_start_failed", { launcher: "herdr", reason: "held at a dialog" }),
      ev(10, "manager_start_failed", { launcher: "herdr", reason: "held at a dialog" }),
    ],
    want: { decision: "stand_down", rule: 13 },
    absent: ["start", "stop_handed_over"],
  },
  {
    name: "13: one failed start after a hand-over: the retry is unplanned",
    events: [
      started(60, true),
      claimed(59, 2),
      handOver(40, 2),
      ev(30, "manager_start_failed", { launcher: "herdr", reason: "busy" }),
    ],
    want: {
      decision: "start",
      rule: 13,
      start: expect.objectContaining({ planned: false }) as never,
    },
  },
  {
    name: "12: a start that followed a failed one waits for its claim as usual",
    events: [
      ev(5, "manager_start_failed", { launcher: "herdr", reason: "busy" }),
      started(3, false, { pid: 500, start_time: "s" }),
    ],
    facts: { last_start_process: "alive" },
    want: { decision: "starting", rule: 12 },
  },
  {
    name: "13: started exactly claim_grace ago and never claimed: stop it, start again",
    effects: ["stop:leftover", "start"],
    events: [started(10, true, { pid: 500, start_time: "s" })],
    want: {
      decision: "start",
      rule: 13,
      start: expect.objectContaining({ planned: false }) as never,
    },
    reason: /pid 500\) never claimed/,
  },
  // Rule 13
  {
    name: "13: the program's very first start is planned",
    effects: ["start"],
    want: {
      decision: "start",
      rule: 13,
      start: { reason: "the program's first start", planned: true },
    },
    absent: ["stop_leftover"],
  },
  {
    name: "13: a manual release: an unplanned start, nothing to stop",
    effects: ["start"],
    events: [...HEALTHY, ev(5, "released", { pid: 42 })],
    want: { decision: "start", start: { reason: "no manager holds the claim", planned: false } },
    absent: ["stop_leftover"],
  },
  {
    name: "13: a manual release of a herdr manager that claimed before its start was journaled: nothing to stop (issue 18)",
    effects: ["start"],
    events: [
      claimed(60, 42),
      started(59, true, { pid: 42, start_time: ST, pane: "p_1", launch_began: ago(61) }),
      saved(10, 42),
      ev(5, "released", { pid: 42 }),
    ],
    want: { decision: "start", start: { reason: "no manager holds the claim", planned: false } },
    absent: ["stop_leftover"],
  },
  {
    name: "13: a claim from before the launch began is not this start's: it never claimed",
    effects: ["stop:leftover", "start"],
    events: [
      claimed(90, 41),
      started(20, true, { pid: 42, start_time: ST, launch_began: ago(21) }),
    ],
    want: { decision: "start" },
  },
  {
    name: "13: first start after unpaused is planned",
    effects: ["start"],
    events: [
      ...HEALTHY,
      ev(5, "released", { pid: 42 }),
      ev(4, "paused", { until: ago(-1) }),
      ev(3, "unpaused"),
    ],
    want: { decision: "start", start: { reason: "no manager holds the claim", planned: true } },
  },
  {
    name: "13: first start after reopened is planned",
    effects: ["start"],
    events: [...HEALTHY, ev(5, "finished"), ev(3, "reopened")],
    want: { decision: "start", start: { reason: "no manager holds the claim", planned: true } },
  },
  {
    name: "13: first start after cleared is planned, the second is not",
    effects: ["start"],
    events: [
      ...HEALTHY,
      ev(6, "released"),
      ev(5, "cleared"),
      started(4, true),
      claimed(3, 50),
      ev(2, "released"),
    ],
    want: { decision: "start", start: { reason: "no manager holds the claim", planned: false } },
  },
  {
    name: "13 + guard: a 4th unplanned start stands down (and still stops the unclaimed start)",
    effects: ["stop:leftover", "stand_down"],
    events: [
      started(100, true),
      started(50),
      claimed(49, 2),
      ev(48, "claim_broken"),
      started(30),
      claimed(29, 3),
      ev(28, "claim_broken"),
      started(20, false, { pid: 9, start_time: "s" }),
    ],
    want: {
      decision: "stand_down",
      rule: 13,
      stop_leftover: expect.objectContaining({ pid: 9 }) as never,
    },
    absent: ["start"],
    standDown:
      /^the manager started 20m ago \(pid 9\) never claimed \(grace 10m\); crash loop: 3 unplanned starts within 1h .*manager\.log$/,
  },
  // Sleep and clock gaps
  {
    name: "gap: the watchdog last ran 3h ago: the gap is not counted against the manager",
    effects: [],
    events: HEALTHY,
    facts: { claim: alive(42, 200), heartbeat: beat(190, 42), last_tick_at: ago(185) },
    want: { decision: "ok", gap_credit_ms: 180 * MIN, heartbeat_age_ms: 10 * MIN },
    reason: /3h gap/,
  },
  {
    name: "gap: exactly two intervals is no gap",
    effects: ["keep_evidence", "stop:holder", "break_claim", "start"],
    events: HEALTHY,
    facts: { claim: alive(42, 200), heartbeat: beat(50, 42), last_tick_at: ago(10) },
    want: { decision: "restart_stuck", gap_credit_ms: 0 },
  },
  {
    name: "gap: no last tick, no credit",
    effects: ["keep_evidence", "stop:holder", "break_claim", "start"],
    events: HEALTHY,
    facts: { claim: alive(42, 200), heartbeat: beat(50, 42), last_tick_at: null },
    want: { decision: "restart_stuck" },
  },
  {
    name: "gap: remembered: the second tick after a wake still does not count the gap",
    effects: [],
    events: HEALTHY,
    facts: {
      claim: alive(42, 200),
      heartbeat: beat(190, 42),
      last_tick_at: ago(1),
      gaps: [{ from: ago(185), to: ago(1) }],
    },
    want: { decision: "ok", gap_credit_ms: 179 * MIN, heartbeat_age_ms: 11 * MIN },
    reason: /2h59m gap/,
  },
  {
    name: "gap: awake time after a remembered gap counts: stale once stale_after of it passed",
    effects: ["keep_evidence", "stop:holder", "break_claim", "start"],
    events: HEALTHY,
    facts: {
      claim: alive(42, 200),
      heartbeat: beat(190, 42),
      last_tick_at: ago(5),
      gaps: [{ from: ago(185), to: ago(40) }],
    },
    want: { decision: "restart_stuck", gap_credit_ms: 140 * MIN, heartbeat_age_ms: 50 * MIN },
    reason: /2h20m gap/,
  },
  {
    name: "gap: a save after the gap gets no credit from it",
    effects: [],
    events: HEALTHY,
    facts: {
      claim: alive(42, 200),
      heartbeat: beat(30, 42),
      last_tick_at: ago(5),
      gaps: [{ from: ago(185), to: ago(40) }],
    },
    want: { decision: "ok", gap_credit_ms: 0, heartbeat_age_ms: 30 * MIN },
  },
  {
    name: "gap: a save inside a gap is credited only the part of the gap after it",
    effects: [],
    events: HEALTHY,
    facts: {
      claim: alive(42, 200),
      heartbeat: beat(100, 42),
      last_tick_at: ago(5),
      gaps: [{ from: ago(185), to: ago(40) }],
    },
    want: { decision: "ok", gap_credit_ms: 60 * MIN, heartbeat_age_ms: 40 * MIN },
  },
  {
    name: "gap: remembered gaps add up",
    effects: [],
    events: HEALTHY,
    facts: {
      claim: alive(42, 300),
      heartbeat: beat(245, 42),
      last_tick_at: ago(5),
      gaps: [
        { from: ago(240), to: ago(150) },
        { from: ago(145), to: ago(10) },
      ],
    },
    want: { decision: "ok", gap_credit_ms: 215 * MIN, heartbeat_age_ms: 30 * MIN },
  },
  {
    name: "gap: a remembered gap and the current one add up",
    effects: [],
    events: HEALTHY,
    facts: {
      claim: alive(42, 300),
      heartbeat: beat(190, 42),
      last_tick_at: ago(90),
      gaps: [{ from: ago(185), to: ago(100) }],
    },
    want: { decision: "ok", gap_credit_ms: 165 * MIN, heartbeat_age_ms: 25 * MIN },
  },
  {
    name: "gap: the claim grace counts a remembered gap",
    effects: [],
    events: [started(100, true, { pid: 500, start_time: "s" })],
    facts: { last_tick_at: ago(1), gaps: [{ from: ago(98), to: ago(1) }] },
    want: { decision: "starting" },
    reason: /8m ago.*1h32m gap/,
  },
  // The cadence (DESIGN §6): a timer slower than the interval is not a sleep.
  {
    name: "cadence: a 15m timer (tick --every 15m) over a 5m program: 15m since the last tick is no gap",
    effects: ["keep_evidence", "stop:holder", "break_claim", "start"],
    events: HEALTHY,
    policy: { cadence: 15 * MIN },
    facts: { claim: alive(42, 200), heartbeat: beat(46, 42), last_tick_at: ago(15) },
    want: { decision: "restart_stuck", gap_credit_ms: 0, heartbeat_age_ms: 46 * MIN },
  },
  {
    name: "cadence: the same 15m without --every reads as a 10m sleep (the old behaviour, for contrast)",
    effects: [],
    events: HEALTHY,
    facts: { claim: alive(42, 200), heartbeat: beat(46, 42), last_tick_at: ago(15) },
    want: { decision: "ok", gap_credit_ms: 10 * MIN, heartbeat_age_ms: 36 * MIN },
  },
  {
    name: "cadence: a hand tick between two timer runs judges by the timer's recorded cadence",
    effects: ["keep_evidence", "stop:holder", "break_claim", "start"],
    events: HEALTHY,
    facts: {
      claim: alive(42, 200),
      heartbeat: beat(46, 42),
      last_tick_at: ago(15),
      last_tick_cadence_ms: 15 * MIN,
    },
    want: { decision: "restart_stuck", gap_credit_ms: 0 },
  },
  {
    name: "cadence: a real sleep under a 15m timer: only the excess over one cadence is credited",
    effects: [],
    events: HEALTHY,
    policy: { cadence: 15 * MIN },
    facts: { claim: alive(42, 200), heartbeat: beat(100, 42), last_tick_at: ago(95) },
    want: { decision: "ok", gap_credit_ms: 80 * MIN, heartbeat_age_ms: 20 * MIN },
  },
  {
    name: "gap: claim grace does not count a gap either",
    effects: [],
    events: [started(100, true, { pid: 500, start_time: "s" })],
    facts: { last_tick_at: ago(98) },
    want: { decision: "starting" },
  },
];

describe("decide (DESIGN §6, first match wins)", () => {
  it.each(cases)("$name", (c) => {
    const d = decide(factsOf(c), { ...POLICY, ...c.policy });
    const v = viewOf(d);
    if (c.effects) expect(d.effects.map(effectName)).toEqual(c.effects);
    expect(v).toMatchObject(c.want);
    for (const key of c.absent ?? []) expect(v[key], key).toBeUndefined();
    if (c.reason) expect(d.reason).toMatch(c.reason);
    if (c.standDown) expect(v.stand_down?.reason).toMatch(c.standDown);
  });

  it("rule 4 journals unpaused before going on", () => {
    const d = decide(
      factsOf({
        name: "",
        want: { decision: "ok" },
        facts: { paused: { at: ago(60), until: ago(1), reason: "x", window: null } },
      }),
      POLICY,
    );
    expect(d.effects.map(effectName)).toEqual(["unpause", "start"]);
    expect(viewOf(d).start?.planned).toBe(true);
  });

  it("rule 5 uses pause_fallback when the seat names no reset", () => {
    const d = decide(
      factsOf({
        name: "",
        want: { decision: "pause" },
        facts: {
          seat: { seat: "/s", limited: true, until: null, reason: "refusal", window: null },
        },
      }),
      POLICY,
    );
    expect(viewOf(d).pause?.until).toBe(ago(-60));
  });

  it("rule 13 hands act the unclaimed start to stop", () => {
    const d = decide(
      factsOf({
        name: "",
        want: { decision: "start" },
        events: [started(20, true, { pid: 500, start_time: "s" })],
      }),
      POLICY,
    );
    expect(d.effects).toEqual([
      {
        kind: "stop",
        who: "leftover",
        start: expect.objectContaining({ pid: 500, start_time: "s" }),
      },
      expect.objectContaining({ kind: "start" }),
    ]);
  });

  it("a refusal gather judged in memory is recorded first (gather never writes); a recorded one is not", () => {
    const refusal = {
      text: "Claude AI usage limit reached|1",
      at: ago(2),
      resets_at: ago(-60),
      named_reset: true,
      transcript: "/s/projects/-x/a.jsonl",
    };
    const seat = (recorded: boolean) => ({
      seat: "/s",
      limited: true,
      until: ago(-60),
      reason: "refusal",
      window: "five_hour",
      refusal: { ...refusal, recorded },
    });
    const fresh = decide(
      factsOf({ name: "", want: { decision: "pause" }, facts: { seat: seat(false) } }),
      POLICY,
    );
    expect(fresh.effects.map(effectName)).toEqual(["record_refusal", "pause"]);
    expect(fresh.effects[0]).toEqual({ kind: "record_refusal", ...refusal });
    const again = decide(
      factsOf({ name: "", want: { decision: "pause" }, facts: { seat: seat(true) } }),
      POLICY,
    );
    expect(again.effects.map(effectName)).toEqual(["pause"]);
  });

  it("a usage pause is told by its window, never by words in its reason", () => {
    const stuckAfter = (window: string | null, reason: string) =>
      viewOf(
        decide(
          factsOf({
            name: "",
            want: { decision: "restart_stuck" },
            events: HEALTHY,
            facts: {
              claim: alive(42, 120),
              heartbeat: beat(100, 42),
              // Over 15m ago, so claim_grace after it is over too.
              paused: { at: ago(60), until: ago(15), reason, window },
            },
          }),
          POLICY,
        ),
      ).stop_note?.reason;
    expect(stuckAfter("five_hour", "seat limited")).toMatch(/^stopped for the usage pause;/);
    expect(stuckAfter(null, "usage limit of the team, by hand")).toMatch(/^stopped for the pause;/);
  });

  it("the crash-loop guard is one rule after the match: the start and the break go, the stops stay", () => {
    const d = decide(
      factsOf({
        name: "",
        want: { decision: "stand_down" },
        events: threeCrashes,
        facts: { claim: alive(4, 9), heartbeat: beat(50, 4) },
      }),
      { ...POLICY, staleAfter: 5 * MIN },
    );
    expect(d.decision).toBe("stand_down");
    expect(d.effects.map(effectName)).toEqual(["keep_evidence", "stop:holder", "stand_down"]);
  });

  it("asks for unread facts only when a rule reaches them (the rule order lives only here)", () => {
    const unread = ["seat_refusal", "merge_lock"] as const;
    const needs = (facts: Partial<Facts>) => {
      const d = ask(
        factsOf({
          name: "",
          want: { decision: "ok" },
          events: HEALTHY,
          facts: { unread: [...unread], ...facts },
        }),
        POLICY,
      );
      return isNeeds(d) ? d.needs : undefined;
    };
    // Rules 0–3 need neither the transcript nor the merge lock.
    expect(needs({ finished: { at: ago(1), note: null } })).toBeUndefined();
    expect(needs({ tick_lock: { held: true, pid: 9, at: ago(0) } })).toBeUndefined();
    // Rule 5 and below judge the seat with the transcript.
    expect(needs({})).toEqual(["seat_refusal"]);
    // A fresh holder never reaches rule 8; a stale one does.
    const fresh = {
      claim: alive(42, 60),
      heartbeat: beat(10, 42),
      unread: ["merge_lock" as const],
    };
    expect(needs(fresh)).toBeUndefined();
    expect(needs({ ...fresh, heartbeat: beat(50, 42) })).toEqual(["merge_lock"]);
  });

  it("is pure: the same facts give the same decision, and the facts are not changed", () => {
    const f = factsOf({
      name: "",
      want: { decision: "ok" },
      events: HEALTHY,
      facts: { claim: alive(42, 60), heartbeat: beat(50, 42) },
    });
    const copy = structuredClone(f);
    expect(decide(f, POLICY)).toEqual(decide(f, POLICY));
    expect(f).toEqual(copy);
  });
});

describe("rules 9a–9c: a quiet live holder's activity (DESIGN §14)", () => {
  const tmuxStart = started(61, true, { launcher: "tmux", pane: "%3", pid: 42, start_time: ST });
  const QUIET_BEAT = [tmuxStart, claimed(60, 42), saved(12, 42)];
  const act = (verdict: string, extra: Record<string, unknown> = {}) => ({
    verdict,
    evidence: [`${verdict} evidence`],
    transcript: "/t/s.jsonl",
    ...extra,
  });
  const run = (events: JournalEvent[], activity: unknown, beatMin = 12, unread = false) =>
    ask(
      factsOf({
        name: "",
        events,
        want: { decision: "ok" },
        facts: {
          claim: alive(42, 60),
          heartbeat: beat(beatMin, 42),
          ...(activity ? { activity: activity as Facts["activity"] } : {}),
          ...(unread ? { unread: ["activity"] } : {}),
        },
      }),
      POLICY,
    );
  const names = (d: ReturnType<typeof run>) =>
    isNeeds(d) ? d.needs : [d.decision, ...d.effects.map(effectName)];

  it.each([
    ["asks for the activity once quiet_after has passed", QUIET_BEAT, null, 12, true, ["activity"]],
    ["does not ask before quiet_after", QUIET_BEAT, null, 5, true, ["ok"]],
    ["working: left alone", QUIET_BEAT, act("working"), 12, false, ["ok"]],
    ["waiting: left alone", QUIET_BEAT, act("waiting"), 12, false, ["ok"]],
    [
      "idle, not nudged: nudge",
      QUIET_BEAT,
      act("idle", { since: ago(11) }),
      12,
      false,
      ["nudge", "nudge"],
    ],
    [
      "idle, nudged 1m ago: wait nudge_wait",
      [...QUIET_BEAT, ev(1, "nudged", { pid: 42 })],
      act("idle"),
      12,
      false,
      ["ok"],
    ],
    [
      "idle, nudged 4m ago: restart_idle",
      [...QUIET_BEAT, ev(4, "nudged", { pid: 42 })],
      act("idle"),
      12,
      false,
      ["restart_idle", "note", "keep_evidence", "stop:holder", "break_claim", "start"],
    ],
    [
      "a nudge before the last save is another spell's",
      [...QUIET_BEAT.slice(0, 2), ev(20, "nudged", { pid: 42 }), saved(12, 42)],
      act("idle"),
      12,
      false,
      ["nudge", "nudge"],
    ],
    [
      "idle under the command launcher: restart at once",
      [started(61, true, { pid: 42, start_time: ST }), claimed(60, 42), saved(12, 42)],
      act("idle"),
      12,
      false,
      ["restart_idle", "note", "keep_evidence", "stop:holder", "break_claim", "start"],
    ],
    [
      "wedged: restart_wedged",
      QUIET_BEAT,
      act("wedged"),
      12,
      false,
      ["restart_wedged", "note", "keep_evidence", "stop:holder", "break_claim", "start"],
    ],
    [
      "api_retry (529): journaled and paged once",
      QUIET_BEAT,
      act("api_retry", { cause: "transient" }),
      12,
      false,
      ["api_retry", "note"],
    ],
    [
      "api_retry again in the spell: left alone",
      [...QUIET_BEAT, ev(1, "api_errors", { pid: 42 })],
      act("api_retry", { cause: "transient" }),
      12,
      false,
      ["ok"],
    ],
    [
      "at_limit (a refusal at the end, no pause yet ended): the refusal rule's, no page",
      QUIET_BEAT,
      act("at_limit"),
      12,
      false,
      ["ok"],
    ],
    [
      "interrupted by a person: no nudge, left alone",
      QUIET_BEAT,
      act("interrupted", { since: ago(11) }),
      12,
      false,
      ["ok"],
    ],
    [
      "interrupted past stale_after: rule 9 stays the backstop",
      QUIET_BEAT,
      act("interrupted", { since: ago(11) }),
      50,
      false,
      ["restart_stuck", "keep_evidence", "stop:holder", "break_claim", "start"],
    ],
    [
      "api_retry on auth or billing: stand down",
      QUIET_BEAT,
      act("api_retry", { cause: "auth" }),
      12,
      false,
      ["stand_down", "stand_down"],
    ],
    ["blocked: paged once", QUIET_BEAT, act("blocked"), 12, false, ["blocked", "note"]],
    [
      "blocked again in the spell: left alone",
      [...QUIET_BEAT, ev(1, "blocked", { pid: 42 })],
      act("blocked"),
      12,
      false,
      ["ok"],
    ],
    [
      "blocked past stale_after: rule 9 stays the backstop",
      QUIET_BEAT,
      act("blocked"),
      50,
      false,
      ["restart_stuck", "keep_evidence", "stop:holder", "break_claim", "start"],
    ],
  ] as [string, JournalEvent[], unknown, number, boolean, string[]][])(
    "%s",
    (_n, events, activity, beatMin, unread, want) => {
      expect(names(run(events, activity, beatMin, unread))).toEqual(want);
    },
  );

  it.each([
    ["auth", /pid 42: Codex cannot reach the API/],
    ["transient", /left to Codex's own retries, paged once/],
  ])("a Codex holder's api_retry (%s) names Codex, not Claude Code", (cause, want) => {
    const f = factsOf({
      name: "",
      events: QUIET_BEAT,
      want: { decision: "ok" },
      facts: {
        claim: alive(42, 60),
        heartbeat: beat(12, 42),
        activity: act("api_retry", { cause }) as Facts["activity"],
      },
    });
    const d = ask(f, { ...POLICY, agentLabel: "Codex" }) as Decision;
    expect(d.reason).toMatch(want);
    expect(d.reason).not.toContain("Claude Code");
  });
});

describe("at_limit after a pause (DESIGN §14): the dialog a manager never leaves by itself", () => {
  const tmuxStart = started(121, true, { launcher: "tmux", pane: "%3", pid: 42, start_time: ST });
  // Claimed 120m ago, saved 100m ago, paused 99m–20m ago (a person's unpause, or the reset).
  const PAUSED = [
    tmuxStart,
    claimed(120, 42),
    saved(100, 42),
    ev(99, "paused", { until: ago(20), reason: "seven_day refusal", window: "seven_day" }),
    ev(20, "unpaused", { reason: "the usage pause is over" }),
  ];
  const dialog = {
    verdict: "at_limit",
    evidence: ["Claude Code's usage-limit dialog is on the screen"],
    transcript: "/t/s.jsonl",
  };
  const run = (
    events: JournalEvent[],
    o: { activity?: unknown; unread?: boolean; beat?: number; policy?: Partial<DecidePolicy> },
  ) =>
    ask(
      factsAt(events, {
        claim: alive(42, 120),
        heartbeat: beat(o.beat ?? 100, 42),
        ...(o.activity ? { activity: o.activity as Facts["activity"] } : {}),
        ...(o.unread ? { unread: ["activity"] } : {}),
      }),
      { ...POLICY, ...o.policy },
    );

  it("asks for the activity claim_grace after the pause's end, whatever the heartbeat's age", () => {
    expect(run(PAUSED, { unread: true })).toEqual({ needs: ["activity"] });
  });

  it("still at the dialog: stopped by exact pid (an expected stop) and replaced, planned", () => {
    const d = run(PAUSED, { activity: dialog }) as Decision;
    expect(d.decision).toBe("restart_stuck");
    expect(d.rule).toBe(9);
    expect(d.effects.map(effectName)).toEqual([
      "keep_evidence",
      "stop:holder",
      "break_claim",
      "start",
    ]);
    const stop = d.effects.find((e) => e.kind === "stop");
    expect(stop).toMatchObject({ pid: 42, start_time: ST, note: { planned: true } });
    expect(d.effects.at(-1)).toMatchObject({ kind: "start", planned: true });
    expect(d.reason).toMatch(/still at Claude Code's usage-limit dialog 20m after the pause ended/);
  });

  it("a Codex holder still at its prompt after the limit is replaced the same way, in Codex's words", () => {
    const codex = {
      verdict: "at_limit",
      evidence: ["the turn ended on a usage-limit refusal: You’ve hit your usage limit."],
      transcript: "/h/.codex/sessions/2026/12/03/rollout-x.jsonl",
    };
    const policy = { agentLabel: "Codex", resumeLine: "The usage limit has reset." };
    const d = run(PAUSED, { activity: codex, policy }) as Decision;
    expect(d.decision).toBe("restart_stuck");
    expect(d.reason).toMatch(/still at its prompt after the usage limit 20m after the pause ended/);
    expect(JSON.stringify(d)).not.toContain("Claude Code");
  });

  it.each([
    ["inside claim_grace", PAUSED, { activity: dialog, policy: { claimGrace: 30 * MIN } }],
    ["it saved after the pause", [...PAUSED, saved(5, 42)], { activity: dialog, beat: 5 }],
    [
      "it went on by itself (not at the dialog)",
      PAUSED,
      { activity: { ...dialog, verdict: "working", evidence: ["grew"] } },
    ],
    [
      "it claimed after the pause ended",
      [...PAUSED, started(15, true, { pid: 42 }), claimed(14, 42)],
      { activity: dialog, beat: 100 },
    ],
  ] as [string, JournalEvent[], Parameters<typeof run>[1]][])(
    "%s: not replaced",
    (_n, events, o) => {
      const f = factsAt(events, {
        claim: alive(42, _n.startsWith("it claimed") ? 14 : 120),
        heartbeat: beat(o.beat ?? 100, 42),
        activity: o.activity as Facts["activity"],
      });
      const d = ask(f, { ...POLICY, ...o.policy });
      expect(isNeeds(d) ? d.needs : d.decision).not.toBe("restart_stuck");
    },
  );

  it("during the pause the dialog is only waited out (rule 3), never a blocked page", () => {
    const during = PAUSED.slice(0, 4);
    const f = factsAt(during, {
      claim: alive(42, 120),
      heartbeat: beat(100, 42),
      paused: { at: ago(99), until: ago(-60), reason: "seven_day refusal", window: "seven_day" },
      activity: dialog as Facts["activity"],
    });
    const d = decide(f, POLICY);
    expect(d.decision).toBe("wait_pause");
    expect(d.effects).toEqual([]);
  });
});
