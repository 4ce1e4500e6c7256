// The pure and file-level parts of `sheepdog watch`: which changes matter, the cron step of an
// interval, the pass queue's coalescing, when a program wakes without an event, and the
// watchers' own records as doctor reads them.
import { appendFileSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { nextSlot, wakeOf } from "../../src/resident/program-watch.js";
import { PassQueue } from "../../src/resident/queue.js";
import { journalChange, relevantPath } from "../../src/resident/relevance.js";
import { readWatcherRecords, type WatcherRecord } from "../../src/resident/status-file.js";
import { CLAIM_NOT_BROKEN } from "../../src/watchdog/pass/lock-busy.js";
import type { ProgramReport } from "../../src/watchdog/pass/tick.js";

describe("relevantPath", () => {
  it.each([
    ["program.json", true],
    [".sheepdog", true],
    [".sheepdog/claim", true],
    [".sheepdog/claim/holder.json", true],
    [".sheepdog/heartbeat.json", true],
    [".sheepdog/journal.jsonl", true],
    [".sheepdog/last-tick.json", false],
    [".sheepdog/tick.lock", false],
    [".sheepdog/tick.lock/holder.json", false],
    [".sheepdog/.heartbeat.json.123.abc.tmp", false],
    [".sheepdog/.tick.lock.99.1.tmp", false],
    [".sheepdog/manager.log", false],
    [".sheepdog/evidence/x/screen.txt", false],
    [".sheepdog/journal.1.jsonl", false],
    ["ledger/program.json", false],
    ["runs/a/attempts.json", false],
  ])("%s → %s", (rel, expected) => {
    expect(relevantPath(rel)).toBe(expected);
  });
});

describe("journalChange: a pass's own events never count", () => {
  const line = (type: string) => `${JSON.stringify({ at: "2026-11-30T00:00:00Z", type })}\n`;
  it("own events no, a manager's or a person's yes, rotation yes", () => {
    const dir = mkdtempSync(join(tmpdir(), "sheepdog-watch-journal-"));
    const path = join(dir, "journal.jsonl");
    writeFileSync(path, line("claimed"));
    let seen = journalChange(dir, null);
    for (const own of ["manager_started", "paged", "page_failed", "tick_failed", "claim_broken"]) {
      appendFileSync(path, line(own));
      seen = journalChange(dir, seen.mark);
      expect(seen.relevant, own).toBe(false);
    }
    for (const theirs of ["hand_over", "finished", "cleared", "saved", "paused"]) {
      appendFileSync(path, line(theirs));
      seen = journalChange(dir, seen.mark);
      expect(seen.relevant, theirs).toBe(true);
    }
    // a torn last line is not an event yet
    appendFileSync(path, '{"at":"2026-11-30T00:00:00Z","type":"hand_');
    expect(journalChange(dir, seen.mark).relevant).toBe(false);
    // rotated (a new, smaller file): cannot be compared, so it counts
    writeFileSync(path, line("paged"));
    expect(journalChange(dir, seen.mark).relevant).toBe(true);
  });
});

describe("nextSlot: the one schedule, on the clock's multiples", () => {
  const T = Date.parse("2026-12-02T03:00:00Z");
  it.each([
    [T, 300_000, T + 300_000],
    [T + 1, 300_000, T + 300_000],
    [T + 299_999, 300_000, T + 300_000],
    [T + 10_000, 90_000, Math.ceil((T + 10_001) / 90_000) * 90_000],
    [T + 10_000, 420_000, Math.ceil((T + 10_001) / 420_000) * 420_000],
  ])("after %d every %d ms: %d", (now, interval, expected) => {
    expect(nextSlot(now, interval)).toBe(expected);
  });
});

describe("PassQueue", () => {
  it("one pass at a time; requests during a pass coalesce into one more", async () => {
    const log: string[] = [];
    let running = 0;
    let release: () => void = () => {};
    const q = new PassQueue(async (why) => {
      running++;
      expect(running).toBe(1);
      log.push(why);
      await new Promise<void>((r) => {
        release = r;
      });
      running--;
    });
    q.request("a");
    q.request("b");
    q.request("c");
    expect(log).toEqual(["a"]);
    release();
    await new Promise((r) => setTimeout(r, 0));
    expect(log).toEqual(["a", "c"]);
    release();
    const closed = q.close();
    q.request("d");
    await closed;
    expect(log).toEqual(["a", "c"]);
  });
});

describe("wakeOf", () => {
  const report = (decision: string, facts: Record<string, unknown> | null): ProgramReport =>
    ({ program: "p", root: "/p", decision, reason: "", facts, actions: [] }) as ProgramReport;
  const now = Date.parse("2026-11-30T10:00:00Z");
  it("a pause's end, a seat's reset, soon after locked, else nothing", () => {
    expect(
      wakeOf(
        report("wait_pause", {
          paused: { until: "2026-11-30T10:05:00Z" },
          seat: { limited: false },
        }),
        now,
      ),
    ).toBe(Date.parse("2026-11-30T10:05:00Z"));
    expect(
      wakeOf(
        report("pause", { paused: null, seat: { limited: true, until: "2026-11-30T11:00:00Z" } }),
        now,
      ),
    ).toBe(Date.parse("2026-11-30T11:00:00Z"));
    expect(wakeOf(report("locked", null), now)).toBe(now + 1000);
    // a restart whose claim break met a busy mutex did not happen: soon again, as after locked
    const busy = {
      ...report("restart_dead", { paused: null, seat: { limited: false, until: null } }),
      actions: [
        `${CLAIM_NOT_BROKEN}claim.break.lock is held by pid 4242, so the claim could not be broken`,
      ],
    };
    expect(wakeOf(busy, now)).toBe(now + 1000);
    // a pass that started a manager looks again at once (its start may die before it claims)
    const started = {
      ...report("start", { paused: null, seat: { limited: false, until: null } }),
      effects: ["start"],
      actions: ["started pid 4242"],
    };
    expect(wakeOf(started, now)).toBe(now + 200);
    expect(wakeOf({ ...started, actions: ["start failed: no command"] }, now)).toBe(null);
    expect(wakeOf(report("ok", { paused: null, seat: { limited: false, until: null } }), now)).toBe(
      null,
    );
    // an end already past is the schedule's business, not a wake-up in the past
    expect(
      wakeOf(
        report("wait_pause", {
          paused: { until: "2026-11-30T09:00:00Z" },
          seat: { limited: false },
        }),
        now,
      ),
    ).toBe(null);
  });

  it("a live holder: when its heartbeat reaches quiet_after and stale_after, and a nudge's nudge_wait ends", () => {
    const MIN = 60_000;
    const at = (m: number) => new Date(now - m * MIN).toISOString();
    const policy = {
      cadence: 5 * MIN,
      quietAfter: 10 * MIN,
      staleAfter: 45 * MIN,
      nudgeWait: 3 * MIN,
      claimGrace: 10 * MIN,
    };
    const live = (beatMin: number, nudgedMin?: number) => ({
      now: at(0),
      last_tick_at: at(1),
      gaps: [],
      paused: null,
      seat: { limited: false, until: null },
      claim: { state: "alive", pid: 42, start_time: "s", machine_id: "m", claimed_at: at(60) },
      heartbeat: { at: at(beatMin), pid: 42, start_time: "s", context_tokens: 1 },
      history: {
        pauses: [],
        ...(nudgedMin !== undefined
          ? { activity_events: { nudged: { at: at(nudgedMin), pid: 42 } } }
          : {}),
      },
    });
    // saved 4m ago: the activity is read at 10m, 6m from now
    expect(wakeOf(report("ok", live(4)), now, policy)).toBe(now + 6 * MIN);
    // quiet already: rule 9 at 45m
    expect(wakeOf(report("ok", live(12)), now, policy)).toBe(now + 33 * MIN);
    // nudged now: nudge_wait from now; nudged a minute ago in this spell: 2m from now
    expect(wakeOf(report("nudge", live(12)), now, policy)).toBe(now + 3 * MIN);
    expect(wakeOf(report("ok", live(13, 1)), now, policy)).toBe(now + 2 * MIN);
    // a nudge from before the last save is another spell's
    expect(wakeOf(report("ok", live(4, 5)), now, policy)).toBe(now + 6 * MIN);
    // inside a pause the age stands still: only the pause's end wakes it (no pass a second)
    const paused = {
      ...live(4),
      paused: { until: at(-60), at: at(1), reason: "r", window: "five_hour" },
    };
    expect(wakeOf(report("wait_pause", paused), now, policy)).toBe(now + 60 * MIN);
    // after a usage pause: the grace it leaves the holder ends (claim_grace after its end)
    const after = {
      ...live(50),
      history: { pauses: [{ from: at(40), to: at(5) }] },
    };
    expect(wakeOf(report("ok", after), now, policy)).toBe(now + 5 * MIN);
    // without the policy (a caller that has none): as before
    expect(wakeOf(report("ok", live(4)), now)).toBe(null);
  });
});

describe("readWatcherRecords: a malformed file is no record, a malformed field is dropped", () => {
  const entry = {
    program: "demo",
    root: "/p",
    last_pass_at: "2026-11-30T00:05:00.000Z",
    decision: "ok",
  };
  const good: WatcherRecord = {
    pid: 4242,
    start_time: "linux:boot:1",
    machine_id: "abcdef0123456789",
    started_at: "2026-11-30T00:00:00.000Z",
    stopped_at: null,
    last_pass_at: "2026-11-30T00:05:00.000Z",
    passes: 3,
    programs: [entry],
  };
  const record = (patch: Record<string, unknown>) => JSON.stringify({ ...good, ...patch });
  const without = (key: keyof WatcherRecord) => {
    const { [key]: _, ...rest } = good;
    return JSON.stringify(rest);
  };
  // [what, the file's text, the record read or null when the file is none]
  const cases: [string, string, WatcherRecord | null][] = [
    ["a whole record", JSON.stringify(good), good],
    ["a torn file", JSON.stringify(good).slice(0, 60), null],
    ["null", "null", null],
    ["an array", JSON.stringify([good]), null],
    ["a pid that is text", record({ pid: "4242" }), null],
    ["no pid", without("pid"), null],
    ["programs that are an object", record({ programs: { demo: entry } }), null],
    ["no programs", without("programs"), null],
    // Without its identity a watcher is not alive: "" is no start time, no machine.
    ["a start time that is a number", record({ start_time: 1 }), { ...good, start_time: "" }],
    ["no machine id", without("machine_id"), { ...good, machine_id: "" }],
    ["a start that is null", record({ started_at: null }), { ...good, started_at: "" }],
    ["a stop that is a number", record({ stopped_at: 5 }), { ...good, stopped_at: null }],
    [
      "a stop that is a time",
      record({ stopped_at: "2026-11-30T01:00:00.000Z" }),
      { ...good, stopped_at: "2026-11-30T01:00:00.000Z" },
    ],
    [
      "a last pass that is an object",
      record({ last_pass_at: {} }),
      { ...good, last_pass_at: null },
    ],
    ["a pass count that is text", record({ passes: "3" }), { ...good, passes: 0 }],
    [
      "program entries that are not entries are left out, malformed fields dropped",
      record({
        programs: [
          null,
          "demo",
          { program: "x", root: 5 },
          { program: "demo", root: "/p", last_pass_at: 5, decision: 7 },
          { root: "/q" },
          { ...entry, root: "/r", extra: 1 },
        ],
      }),
      {
        ...good,
        programs: [
          { program: "demo", root: "/p", last_pass_at: null, decision: null },
          { program: "", root: "/q", last_pass_at: null, decision: null },
          { ...entry, root: "/r" },
        ],
      },
    ],
    ["extra fields: kept without them", record({ extra: 1, nested: { a: 1 } }), good],
  ];
  it.each(cases)("%s", (_what, text, expected) => {
    const state = mkdtempSync(join(tmpdir(), "sheepdog-watchers-"));
    const dir = join(state, "watchers");
    mkdirSync(dir);
    const other = { ...good, pid: 1 };
    writeFileSync(join(dir, "1.json"), JSON.stringify(other));
    writeFileSync(join(dir, "4242.json"), text);
    writeFileSync(join(dir, "notes.txt"), "not a record");
    const records = readWatcherRecords({ ...process.env, SHEEPDOG_STATE_DIR: state });
    // The good record beside it is read whatever this file holds.
    expect(records).toEqual(expected ? [other, expected] : [other]);
  });
});
