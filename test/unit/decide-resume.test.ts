// The resume line (DESIGN §19, src/watchdog/resume-rule.ts) as decide applies it: when a usage
// pause ends and a holder whose agent does not go on by itself (Codex) waits at its prompt in a
// pane, the tick types `manager.resume_line`; in every other case it types nothing.
import { describe, expect, it } from "vitest";
import { DEFAULT_RESUME_LINE } from "../../src/agent/kinds.js";
import type { JournalEvent } from "../../src/journal/journal.js";
import { decide, isNeeds } from "../../src/watchdog/decide.js";
import { effectName } from "../../src/watchdog/effects.js";
import type { Facts } from "../../src/watchdog/facts.js";
import { ago, ev, factsAt, POLICY, ST } from "./decide-world.js";

const CODEX = { ...POLICY, resumeLine: DEFAULT_RESUME_LINE };
const CLAUDE = { ...POLICY, resumeLine: null };

const tmuxStart = ev(90, "manager_started", {
  launcher: "tmux",
  pane: "%3",
  pid: 42,
  start_time: ST,
  planned: true,
  reason: "first",
});
const cmdStart = ev(90, "manager_started", {
  launcher: "command",
  pid: 42,
  start_time: ST,
  planned: true,
  reason: "first",
});
const claimed = ev(89, "claimed", { pid: 42, start_time: ST });
const saved = ev(70, "saved", { pid: 42, start_time: ST, context_tokens: 1000 });
const paused = ev(60, "paused", { until: ago(1), reason: "seat limited", window: "five_hour" });

function facts(o: {
  events?: JournalEvent[];
  window?: string | null;
  turnEnded?: boolean;
  unread?: boolean;
  limited?: boolean;
  claim?: Facts["claim"];
}): Facts {
  const events = o.events ?? [tmuxStart, claimed, saved, paused];
  return factsAt(events, {
    paused: {
      at: ago(60),
      until: ago(1),
      reason: "seat limited",
      window: o.window === undefined ? "five_hour" : o.window,
    },
    claim: o.claim ?? {
      state: "alive",
      pid: 42,
      start_time: ST,
      machine_id: "m",
      hostname: "h",
      claimed_at: ago(89),
    },
    heartbeat: { at: ago(70), pid: 42, context_tokens: 1000 },
    seat: {
      seat: "/home/u/.codex",
      limited: o.limited === true,
      until: o.limited ? ago(-60) : null,
      reason: o.limited ? "five_hour window at 100%" : "under",
      window: o.limited ? "five_hour" : null,
    },
    ...(o.unread
      ? { unread: ["activity"] }
      : {
          activity: {
            verdict: "at_limit",
            evidence: ["the turn ended on a usage-limit refusal: You’ve hit your usage limit."],
            transcript: "/h/.codex/sessions/2026/11/30/rollout-x.jsonl",
            turn_ended: o.turnEnded !== false,
          },
        }),
  });
}

const names = (d: ReturnType<typeof decide>) =>
  isNeeds(d) ? d.needs : [d.decision, ...d.effects.map(effectName)];

describe("the resume line after a usage pause", () => {
  it.each([
    [
      "Codex at its prompt in a tmux pane: unpause, then the line",
      facts({}),
      CODEX,
      ["ok", "unpause", "resume_line"],
    ],
    ["its activity not read yet: asked for", facts({ unread: true }), CODEX, ["activity"]],
    [
      "mid-turn (a person typed meanwhile): nothing typed",
      facts({ turnEnded: false }),
      CODEX,
      ["ok", "unpause"],
    ],
    ["Claude Code goes on by itself: nothing typed", facts({}), CLAUDE, ["ok", "unpause"]],
    [
      "no resume line in the policy (an older caller): nothing typed",
      facts({}),
      POLICY,
      ["ok", "unpause"],
    ],
    [
      "a command-launched manager has no pane: nothing typed",
      facts({ events: [cmdStart, claimed, saved, paused] }),
      CODEX,
      ["ok", "unpause"],
    ],
    [
      "a person's pause (no window) is not a limit's: nothing typed",
      facts({ window: null }),
      CODEX,
      ["ok", "unpause"],
    ],
    [
      "the seat is limited again: the pause goes on, nothing typed",
      facts({ limited: true }),
      CODEX,
      ["pause", "unpause", "pause"],
    ],
    [
      "the holder died: it is started anew, as usual",
      facts({
        claim: {
          state: "dead",
          pid: 42,
          start_time: ST,
          machine_id: "m",
          hostname: "h",
          claimed_at: ago(89),
        },
      }),
      CODEX,
      ["restart_dead", "unpause", "break_claim", "start"],
    ],
  ])("%s", (_what, f, policy, want) => {
    expect(names(decide(f, policy))).toEqual(want);
  });

  it("the effect names the pane, the line and why; the reason says it", () => {
    const d = decide(facts({}), CODEX);
    if (isNeeds(d)) throw new Error("needs");
    expect(d.effects.at(-1)).toMatchObject({
      kind: "resume_line",
      pid: 42,
      text: DEFAULT_RESUME_LINE,
      start: { launcher: "tmux", pane: "%3" },
    });
    expect(d.reason).toMatch(/the resume line is typed into its tmux pane/);
  });
  it("only the tick that ends the pause types it (the next one sees no pause)", () => {
    const f = { ...facts({}), paused: null };
    expect(names(decide(f, CODEX))).toEqual(["ok"]);
  });
});

