// The report's bars on replay's lifecycle fold (issue 33): every order in which a start's intent
// (`manager_starting`), its manager's claim and its launch (`manager_started`) reach the journal
// gives one row per manager, each with its own saves, and the "now:" pill names the right one.
// The tmux and herdr launchers journal the start once the prompt arrived, so a fast manager
// claims first; older journals have no intent, and a manual claim has no start at all.

import { describe, expect, it } from "vitest";
import type { JournalEvent } from "../../src/journal/journal.js";
import { lifecycle } from "../../src/journal/replay.js";
import { ENDING_STYLE, reportHtml } from "../../src/report/html.js";
import { standing } from "../../src/report/numbers.js";
import { buildTimeline, ENDINGS } from "../../src/report/timeline.js";
import { asEvent } from "../helpers/events.js";

const T0 = Date.parse("2026-11-30T00:00:00.000Z");
const at = (s: number) => new Date(T0 + s * 1000).toISOString();
const ev = (s: number, type: string, fields: Record<string, unknown> = {}): JournalEvent =>
  asEvent({ at: at(s), type, ...fields });
const timeline = (events: JournalEvent[], to = T0 + 3600_000) =>
  buildTimeline({ program: "catalog", root: "/loops/catalog", events, from: T0, to });

type Step = "starting" | "claimed" | "started";
/** One manager's start, in the order given, its launch beginning at `s`; `pid` claims. */
function start(order: Step[], s: number, pid: number, o: { startPid?: boolean } = {}) {
  const began = at(s);
  return order.map((step, i) => {
    const t = s + 1 + i;
    if (step === "starting")
      return ev(t, "manager_starting", {
        reason: `start of ${pid}`,
        planned: true,
        launcher: "tmux",
        launch_began: began,
      });
    if (step === "claimed") return ev(t, "claimed", { pid, start_time: `st-${pid}` });
    return ev(t, "manager_started", {
      reason: `start of ${pid}`,
      planned: true,
      launcher: "tmux",
      pane: `%${pid}`,
      launch_began: began,
      ...(o.startPid === false ? {} : { pid, start_time: `st-${pid}` }),
    });
  });
}
const saved = (s: number, pid: number, tokens: number) =>
  ev(s, "saved", { pid, context_tokens: tokens, progress: null, pushed: null });

const ORDERS: { name: string; order: Step[]; startPid?: boolean }[] = [
  {
    name: "intent, launch, claim (the command launcher)",
    order: ["starting", "started", "claimed"],
  },
  {
    name: "intent, claim, launch (tmux: a fast manager claims before the prompt is seen)",
    order: ["starting", "claimed", "started"],
  },
  {
    name: "intent, claim, launch with no pid (herdr)",
    order: ["starting", "claimed", "started"],
    startPid: false,
  },
  { name: "launch, claim (an older journal: no intent)", order: ["started", "claimed"] },
  {
    name: "claim, launch (an older herdr journal: the claim first, no intent)",
    order: ["claimed", "started"],
  },
  {
    name: "intent, claim, no launch journaled (the tick died mid-launch)",
    order: ["starting", "claimed"],
  },
];

describe("one row per manager, whatever the order", () => {
  it.each(ORDERS)("$name", ({ order, startPid }) => {
    // Manager 1 starts, saves twice (once right after its claim), hands over; manager 2 starts
    // the same way, saves three times, and still runs.
    const events = [
      ...start(order, 0, 101, { startPid }),
      saved(10, 101, 10_000),
      saved(20, 101, 20_000),
      ev(30, "hand_over", { pid: 101, context_tokens: 150_000, note: "full" }),
      ev(30, "released", { pid: 101 }),
      ...start(order, 40, 202, { startPid }),
      saved(50, 202, 11_000),
      saved(60, 202, 12_000),
      saved(70, 202, 13_000),
    ];
    const t = timeline(events);
    expect(t.managers.map((m) => [m.n, m.pid, m.ending, m.saves])).toEqual([
      [1, 101, "hand_over", 2],
      [2, 202, "running", 3],
    ]);
    // Its start reason and its launch on the same row as its claim; the bar begins at its launch.
    for (const [i, m] of t.managers.entries()) {
      expect(m.claimed_at).not.toBeNull();
      if (order.includes("started") || order.includes("starting"))
        expect(m.start_reason).toBe(`start of ${m.pid}`);
      expect(Date.parse(String(m.started_at ?? m.claimed_at))).toBeLessThanOrEqual(
        Date.parse(String(m.claimed_at)),
      );
      expect(m.last_tokens).toBe(i === 0 ? 150_000 : 13_000);
    }
    expect(t.managers[0]?.hand_over_tokens).toBe(150_000);
    expect(standing(t).text).toBe("running: pid 202");
  });

  it("the same night in one journal with every order, one after another: six managers, six rows", () => {
    const events: JournalEvent[] = [];
    ORDERS.forEach(({ order, startPid }, i) => {
      const s = i * 100;
      const pid = 300 + i;
      events.push(...start(order, s, pid, { startPid }), saved(s + 10, pid, 1000 * (i + 1)));
      if (i < ORDERS.length - 1)
        events.push(ev(s + 50, "hand_over", { pid, context_tokens: 150_000, note: "n" }));
    });
    const t = timeline(events);
    expect(t.managers.map((m) => [m.pid, m.saves])).toEqual(ORDERS.map((_, i) => [300 + i, 1]));
    expect(t.managers.map((m) => m.ending)).toEqual([...Array(5).fill("hand_over"), "running"]);
  });
});

