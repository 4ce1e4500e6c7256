// Issue 30, part 2: every journal line sheepdog writes is read back by its own reader. A field
// the schema types wrongly (a `pid` that may be null, an `evidence` folder or null) makes every
// reader skip the real line, silently but for a count: a stand-down, a pause, a close gone from
// replay. So: one line per way the code writes each type (the null and optional variants
// included), each accepted whole; each field of them mutated to a wrong type is refused, so a
// field the code writes but the schema does not declare fails here too; and the types written
// in src/ are the types EVENTS declares, no more, no fewer.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { checkEvent, EVENT_TYPES, EVENTS, type EventType } from "../../src/journal/events.js";
import { appendEvent, parseJournalText, readJournal } from "../../src/journal/journal.js";
import { replay, STATE_EVENT_TYPES } from "../../src/journal/replay.js";
import { LockBusy } from "../../src/lock/dir-lock.js";
import { lockBusyEvent } from "../../src/watchdog/pass/lock-busy.js";
import { tempDir } from "../helpers/cli.js";

const AT = "2026-12-01T10:00:00.000Z";
const START = "Tue Dec  1 09:58:00 2026";
type Line = Record<string, unknown>;

const page = {
  title: "catalog stood down",
  message: "three starts in 30 minutes",
  priority: 5,
  tags: ["rotating_light"],
  sequence_id: "sd-abc",
  actions: [
    { action: "http", label: "Resume", url: "http://127.0.0.1:1/c", method: "POST", body: "b" },
    { action: "copy", label: "Copy", value: "sheepdog resume catalog" },
  ],
};
const note = { reason: "quiet 20m", verdict: "idle", evidence: ["its turn ended 10:00"] };

/**
 * Each type's lines as the code writes them (the writer named), every variant that differs in
 * which fields it has or whether one is null. Plain JSON, not typed by EVENTS: a schema made
 * narrower than what the code writes fails here at run time, not only in tsc.
 */
