// Issue 33's rules, as decide's pure decisions: a start held at a dialog before its claim
// (rule 12 `blocked`, paged once; rule 13 quotes what it waited for; the crash-loop stand-down
// too), a start sheepdog stopped is not stopped again nor said to have exited, restarts of a
// live holder are unplanned after an earlier `unpaused`, and a manager whose pane showed a
// dialog when it was due a nudge is left for a person.
import { describe, expect, it } from "vitest";
import type { JournalEvent } from "../../src/journal/journal.js";
import { history } from "../../src/journal/replay.js";
import type { Facts } from "../../src/watchdog/gather/facts.js";
import { type Decision, decide, isNeeds } from "../../src/watchdog/rules/decide.js";
import { effectName } from "../../src/watchdog/rules/effects.js";
import { type HeldStartFacts, heldStart } from "../../src/watchdog/rules/held-start.js";
import { ago, ev, factsAt, NOW, POLICY, ST } from "./decide-world.js";

const DIALOG = "Auto mode can't check actions in this session";
const MESSAGE = "Auto mode can't check actions in this session and needs your choice";

const tmuxStart = (m: number, planned = true, pid = 500) =>
  ev(m, "manager_started", {
    reason: "r",
    planned,
    launcher: "tmux",
    pane: "%3",
    window: "catalog:@2",
    pid,
    start_time: ST,
    launch_began: ago(m + 0.2),
  });

const heldFacts = (o: Partial<HeldStartFacts> = {}): HeldStartFacts => ({
  dialog: DIALOG,
  screen: `❯ claim\n${DIALOG}\nEnter to stay in auto mode · Esc to cancel`,
  notification: { at: ago(0.5), type: "agent_needs_input", message: MESSAGE },
  transcript_grew_at: ago(0.8),
  ...o,
});

function judge(events: JournalEvent[], over: Partial<Facts> = {}): Decision {
  const d = decide(factsAt(events, over), POLICY);
  if (isNeeds(d)) throw new Error(`asked for ${d.needs.join(", ")}`);
  return d;
}
const names = (d: Decision) => [d.decision, ...d.effects.map(effectName)];

describe("heldStart: whether a start waits for a person", () => {
  it.each([
    ["a dialog on its screen", heldFacts({ notification: null }), DIALOG],
    [
      "a Notification that waits, the screen unread",
      heldFacts({ dialog: null, screen: null }),
      MESSAGE,
    ],
    ["both: the hook's words", heldFacts(), MESSAGE],
  ])("%s: held", (_n, f, what) => {
    expect(heldStart(f, NOW)?.waiting_for).toBe(what);
  });
  it.each([
    ["nothing read", undefined],
    ["no dialog, no Notification", heldFacts({ dialog: null, notification: null })],
    [
      "a Notification answered since (the transcript grew after it), no dialog now",
      heldFacts({ dialog: null, transcript_grew_at: ago(0.1) }),
    ],
  ])("%s: not held", (_n, f) => {
    expect(heldStart(f, NOW)).toBeNull();
  });
});