describe("the lives the fold finds", () => {
  it("a start that never claims ends when the next comes; an intent with no launch is cut short", () => {
    const lives = lifecycle([
      ...start(["starting", "started"], 0, 1),
      ...start(["starting"], 100, 2),
      ...start(["starting", "started", "claimed"], 200, 3),
    ]);
    expect(lives.map((l) => [l.n, l.pid, l.end?.how ?? null])).toEqual([
      [1, 1, "superseded"],
      [2, null, "cut_short"],
      [3, 3, null],
    ]);
  });

  it("a claim with no start is a life of its own; it replaces a holder that said nothing", () => {
    const lives = lifecycle([
      ...start(["starting", "started", "claimed"], 0, 1),
      ev(50, "claimed", { pid: 9, start_time: "st-9" }),
    ]);
    expect(lives.map((l) => [l.pid, l.start === null, l.end?.how ?? null])).toEqual([
      [1, false, "replaced"],
      [9, true, null],
    ]);
  });

  it("a launch that failed after its manager claimed ends nothing", () => {
    const lives = lifecycle([
      ...start(["starting", "claimed"], 0, 1),
      ev(5, "manager_start_failed", { launcher: "herdr", reason: "boom", planned: true }),
      saved(10, 1, 5),
    ]);
    expect(lives).toHaveLength(1);
    expect(lives[0]?.end).toBeNull();
  });
});

describe("how it ended, from structured fields only", () => {
  it("a leftover stopped before it claimed is never claimed (who: leftover), whatever its reason says", () => {
    const t = timeline([
      ...start(["starting", "started"], 0, 1),
      ev(700, "manager_stopped", {
        pid: 1,
        start_time: "st-1",
        who: "leftover",
        reason: "whatever",
      }),
    ]);
    expect(t.managers.map((m) => m.ending)).toEqual(["never_claimed"]);
  });

  it("a holder the tick stopped is stopped as its decision says; the claim_broken after it changes nothing", () => {
    const t = timeline([
      ...start(["starting", "claimed", "started"], 0, 1),
      ev(400, "manager_stopped", {
        pid: 1,
        who: "holder",
        decision: "restart_idle",
        reason: "idle",
      }),
      ev(400, "claim_broken", { pid: 1, holder_state: "stopped", reason: "idle" }),
    ]);
    expect(t.managers.map((m) => m.ending)).toEqual(["idle_stopped"]);
  });
});

describe('the "now:" pill', () => {
  it("a start not claimed yet after a hand-over: starting, not 'no manager running (the last: running)'", () => {
    const t = timeline([
      ...start(["starting", "claimed", "started"], 0, 1),
      ev(30, "hand_over", { pid: 1, context_tokens: 150_000, note: "n" }),
      ...start(["starting", "started"], 40, 2),
    ]);
    expect(t.managers.map((m) => m.ending)).toEqual(["hand_over", "starting"]);
    expect(standing(t, (x) => x)).toEqual({
      text: `starting: pid 2, started ${at(40)}, not claimed yet`,
      tone: "warn",
    });
  });

  it("a holder running through an auth stand-down: the stand-down is what the pill says, the bar runs on", () => {
    const t = timeline([
      ...start(["starting", "claimed", "started"], 0, 1),
      ev(30, "stood_down", { reason: "credentials", holder_state: "alive", holder_pid: 1 }),
    ]);
    expect(t.managers.map((m) => m.ending)).toEqual(["running"]);
    expect(standing(t).text).toMatch(/^stood down since/);
  });
});

describe("the legend", () => {
  it("every ending has a colour and an entry; replaced is in it", () => {
    const t = timeline([...start(["starting", "started", "claimed"], 0, 1), saved(10, 1, 5)]);
    const html = reportHtml([t], T0 + 3600_000, "the journal");
    for (const e of ENDINGS) {
      expect(ENDING_STYLE[e].legend).toBeTruthy();
      expect(html).toContain(ENDING_STYLE[e].legend.replace(/&/g, "&amp;"));
      expect(html).toContain(`.pill.${e}{`);
    }
    expect(html).toContain("replaced (another manager claimed)");
  });
});