const WRITTEN = {
  claimed: [
    { pid: 4242, start_time: START, hostname: "h1" }, // claim/claim.ts
    { pid: 4242, start_time: START, hostname: "h1", lease_epoch: 3 },
  ],
  claim_broken: [
    { reason: "holder gone", holder_state: "stopped", pid: 4242, start_time: START },
    { reason: "holder gone", holder_state: "unreadable", problem: "claim/holder.json is empty" },
    { reason: "restart_dead: pid 4242 is gone" }, // act.ts's in-memory copy
  ],
  released: [
    { pid: 4242, start_time: START }, // hand-over, claim release
    { pid: 4242, start_time: START, note: "finished" }, // finish
    { forced: true, note: "a person said so", pid: 4242, start_time: START }, // --force
    { forced: true, note: "an unreadable claim" },
  ],
  saved: [
    { pid: 4242, start_time: START, context_tokens: 81234, progress: "3 of 9", pushed: true },
    { pid: 4242, context_tokens: null, progress: null, pushed: null },
  ],
  hand_over: [
    {
      pid: 4242,
      start_time: START,
      context_tokens: 150000,
      note: "context full",
      progress: "4 of 9",
      pushed: false,
    },
    { pid: 4242, start_time: START, context_tokens: null, progress: null, pushed: null },
  ],
  finished: [
    { note: "all done", pid: 4242 },
    { note: "stop it", forced: true, holder_pid: 4242 },
    {},
  ],
  reopened: [{ finished_at: AT, note: "more to do" }, { finished_at: AT }],
  stood_down: [
    { reason: "crash loop" },
    { reason: "auth", holder_state: "alive", holder_pid: 4242 },
    { reason: "crash loop", holder_state: "stopped" },
  ],
  cleared: [
    { stood_down_at: AT, note: "fixed the key" },
    { stood_down_at: AT, by: "phone", incident: "inc-1" },
  ],
  paused: [
    { until: AT, reason: "seat at 96 %", window: "five_hour" }, // act.ts
    {
      until: AT,
      reason: "refused",
      window: null,
      needs_person: "add credits",
      limit_text: "Credit balance is too low",
    },
    { until: AT, reason: "paused by a person", window: null }, // sheepdog pause
    { until: AT, reason: "paused by a person", window: null, by: "phone", incident: "inc-1" },
  ],
  unpaused: [
    { reason: "the window reset" },
    { reason: "unpaused by a person", by: "person" },
    { reason: "unpaused by a person", by: "phone", incident: "inc-1" },
  ],
  manager_starting: [
    { reason: "r", planned: true, launcher: "tmux", launch_began: AT, mono_ms: 91234, boot: "b" },
    { reason: "r", planned: false, launcher: "command", launch_began: AT, mono_ms: 1, boot: null },
  ],
  manager_started: [
    {
      reason: "r",
      planned: true,
      launcher: "tmux",
      pid: 4242,
      start_time: START,
      pane: "%3",
      window: "catalog:1",
      unit: "sheepdog-catalog-1.scope",
      launch_began: AT,
      mono_ms: 91234,
      boot: "b",
    },
    {
      reason: "r",
      planned: false,
      launcher: "herdr",
      pane: "p1",
      window: "t1",
      agent: "catalog-1",
      workspace: "w1",
      transcript: "/home/x/.claude/projects/s.jsonl",
      launch_began: AT,
      mono_ms: 1,
      boot: null,
    },
    {
      reason: "r",
      planned: false,
      launcher: "command",
      pid: 4242,
      start_time: START,
      exited: true,
      launch_began: AT,
      mono_ms: 1,
      boot: "b",
    },
  ],
  manager_start_failed: [
    { launcher: "tmux", reason: "no tmux", planned: false },
    { launcher: "herdr", reason: "held", screen: "Trust?", workspace: "w1", planned: true },
  ],
  manager_stopped: [
    {
      pid: 4242,
      start_time: START,
      who: "holder",
      reason: "wedged",
      planned: true,
      decision: "restart_wedged",
      evidence: "/s/.sheepdog/evidence/2026-12-01T10-00-00Z",
      outcome: "term",
      group: true,
    },
    {
      pid: 4242,
      start_time: START,
      who: "holder",
      reason: "stale",
      decision: "restart_stale",
      evidence: null,
      evidence_error: "ENOSPC",
      outcome: "kill",
    },
    {
      pane: "%3",
      window: "catalog:1",
      reason: `started ${AT} and never claimed`,
      who: "leftover",
      launch_began: AT,
      decision: "restart_dead",
      evidence: null,
      outcome: "gone",
    },
    {
      pid: 4242,
      start_time: START,
      pane: "%3",
      who: "handed_over",
      reason: "handed over; stopping it before its successor starts",
      decision: "start_planned",
      evidence: null,
      outcome: "term",
    },
  ],
  start_cut_short: [{ launcher: "herdr", launch_began: AT, reason: "cut short" }],
  nudged: [
    { pid: 4242, reason: "idle", text: "go on", since: AT, via: "tmux send-keys" },
    { pid: 4242, reason: "idle", text: "go on", error: "no pane" },
  ],
  resume_typed: [
    { pid: 4242, reason: "pause over", text: "The usage limit has reset.", via: "tmux" },
    { pid: 4242, reason: "pause over", text: "The usage limit has reset.", error: "a dialog" },
  ],
  api_errors: [{ pid: 4242, ...note, verdict: "api_errors", since: AT }],
  blocked: [
    { screen: "Allow? 1. Yes", pid: 4242, ...note, verdict: "blocked" },
    // a start held before its claim (rule 12): no pid yet, the hook's notification
    {
      pid: null,
      ...note,
      verdict: "blocked",
      launch_began: AT,
      waiting_for: "a person to answer its trust dialog",
      notification: { at: AT, type: "permission_prompt", message: "Claude needs permission" },
    },
    { pid: 4242, ...note, notification: { at: AT, type: null, message: null } },
  ],
  restart_idle: [{ pid: 4242, ...note, since: AT }],
  restart_wedged: [{ pid: 4242, ...note, verdict: "wedged" }],
  lease_acquired: [
    { how: "first", epoch: 1, ref: "refs/sheepdog/lease", reason: "r" },
    {
      how: "took_over",
      epoch: 4,
      ref: "refs/sheepdog/lease",
      from: "h2",
      from_machine_id: "m2",
      from_epoch: 3,
      reason: "r",
    },
  ],
  lease_lost: [
    { reason: "r", cause: "taken" },
    { reason: "r", cause: "taken", holder: "h2", epoch: 5 },
  ],
  tick_failed: [{ error: "EACCES" }],
  tick_lock_broken: [{ reason: "dead", pid: 4242, locked_at: AT }, { reason: "no holder" }],
  lock_busy: [
    lockBusyEvent(new LockBusy("claim.break.lock", { pid: 4242, at: AT }), "not done"),
    lockBusyEvent(new LockBusy("tick.lock.break", { pid: 4242 }), "not done"),
    lockBusyEvent(new LockBusy("claim.break.lock", null), "not done"),
  ],
  sleep_gap: [{ from: AT, to: AT, discounted_ms: 3_600_000 }],
  config_invalid: [{ file: "/p/program.json", error: "manager.launcher: expected tmux" }],
  paged: [
    {
      kind: "stood_down",
      priority: 5,
      title: "t",
      topic: "sd-x",
      id: "abc",
      incident: "inc-1",
      actions_error: "no key",
    },
    { kind: "recovered", priority: 3, title: "t", topic: "sd-x", id: null, copy_dropped: true },
    { kind: "stood_down", priority: 5, title: "t", topic: "sd-x", id: "a", retry: true },
    { kind: "stood_down", priority: 5, title: "t", topic: "sd-x", id: "a", reminder: 2 },
  ],
  page_failed: [
    { kind: "stood_down", error: "answered 429", status: 429, page, incident: "inc-1" },
    { kind: "stood_down", error: "down", page },
    { kind: "stood_down", error: "answered 403", status: 403, failures: 3, permanent: true },
    { kind: "paused", error: "down", failures: 2, retry: true, reminder: 1, actions_error: "x" },
    { kind: "internal", error: "a bug" },
  ],
  heartbeat_failed: [{ error: "https://hc-ping.com: timed out" }],
  incident_opened: [
    { incident: "inc-1", kind: "stood_down", sequence_id: "sd-1", title: "t", since: AT },
  ],
  incident_closed: [
    { incident: "inc-1", kind: "tick_failed", how: "recovered", ended_at: AT, after_ms: 60_000 },
    { incident: "inc-1", kind: "blocked", how: "recovered", ended_at: AT, after_ms: 0, pid: 4242 },
    { incident: "inc-1", kind: "paused", how: "phone", ended_at: AT }, // no after_ms: an `at` that is no date (incident-pages.ts)
  ],
  remote_accepted: [
    {
      by: "phone",
      verb: "resume",
      incident: "inc-1",
      token_sha256: "ab12",
      expires_at: AT,
      message_id: "m1",
      sent_at: AT,
    },
  ],
  remote_refused: [
    {
      reason: "forged",
      detail: "d",
      verb: "resume",
      incident: "inc-1",
      message_id: "m",
      sent_at: AT,
    },
    { reason: "malformed", detail: "no token", verb: "resume", message_id: "m", sent_at: AT },
    { reason: "too_many", detail: "4 more", count: 4 },
  ],
  remote_poll_failed: [{ topic: "sd-x-control", error: "ECONNREFUSED" }],
  merge_lock_acquired: [
    { pid: 4242, item: "issue-7", ref: "refs/sheepdog/merge-lock" },
    { pid: 4242, item: null, ref: "refs/sheepdog/merge-lock" },
  ],
  merge_lock_released: [
    { pid: 4242, item: "issue-7", ref: "refs/sheepdog/merge-lock" },
    { ref: "refs/sheepdog/merge-lock" },
    { pid: 4242, item: null, ref: "r", stale: true, holder_state: "dead" },
  ],
} satisfies Record<EventType, Line[]>;