describe("rule 12: a start held before its claim", () => {
  const START = [tmuxStart(3)];

  it("asks for the start's screen and hook record while it is within claim_grace", () => {
    const d = decide(factsAt(START, { unread: ["start_held"] }), POLICY);
    expect(isNeeds(d) && d.needs).toEqual(["start_held"]);
    // Past claim_grace it is rule 13's, which reads nothing more.
    const late = decide(factsAt([tmuxStart(11)], { unread: ["start_held"] }), POLICY);
    expect(isNeeds(late)).toBe(false);
  });

  it("held: `blocked`, paged once through its note, with what it waits for and the screen", () => {
    const d = judge(START, { start_held: heldFacts() });
    expect(names(d)).toEqual(["blocked", "note"]);
    expect(d.rule).toBe(12);
    expect(d.effects[0]).toMatchObject({
      kind: "note",
      type: "blocked",
      pid: 500,
      waiting_for: MESSAGE,
      screen: expect.stringContaining(DIALOG),
      notification: { type: "agent_needs_input" },
      start: { pane: "%3" },
    });
    expect(d.reason).toMatch(/has not claimed yet: it waits for a person/);
  });

  it("once journaled `blocked`: `starting`, saying what it waits for and when it was paged", () => {
    const blocked = ev(2, "blocked", {
      pid: 500,
      launch_began: ago(3.2),
      waiting_for: MESSAGE,
      reason: "r",
    });
    const d = judge([...START, blocked], { start_held: heldFacts() });
    expect(names(d)).toEqual(["starting"]);
    expect(d.reason).toContain(`it waits for a person (${MESSAGE}; paged 2m ago)`);
  });

  it("a `blocked` of an earlier start is not this one's", () => {
    const old = ev(20, "blocked", { pid: 400, launch_began: ago(25), waiting_for: "x" });
    const d = judge(
      [
        tmuxStart(25, true, 400),
        old,
        ev(12, "manager_stopped", { pid: 400, start_time: ST, who: "leftover" }),
        ...START,
      ],
      {
        start_held: heldFacts(),
      },
    );
    expect(d.decision).toBe("blocked");
  });

  it("not held: `starting` as before", () => {
    expect(
      names(judge(START, { start_held: heldFacts({ dialog: null, notification: null }) })),
    ).toEqual(["starting"]);
  });
});

describe("rule 13: what a held start waited for is said, and the crash-loop page quotes it", () => {
  const held = (m: number, pid: number) => [
    tmuxStart(m, false, pid),
    ev(m - 1, "blocked", { pid, launch_began: ago(m + 0.2), waiting_for: MESSAGE, reason: "r" }),
  ];
  it("past claim_grace: stopped (its evidence kept by act), replaced; the reason says why", () => {
    const d = judge([
      ev(80, "manager_started", { planned: true, launcher: "tmux" }),
      ev(79, "claimed", { pid: 1, start_time: ST }),
      ev(70, "claim_broken"),
      ...held(11, 500),
    ]);
    expect(names(d)).toEqual(["start", "stop:leftover", "start"]);
    expect(d.reason).toContain(`never claimed (grace 10m); it waited for a person: ${MESSAGE}`);
  });
  it("the third unplanned start in an hour stands down, quoting it", () => {
    const events = [
      ev(80, "manager_started", { planned: true, launcher: "tmux" }),
      ev(79, "claimed", { pid: 1, start_time: ST }),
      ev(70, "claim_broken"),
      ...held(45, 501),
      ev(34, "manager_stopped", { pid: 501, start_time: ST, who: "leftover" }),
      ...held(34, 502),
      ev(23, "manager_stopped", { pid: 502, start_time: ST, who: "leftover" }),
      ...held(23, 503),
    ];
    const d = judge(events);
    expect(d.decision).toBe("stand_down");
    const stand = d.effects.find((e) => e.kind === "stand_down") as { reason: string };
    expect(stand.reason).toContain(`it waited for a person: ${MESSAGE}`);
    expect(stand.reason).toMatch(/crash loop: 3 unplanned starts/);
  });
});

describe("a start sheepdog stopped before it claimed", () => {
  // A crash-loop stand-down stopped the leftover; after `resume` nothing of it is left.
  const events = [
    tmuxStart(40, false, 500),
    ev(29, "manager_stopped", { pid: 500, start_time: ST, who: "leftover", outcome: "terminated" }),
    ev(29, "stood_down", { reason: "crash loop" }),
    ev(5, "cleared"),
  ];
  it("is not stopped again, nor said to have exited before it claimed", () => {
    const d = judge(events, { last_start_process: "dead" });
    expect(names(d)).toEqual(["start", "start"]);
    expect(d.reason).toMatch(/never claimed and was stopped 29m ago/);
    expect(d.reason).not.toMatch(/exited/);
  });
  it("replay marks it stopped, matched by pid and start time (or by launch_began)", () => {
    expect(history(events).last_start?.stopped).toEqual({ at: ago(29) });
    const other = [
      tmuxStart(40, false, 500),
      ev(29, "manager_stopped", { pid: 999, start_time: ST }),
    ];
    expect(history(other).last_start?.stopped).toBeUndefined();
  });
});

