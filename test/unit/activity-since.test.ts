// Rules 9a–9c journal when the spell began (the activity's `since`), so `sheepdog report` can
// draw the idle spell from the turn's end: the effects carry it, and act writes it.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { ProgramContext } from "../../src/config/context.js";
import { type JournalEvent, readEvents } from "../../src/journal/journal.js";
import { act } from "../../src/watchdog/act/act.js";
import type { ClaimFacts, Facts } from "../../src/watchdog/gather/facts.js";
import { type Decision, decide, isNeeds } from "../../src/watchdog/rules/decide.js";
import type { Effect } from "../../src/watchdog/rules/effects.js";
import { ago, ev, factsAt, NOW, POLICY, ST } from "./decide-world.js";

const START = { reason: "r", planned: true, launcher: "tmux", pane: "%3", pid: 42, start_time: ST };
const BASE = [ev(61, "manager_started", START), ev(60, "claimed", { pid: 42, start_time: ST })];

function decided(activity: Facts["activity"], extra: JournalEvent[] = []): Decision {
  const facts = factsAt([...BASE, ev(12, "saved", { pid: 42, context_tokens: 1000 }), ...extra], {
    claim: {
      state: "alive",
      pid: 42,
      start_time: ST,
      machine_id: "m1",
      hostname: "host",
      claimed_at: ago(60),
    } as ClaimFacts,
    heartbeat: { at: ago(12), pid: 42, context_tokens: 1000 },
    activity,
  });
  const d = decide(facts, POLICY);
  if (isNeeds(d)) throw new Error(`decide asked for ${d.needs.join(", ")}`);
  return d;
}
const activity = (verdict: string, since?: string, cause?: string) =>
  ({
    verdict,
    evidence: [`${verdict} evidence`],
    transcript: "/t/s.jsonl",
    ...(since ? { since } : {}),
    ...(cause ? { cause } : {}),
  }) as Facts["activity"];
/** The `since` of the decision's nudge or note effect ("none": that effect has no `since`). */
const sinceOf = (d: Decision) => {
  const e = d.effects.find((x) => x.kind === "nudge" || x.kind === "note");
  if (!e) return undefined;
  const since =
    e.kind === "nudge" ? e.since : (e as Extract<Effect, { kind: "note" }>).activity.since;
  return since ?? "none";
};

describe("the activity's since goes with the nudge and the notes", () => {
  it.each([
    ["idle: the nudge", activity("idle", ago(11)), [], "nudge", ago(11)],
    [
      "idle after the nudge: restart_idle",
      activity("idle", ago(11)),
      [ev(4, "nudged", { pid: 42 })],
      "restart_idle",
      ago(11),
    ],
    ["wedged: restart_wedged", activity("wedged", ago(20)), [], "restart_wedged", ago(20)],
    ["blocked", activity("blocked", ago(11)), [], "blocked", ago(11)],
    ["api errors", activity("api_retry", ago(11), "transient"), [], "api_retry", ago(11)],
    ["no since known: none journaled", activity("idle"), [], "nudge", "none"],
  ])("%s", (_name, a, extra, decision, since) => {
    const d = decided(a, extra as JournalEvent[]);
    expect(d.decision).toBe(decision);
    expect(sinceOf(d)).toBe(since);
  });
});

describe("act journals since", () => {
  const dir = mkdtempSync(join(tmpdir(), "sheepdog-since-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const program = { stateDir: dir } as unknown as ProgramContext;

  it("on the note and on the nudge (a launcher that cannot type still journals it)", async () => {
    const base = { pid: 42, reason: "pid 42 idle: e" };
    const effects: Effect[] = [
      {
        kind: "note",
        type: "restart_wedged",
        ...base,
        activity: { verdict: "wedged", evidence: ["e"], since: ago(20) },
      },
      {
        kind: "nudge",
        ...base,
        start: { at: ago(61), reason: "r", planned: true, launcher: "command" },
        text: "sheepdog: …",
        since: ago(11),
      },
    ];
    const d: Decision = { decision: "nudge", reason: "r", rule: 9, effects };
    const facts = {} as Facts;
    await act(program, facts, d, NOW);
    const events = readEvents(dir);
    expect(events.find((e) => e.type === "restart_wedged")).toMatchObject({
      pid: 42,
      verdict: "wedged",
      evidence: ["e"],
      since: ago(20),
    });
    expect(events.find((e) => e.type === "nudged")).toMatchObject({
      pid: 42,
      since: ago(11),
      error: expect.any(String),
    });
  });
});