const samples = () =>
  Object.entries(WRITTEN).flatMap(([type, lines]) =>
    (lines as Line[]).map((fields, i) => ({ type, i, line: { at: AT, type, ...fields } as Line })),
  );

/** A value of a type no field of that name has: what a wrongly typed schema would refuse. */
function wrong(v: unknown): unknown {
  if (typeof v === "string") return 7;
  if (typeof v === "number") return String(v);
  if (typeof v === "boolean") return "yes";
  if (v === null || Array.isArray(v)) return { not: "this" };
  return 7;
}

describe("every line the code writes is read back", () => {
  it("the written lines cover every type of EVENTS", () => {
    expect(Object.keys(WRITTEN).sort()).toEqual([...EVENT_TYPES].sort());
  });

  it.each(samples().map((s) => [`${s.type} #${s.i}`, s.line]))("%s is accepted whole", (_, l) => {
    expect(checkEvent(l)).toEqual({ event: l });
  });

  it("appended and read back, none is skipped", () => {
    const dir = tempDir();
    const all = samples();
    for (const { line } of all) {
      const { at: _at, ...event } = line;
      appendEvent(dir, event as never, Date.parse(AT));
    }
    const read = readJournal(dir);
    expect(read.skipped).toEqual({ lines: 0, first: null });
    expect(read.events).toEqual(all.map((s) => s.line));
  });
});