describe("an idle or wedged restart of a live holder after an earlier `unpaused` is unplanned", () => {
  const base = [
    tmuxStart(120, true, 42),
    ev(119, "claimed", { pid: 42, start_time: ST }),
    ev(100, "paused", { until: ago(60), reason: "seat limited", window: "five_hour" }),
    ev(59, "unpaused", { reason: "the pause is over" }),
    ev(50, "saved", { pid: 42, context_tokens: 1000 }),
  ];
  const facts = (activity?: Facts["activity"]): Partial<Facts> => ({
    claim: {
      state: "alive",
      pid: 42,
      start_time: ST,
      machine_id: "m",
      hostname: "h",
      claimed_at: ago(119),
    },
    heartbeat: { at: ago(activity ? 12 : 50), pid: 42, context_tokens: 1000 },
    ...(activity ? { activity } : {}),
  });
  const startOf = (d: Decision) =>
    d.effects.find((e) => e.kind === "start") as { planned: boolean };
  it("restart_idle (nudged, still idle)", () => {
    const events = [
      ...base.slice(0, 4),
      ev(12, "saved", { pid: 42 }),
      ev(4, "nudged", { pid: 42 }),
    ];
    const d = judge(events, facts({ verdict: "idle", evidence: ["e"], transcript: null }));
    expect(d.decision).toBe("restart_idle");
    expect(startOf(d).planned).toBe(false);
  });
  it("but restart_stuck (rule 9) after the pause keeps the pause's planned start: it never went on", () => {
    const d = judge(base, facts());
    expect(d.decision).toBe("restart_stuck");
    expect(startOf(d).planned).toBe(true);
  });
  it("but the start after the pause's own end, with no manager, is still planned", () => {
    const d = judge([...base.slice(0, 2), ev(99, "claim_broken"), ...base.slice(2, 4)], {});
    expect(startOf(d).planned).toBe(true);
  });
});

describe("nudge safety: an idle manager whose pane showed a dialog is left for a person", () => {
  const events = [
    tmuxStart(61, true, 42),
    ev(60, "claimed", { pid: 42, start_time: ST }),
    ev(12, "saved", { pid: 42 }),
    ev(1, "blocked", { pid: 42, reason: "not nudged: its pane shows a dialog" }),
  ];
  it("no nudge, no restart before stale_after", () => {
    const d = judge(events, {
      claim: {
        state: "alive",
        pid: 42,
        start_time: ST,
        machine_id: "m",
        hostname: "h",
        claimed_at: ago(60),
      },
      heartbeat: { at: ago(12), pid: 42, context_tokens: 1000 },
      activity: { verdict: "idle", evidence: ["the turn ended"], transcript: null, since: ago(11) },
    });
    expect(names(d)).toEqual(["ok"]);
    expect(d.reason).toMatch(/its pane showed a dialog when it was due a nudge/);
  });
  it("the nudge decision says it is due, not that it was sent", () => {
    const d = judge(events.slice(0, 3), {
      claim: {
        state: "alive",
        pid: 42,
        start_time: ST,
        machine_id: "m",
        hostname: "h",
        claimed_at: ago(60),
      },
      heartbeat: { at: ago(12), pid: 42, context_tokens: 1000 },
      activity: { verdict: "idle", evidence: ["the turn ended"], transcript: null, since: ago(11) },
    });
    expect(d.decision).toBe("nudge");
    expect(d.reason).toMatch(/one nudge is due/);
    expect(d.reason).not.toMatch(/nudged once/);
  });
});

describe("a usage pause's reason says until once", () => {
  it("the seat's reason names the reset: not again after it", () => {
    const d = judge([], {
      seat: {
        seat: "/s",
        limited: true,
        until: ago(-90),
        reason: `five_hour window at 100% until ${ago(-90)}`,
        window: "five_hour",
      },
    });
    const pause = d.effects.find((e) => e.kind === "pause") as { reason: string };
    expect(pause.reason.match(/until/g)).toHaveLength(1);
  });
});