describe("a pause a person ended (`sheepdog unpause`, a page's button)", () => {
  // The person's unpause journaled the end, so no tick ends the pause: the next one types it.
  // It saved just before the limit (3m ago: younger than quiet_after, so only this rule reads
  // its activity), the pause began, and a person ended it 2m ago.
  const saved = ev(3, "saved", { pid: 42, start_time: ST, context_tokens: 1000 });
  const usage = ev(3, "paused", { until: ago(-60), reason: "seat limited", window: "five_hour" });
  const unpaused = ev(2, "unpaused", { by: "person", reason: "unpaused by a person" });
  const unpausedWorld = (events: JournalEvent[], o: { unread?: boolean } = {}) => ({
    ...facts({ events, ...(o.unread ? { unread: true } : {}) }),
    heartbeat: { at: ago(3), pid: 42, context_tokens: 1000 },
    paused: null,
  });
  it.each([
    [
      "Codex still at its prompt: the line, once",
      unpausedWorld([tmuxStart, claimed, saved, usage, unpaused]),
      ["ok", "resume_line"],
    ],
    [
      "its activity not read yet: asked for",
      unpausedWorld([tmuxStart, claimed, saved, usage, unpaused], { unread: true }),
      ["activity"],
    ],
    [
      "typed already since the unpause: not again",
      unpausedWorld([
        tmuxStart,
        claimed,
        saved,
        usage,
        unpaused,
        ev(1, "resume_typed", { pid: 42, text: DEFAULT_RESUME_LINE }),
      ]),
      ["ok"],
    ],
    [
      "it saved since: it went on, nothing typed",
      {
        ...unpausedWorld([tmuxStart, claimed, saved, usage, unpaused, ev(1, "saved", { pid: 42 })]),
        heartbeat: { at: ago(1), pid: 42, context_tokens: 1000 },
      },
      ["ok"],
    ],
    [
      "a person's pause (no window) is not a limit's: nothing typed",
      unpausedWorld([tmuxStart, claimed, saved, ev(3, "paused", { until: ago(-60) }), unpaused]),
      ["ok"],
    ],
  ] as [string, Facts, string[]][])("%s", (_what, f, want) => {
    expect(names(decide(f, CODEX))).toEqual(want);
  });
  it("Claude Code goes on by itself: nothing typed", () => {
    expect(
      names(decide(unpausedWorld([tmuxStart, claimed, saved, usage, unpaused]), CLAUDE)),
    ).toEqual(["ok"]);
  });
});

describe("the agent's own usage readings (Codex's rate_limits) are recorded by the tick", () => {
  const readings = {
    transcript: "/h/.codex/sessions/2026/11/30/rollout-x.jsonl",
    readings: [
      {
        window: "five_hour" as const,
        used_percentage: 42,
        resets_at: ago(-120),
        source: "rollout" as const,
        session: "s",
      },
    ],
  };
  it("first, whatever the decision", () => {
    const f = { ...facts({}), paused: null, seat: { ...facts({}).seat, readings } };
    const d = decide(f, CODEX);
    expect(names(d)).toEqual(["ok", "record_readings"]);
    if (!isNeeds(d)) expect(d.effects[0]).toEqual({ kind: "record_readings", ...readings });
  });
  it("before the refusal's record and the pause", () => {
    const base = facts({ limited: true });
    const refusal = {
      text: "You’ve hit your usage limit.",
      at: ago(2),
      resets_at: ago(-60),
      named_reset: true,
      transcript: readings.transcript,
      recorded: false,
      window: "five_hour" as const,
    };
    const f = { ...base, paused: null, seat: { ...base.seat, readings, refusal } };
    const d = decide(f, CODEX);
    expect(names(d)).toEqual(["pause", "record_readings", "record_refusal", "pause"]);
    if (!isNeeds(d))
      expect(d.effects[1]).toMatchObject({ kind: "record_refusal", window: "five_hour" });
  });
});