describe("replay's own list of the types it reads (STATE_EVENT_TYPES) is the types that change its state", () => {
  // Readers that need only replay's state (save, wait, the undo commands) read only the listed
  // types: a type replay reads that the list lacks would be missed by them, silently.
  const all = samples().map((s) => s.line as never);
  it("no line of another type changes the state, whatever came before", () => {
    for (const { type, i, line } of samples()) {
      if (STATE_EVENT_TYPES.has(type as EventType)) continue;
      for (const before of [
        [],
        all.filter((e: Line) => STATE_EVENT_TYPES.has(e.type as EventType)),
      ])
        expect(replay([...before, line as never]), `${type} #${i}`).toEqual(replay(before));
    }
  });
  it("a line of each listed type does change it", () => {
    for (const type of STATE_EVENT_TYPES) {
      const lines = samples().filter((s) => s.type === type);
      // After nothing, or after any one listed line (a reopen changes only a finish).
      const befores: never[][] = [
        [],
        ...all.filter((e: Line) => STATE_EVENT_TYPES.has(e.type as EventType)).map((e) => [e]),
      ];
      const changes = lines.some(({ line }) =>
        befores.some(
          (before) =>
            JSON.stringify(replay([...before, line as never])) !== JSON.stringify(replay(before)),
        ),
      );
      expect(changes, type).toBe(true);
    }
  });
});

describe("a wrongly typed field is refused (so the test above can fail)", () => {
  // Every field of every written line: one the schema does not declare (a loose object keeps
  // it, unchecked) is accepted with any value, and fails here.
  const fields = samples().flatMap(({ type, i, line }) =>
    Object.keys(line)
      .filter((k) => k !== "at" && k !== "type")
      .map((k) => [`${type} #${i} ${k}`, type, k, line] as const),
  );

  it.each(fields)("%s", (_, type, k, line) => {
    const bad = { ...line, [k]: wrong(line[k]) };
    const checked = checkEvent(bad);
    expect(
      checked,
      `${type}.${k} is not declared in EVENTS, or accepts ${JSON.stringify(bad[k])}`,
    ).toHaveProperty("problem");
    expect((checked as { problem: string }).problem).toMatch(new RegExp(`^${type}: ${k}\\b`));
  });

  it("such a line is skipped and counted, the lines around it kept", () => {
    const good = { at: AT, type: "blocked", pid: null, reason: "r" };
    const bad = { at: AT, type: "manager_stopped", who: "holder", evidence: 3 };
    const text = [good, bad, good].map((l) => `${JSON.stringify(l)}\n`).join("");
    const read = parseJournalText(text);
    expect(read.events).toEqual([good, good]);
    expect(read.skipped).toEqual({
      lines: 1,
      first: "journal.jsonl line 2: manager_stopped: evidence: expected string",
    });
  });
});

describe("the types written in src/ are EVENTS' types", () => {
  // Every `type: "…"` of src/ (and `type: "a" | "b"`, the activity notes' union): a journal
  // event's type, or one of these, which are not journal events.
  const NOT_EVENTS = new Set([
    "assistant", // a transcript entry's type (usage/transcript-tail.ts)
    "user",
    "tool_result",
    "command", // a hook's type (Claude Code's and Codex's settings)
    "string", // an option's type (cli-spec.ts)
    "boolean",
    "duration",
    "when",
  ]);
  const sources = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((d) =>
      d.isDirectory()
        ? sources(join(dir, d.name))
        : d.name.endsWith(".ts")
          ? [join(dir, d.name)]
          : [],
    );
  const written = new Set<string>();
  for (const file of sources("src")) {
    if (file === join("src", "journal", "events.ts")) continue;
    const text = readFileSync(file, "utf8");
    for (const m of text.matchAll(/\btype: ((?:"[a-z_]+"\s*\|?\s*)+)/g))
      for (const name of (m[1] as string).matchAll(/"([a-z_]+)"/g)) written.add(name[1] as string);
  }

  it("each one written has a schema (or is named above as no event)", () => {
    const unknown = [...written].filter((t) => !Object.hasOwn(EVENTS, t) && !NOT_EVENTS.has(t));
    expect(unknown, "written in src/ but not in EVENTS (src/journal/events.ts)").toEqual([]);
  });

  it("each schema is of a type something writes", () => {
    expect(EVENT_TYPES.filter((t) => !written.has(t))).toEqual([]);
    expect(
      [...NOT_EVENTS].filter((t) => !written.has(t)),
      "stale in NOT_EVENTS",
    ).toEqual([]);
  });
});
