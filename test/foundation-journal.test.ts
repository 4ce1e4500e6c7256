import { type ChildProcess, spawn } from "node:child_process";
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  appendEvent,
  type JournalEvent,
  readAllEvents,
  readEvents,
} from "../src/journal/journal.js";
import { replay } from "../src/journal/replay.js";
import { openIncidents } from "../src/page/incident.js";
import { identityOf } from "../src/process/identity.js";
import { usedTokens } from "../src/remote/judge.js";
import { sheepdog, sleeper, tempProgram } from "./helpers/cli.js";
import { asNew } from "./helpers/events.js";
import { journalAppender, journalLines, killAll, track, waitFor } from "./helpers/foundation.js";
import { killStarted } from "./helpers/watchdog.js";

let live: ChildProcess;
let appender: string;
beforeAll(async () => {
  live = track(sleeper());
  appender = await journalAppender();
});
afterAll(killAll);

/** Runs the real appendEvent in `n` separate OS processes at once. */
function appendInProcesses(
  stateDir: string,
  n: number,
  opts: {
    count: number;
    bytes: number;
    type?: string;
    fields?: Record<string, unknown>;
    env?: NodeJS.ProcessEnv;
  },
): Promise<number[]> {
  return Promise.all(
    Array.from(
      { length: n },
      (_, k) =>
        new Promise<number>((done) => {
          const child = spawn(
            process.execPath,
            [
              appender,
              stateDir,
              String(opts.count),
              String(opts.bytes),
              `w${k}`,
              opts.type ?? "saved",
              JSON.stringify(opts.fields ?? {}),
            ],
            { stdio: ["ignore", "ignore", "inherit"], env: { ...process.env, ...opts.env } },
          );
          child.on("close", (code) => done(code ?? -1));
        }),
    ),
  );
}

function save(env: NodeJS.ProcessEnv) {
  const r = sheepdog(["save", "--pid", String(live.pid)], { env });
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout);
}

function freshState(p: ReturnType<typeof tempProgram>): void {
  mkdirSync(p.stateDir, { mode: 0o700 });
}

const ago = (ms: number) => new Date(Date.now() - ms).toISOString();

/** An event without its `carried` mark: a copy and its original are one event. */
const identity = ({ carried: _c, ...rest }: JournalEvent) => JSON.stringify(rest);

describe("a torn last line", () => {
  it("is skipped by readers, and the next append starts on a new line", () => {
    const p = tempProgram("torn");
    save(p.env);
    const path = join(p.stateDir, "journal.jsonl");
    appendFileSync(path, `{"at":"${ago(0)}","type":"paused","until":"2099-01-01T00:`);

    const before = JSON.parse(sheepdog(["journal", "--json"], { env: p.env }).stdout);
    expect(before.events.map((e: { type: string }) => e.type)).toEqual(["saved"]);
    const text = sheepdog(["journal"], { env: p.env });
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout.trim().split("\n")).toHaveLength(1);

    // The torn `paused` must not count: save reports no pause.
    expect(save(p.env).pause).toBeNull();
    const raw = readFileSync(path, "utf8");
    expect(raw).toMatch(/"until":"2099-01-01T00:\n\{"at":/);
    expect(raw.endsWith("\n")).toBe(true);
    const lines = raw.split("\n").filter(Boolean);
    expect(lines).toHaveLength(3);
    expect(JSON.parse(lines[2] as string)).toMatchObject({ type: "saved", pid: live.pid });
    const after = JSON.parse(sheepdog(["journal", "--json"], { env: p.env }).stdout);
    expect(after.events.map((e: { type: string }) => e.type)).toEqual(["saved", "saved"]);
  });
});

describe("concurrent appenders", () => {
  it("8 processes × 200 events of ~3 KB never interleave", async () => {
    const p = tempProgram("append");
    freshState(p);
    const codes = await appendInProcesses(p.stateDir, 8, { count: 200, bytes: 3000 });
    expect(codes).toEqual(Array(8).fill(0));
    const raw = readFileSync(join(p.stateDir, "journal.jsonl"), "utf8");
    const lines = raw.split("\n");
    expect(lines.pop()).toBe(""); // ends in a newline
    expect(lines).toHaveLength(1600);
    const seen = new Map<string, number[]>();
    for (const line of lines) {
      const e = JSON.parse(line); // throws on an interleaved line
      expect(e.pad).toHaveLength(3000);
      seen.set(e.tag, [...(seen.get(e.tag) ?? []), e.i]);
    }
    // Every writer's events are all there, in its own order.
    for (let k = 0; k < 8; k++) {
      expect(seen.get(`w${k}`)).toEqual(Array.from({ length: 200 }, (_, i) => i));
    }
  }, 120_000);

  it("rotating while 8 processes append loses and tears nothing", async () => {
    const p = tempProgram("rotate-race");
    freshState(p);
    const env = { SHEEPDOG_JOURNAL_MAX_BYTES: String(1_500_000) };
    const codes = await appendInProcesses(p.stateDir, 8, { count: 200, bytes: 3000, env });
    expect(codes).toEqual(Array(8).fill(0));
    const files = readdirSync(p.stateDir).filter((f) => /^journal(\.\d+)?\.jsonl$/.test(f));
    expect(files.length).toBeGreaterThanOrEqual(3); // it did rotate, more than once
    expect(files).not.toContain("journal.6.jsonl");
    let total = 0;
    for (const f of files) total += journalLines(p.stateDir, f).filter((e) => !e.carried).length;
    expect(total).toBe(1600);
    expect(readAllEvents(p.stateDir)).toHaveLength(1600);
    expect(existsSync(join(p.stateDir, "journal.rotate.lock"))).toBe(false);
  }, 120_000);
});

describe("a clock stepped back", () => {
  it("replays in append order: a resume written at an earlier wall time still clears the stand-down", () => {
    const p = tempProgram("clock");
    save(p.env); // creates the state dir
    const now = Date.now();
    appendEvent(p.stateDir, { type: "stood_down", reason: "crash loop" }, now);
    appendEvent(p.stateDir, { type: "cleared" }, now - 3_600_000); // the clock went back an hour
    expect(replay(readEvents(p.stateDir)).stoodDown).toBeNull();
    expect(save(p.env).stood_down).toBeNull();
    // And the other way round: a stand-down after the resume holds, whatever the times say.
    appendEvent(p.stateDir, { type: "stood_down", reason: "again" }, now - 7_200_000);
    expect(replay(readEvents(p.stateDir)).stoodDown).toMatchObject({ reason: "again" });
  });

  it("carried copies go before the files' own events", () => {
    const p = tempProgram("carried-order");
    save(p.env);
    const now = Date.now();
    const line = (e: Record<string, unknown>) => `${JSON.stringify(e)}\n`;
    // journal.1: a copy carried from an older file, then its own stand-down.
    writeFileSync(
      join(p.stateDir, "journal.1.jsonl"),
      line({ at: new Date(now - 9e6).toISOString(), type: "cleared", carried: true }) +
        line({ at: new Date(now).toISOString(), type: "stood_down", reason: "x" }),
    );
    // The current file: a copy carried from journal.2 (stamped later than it was), then its own.
    writeFileSync(
      join(p.stateDir, "journal.jsonl"),
      line({ at: new Date(now + 60_000).toISOString(), type: "finished", carried: true }) +
        line({ at: new Date(now - 1000).toISOString(), type: "reopened" }),
    );
    const types = readEvents(p.stateDir).map((e) => e.type);
    expect(types).toEqual(["cleared", "finished", "stood_down", "reopened"]);
    const state = replay(readEvents(p.stateDir));
    expect(state.stoodDown).toMatchObject({ reason: "x" });
    expect(state.finished).toBeNull();
  });
});

describe("rotation", () => {
  const tiny = { SHEEPDOG_JOURNAL_MAX_BYTES: "2000" };

  it("carried copies keep append order, not time order (a start stamped before its intent)", () => {
    const p = tempProgram("carried-append-order");
    save(p.env);
    const was = process.env.SHEEPDOG_JOURNAL_MAX_BYTES;
    process.env.SHEEPDOG_JOURNAL_MAX_BYTES = "600";
    try {
      const now = Date.now();
      appendEvent(p.stateDir, { type: "manager_starting", launch_began: "b" }, now);
      // The clock stepped back an hour between the intent and its outcome.
      appendEvent(p.stateDir, { type: "manager_started", launch_began: "b", pid: 7 }, now - 3.6e6);
      for (let i = 0; i < 12; i++)
        appendEvent(p.stateDir, asNew({ type: "saved", pad: "p".repeat(100) }), now);
    } finally {
      if (was === undefined) delete process.env.SHEEPDOG_JOURNAL_MAX_BYTES;
      else process.env.SHEEPDOG_JOURNAL_MAX_BYTES = was;
    }
    const carried = readEvents(p.stateDir)
      .filter((e) => e.carried)
      .map((e) => e.type);
    expect(carried).toContain("manager_started");
    expect(carried.indexOf("manager_starting")).toBeLessThan(carried.indexOf("manager_started"));
  });

  it("keeps replay's view: finished, stood_down and paused survive several rotations", async () => {
    const p = tempProgram("rotation");
    const env = { ...p.env, ...tiny };
    save(env);
    const until = new Date(Date.now() + 3_600_000).toISOString();
    // Events as other areas will write them, through the real appendEvent.
    for (const type of ["finished", "stood_down"]) {
      expect(await appendInProcesses(p.stateDir, 1, { count: 1, bytes: 10, type, env })).toEqual([
        0,
      ]);
    }
    appendFileSync(
      join(p.stateDir, "journal.jsonl"),
      `${JSON.stringify({ at: ago(0), type: "paused", until, reason: "seat limited" })}\n`,
    );
    // ~20 events of ~250 bytes: 5 KB through a 2 KB journal, so it rotates three times or so
    // (each new file starts with about 1 KB of copies; the originals stay among the five kept
    // files, for `journal` to show once each).
    for (let i = 0; i < 2; i++) {
      expect(await appendInProcesses(p.stateDir, 1, { count: 10, bytes: 200, env })).toEqual([0]);
    }
    expect(existsSync(join(p.stateDir, "journal.2.jsonl"))).toBe(true);
    expect(existsSync(join(p.stateDir, "journal.5.jsonl"))).toBe(false);
    // The originals are no longer in the two files replay reads.
    const replayed = [
      ...journalLines(p.stateDir, "journal.1.jsonl"),
      ...journalLines(p.stateDir, "journal.jsonl"),
    ];
    expect(replayed.filter((e) => e.type === "finished" && !e.carried)).toEqual([]);

    const state = replay(readEvents(p.stateDir));
    expect(state.finished).toMatchObject({ type: "finished", tag: "w0" });
    expect(state.stoodDown).toMatchObject({ type: "stood_down" });
    expect(state.paused).toMatchObject({ until });

    // End to end: save reads the same view.
    const out = save(env);
    expect(out.pause).toEqual({ until, reason: "seat limited" });
    expect(out.stood_down).toEqual({ reason: "" });

    // People see each event once: the copies made at rotation are hidden.
    const shown = JSON.parse(sheepdog(["journal", "--json"], { env }).stdout).events;
    expect(shown.filter((e: { type: string }) => e.type === "finished")).toHaveLength(1);
    expect(shown.some((e: { carried?: boolean }) => e.carried)).toBe(false);
  }, 120_000);

  it("a rotation lock left without a holder, or by a rotator that died, does not stop rotation", async () => {
    const p = tempProgram("stale-lock");
    const env = { ...p.env, ...tiny };
    save(env);
    const lock = join(p.stateDir, "journal.rotate.lock");
    // Half-made (an older sheepdog killed between its mkdir and its holder.json): broken at once.
    mkdirSync(lock);
    expect(await appendInProcesses(p.stateDir, 1, { count: 20, bytes: 200, env })).toEqual([0]);
    expect(existsSync(join(p.stateDir, "journal.1.jsonl"))).toBe(true);
    expect(existsSync(lock)).toBe(false);
    // A rotator's lock, whole, its rotator alive (at work): left alone.
    const rotator = identityOf(live.pid as number);
    mkdirSync(lock);
    writeFileSync(join(lock, "holder.json"), JSON.stringify(rotator));
    expect(await appendInProcesses(p.stateDir, 1, { count: 1, bytes: 10, env })).toEqual([0]);
    expect(existsSync(lock)).toBe(true);
  });

  it("a later clearing event wins over a carried one", async () => {
    const p = tempProgram("cleared");
    const env = { ...p.env, ...tiny };
    save(env);
    const until = new Date(Date.now() + 3_600_000).toISOString();
    for (const type of ["stood_down", "paused", "cleared", "unpaused"]) {
      const fields = type === "paused" ? { until, window: "five_hour" } : {};
      expect(
        await appendInProcesses(p.stateDir, 1, { count: 1, bytes: 10, type, fields, env }),
      ).toEqual([0]);
    }
    for (let i = 0; i < 4; i++)
      expect(await appendInProcesses(p.stateDir, 1, { count: 10, bytes: 200, env })).toEqual([0]);
    expect(existsSync(join(p.stateDir, "journal.2.jsonl"))).toBe(true);
    const state = replay(readEvents(p.stateDir));
    expect(state.stoodDown).toBeNull();
    expect(state.paused).toBeNull();
    const out = save(env);
    expect(out.stood_down).toBeNull();
    expect(out.pause).toBeNull();
  }, 120_000);
});

describe("an old journal whose lines do not fit the vocabulary (src/journal/events.ts)", () => {
  it("never fails a tick: the lines are skipped, counted and said by tick, status and journal", () => {
    const p = tempProgram("old", {
      manager: { launcher: "command", command: ["sleep", "600"] },
      watchdog: { interval: "1h", stale_after: "1h", claim_grace: "1h" },
    });
    freshState(p);
    const lines = [
      { at: ago(3_600_000), type: "saved", pid: "4242", progress: 3 },
      { at: ago(3_000_000), type: "a_retired_event", note: "x" },
      { at: ago(2_000_000), type: "finished", note: "done" },
      { at: ago(1_000_000), type: "reopened" },
    ];
    writeFileSync(
      join(p.stateDir, "journal.jsonl"),
      `${lines.map((e) => JSON.stringify(e)).join("\n")}\n`,
      { mode: 0o600 },
    );
    const said =
      "the journal has 2 lines that are not an event sheepdog knows, skipped (journal.jsonl line 1: saved: pid: expected number)";
    const t = sheepdog(["tick", "--json"], { env: p.env });
    expect(t.code, t.stderr).toBe(0);
    const report = JSON.parse(t.stdout).programs[0];
    // The lines that fit still count: reopened after finished, so the tick starts a manager.
    expect(report.decision).toBe("start");
    expect(report.facts.journal_skipped).toEqual({
      lines: 2,
      first: "journal.jsonl line 1: saved: pid: expected number",
    });
    expect(t.stderr).toBe(`sheepdog tick: old: ${said}\n`);
    const status = sheepdog(["status"], { env: p.env });
    expect(status.stdout).toContain(`old: ${said}`);
    const journal = sheepdog(["journal"], { env: p.env });
    expect(journal.code).toBe(0);
    expect(journal.stderr).toContain(`old: ${said}`);
    killStarted(p.stateDir);
  });
});

describe("a rotation killed at each step", () => {
  const MAX = 3000;
  /** What replay's view says, and how many of its events it reads twice. */
  function facts(stateDir: string, except: string[] = []) {
    const view = readEvents(stateDir).filter((e) => !except.includes(e.type));
    const ids = view.map(identity);
    const newest: Record<string, string> = {};
    for (const e of view) newest[e.type] = identity(e);
    const state = replay(view);
    return {
      twice: ids.length - new Set(ids).size,
      stoodDown: state.stoodDown && identity(state.stoodDown),
      open: [...openIncidents(view).values()].map((i) => i.id),
      tokens: [...usedTokens(view)].sort(),
      newest,
    };
  }

  /** A journal rotated four times (journal.1–4), holding an open incident, a used token and a
   * cleared stand-down across its files, its current file at the size bound: the next append
   * rotates it. */
  function journalAtBound(stateDir: string): number {
    const was = process.env.SHEEPDOG_JOURNAL_MAX_BYTES;
    process.env.SHEEPDOG_JOURNAL_MAX_BYTES = String(MAX);
    let n = 0;
    const add = (event: { type: string; [k: string]: unknown }) => {
      appendEvent(stateDir, asNew(event));
      n++;
    };
    const pad = (count: number) => {
      for (let i = 0; i < count; i++) add({ type: "heartbeat_failed", i: n, pad: "x".repeat(200) });
    };
    try {
      add({ type: "stood_down", reason: "crash loop" });
      add({ type: "incident_opened", incident: "aaaaaaaaaaaa", kind: "blocked" });
      add({ type: "paged", incident: "aaaaaaaaaaaa", kind: "blocked" });
      add({ type: "remote_accepted", token_sha256: "t1", expires_at: ago(-3_600_000) });
      pad(14);
      add({ type: "cleared" });
      while (!existsSync(join(stateDir, "journal.4.jsonl"))) pad(1);
    } finally {
      if (was === undefined) delete process.env.SHEEPDOG_JOURNAL_MAX_BYTES;
      else process.env.SHEEPDOG_JOURNAL_MAX_BYTES = was;
    }
    const path = join(stateDir, "journal.jsonl");
    while (statSync(path).size < MAX) {
      appendFileSync(
        path,
        `${JSON.stringify({ at: ago(0), type: "heartbeat_failed", i: n, pad: "y" })}\n`,
      );
      n++;
    }
    return n;
  }

  for (const point of [
    "journal.rotate.next-written",
    // the shift's first step (journal.4 → 5), its middle (then 3 → 4: a shift taken up from
    // the top again would put the old journal.3 onto the old journal.4 and lose it) and its
    // last (2 → 3)
    "journal.rotate.shifted.4",
    "journal.rotate.shifted.3",
    "journal.rotate.shifted.2",
    "journal.rotate.kept",
    "journal.rotate.half-swapped",
  ]) {
    it(`killed at ${point}: the view is whole throughout, and the next append finishes it`, async () => {
      const p = tempProgram(`rotate-kill-${point.split(".").at(-1)}`);
      freshState(p);
      const written = journalAtBound(p.stateDir);
      const before = facts(p.stateDir);
      expect(before).toMatchObject({
        twice: 0,
        stoodDown: null,
        open: ["aaaaaaaaaaaa"],
        tokens: ["t1"],
      });

      const marker = join(p.home, "fault-marker");
      const child = track(
        spawn(process.execPath, [appender, p.stateDir, "1", "10", "killed", "probe"], {
          stdio: ["ignore", "ignore", "inherit"],
          env: {
            ...process.env,
            SHEEPDOG_JOURNAL_MAX_BYTES: String(MAX),
            SHEEPDOG_FAULT_POINT: point,
            SHEEPDOG_FAULT_MARKER: marker,
          },
        }),
      );
      const exited = new Promise((done) => child.once("exit", done));
      await waitFor(`the appender at ${point}`, () => existsSync(marker));
      // Stopped at the step: what every reader sees now is the view before.
      expect(facts(p.stateDir)).toEqual(before);
      child.kill("SIGKILL");
      await exited;
      expect(facts(p.stateDir)).toEqual(before);

      // The next append (its rotation lock's holder is dead) finishes the rotation.
      const was = process.env.SHEEPDOG_JOURNAL_MAX_BYTES;
      process.env.SHEEPDOG_JOURNAL_MAX_BYTES = String(MAX);
      try {
        appendEvent(p.stateDir, { type: "sleep_gap", from: "after" });
      } finally {
        if (was === undefined) delete process.env.SHEEPDOG_JOURNAL_MAX_BYTES;
        else process.env.SHEEPDOG_JOURNAL_MAX_BYTES = was;
      }
      expect(facts(p.stateDir, ["probe", "sleep_gap"])).toEqual(before);
      expect(statSync(join(p.stateDir, "journal.jsonl")).size).toBeLessThan(MAX);
      const files = readdirSync(p.stateDir).filter((f) => f.startsWith("journal."));
      expect(files).not.toContain("journal.next.jsonl");
      expect(files).not.toContain("journal.hold.jsonl");
      const inodes = files.map((f) => statSync(join(p.stateDir, f)).ino);
      expect(new Set(inodes).size, "no file under two names").toBe(inodes.length);
      // People see every event once.
      const shown = readAllEvents(p.stateDir);
      expect(shown).toHaveLength(written + 1);
      expect(new Set(shown.map(identity)).size).toBe(written + 1);
    });
  }
});

describe("sheepdog journal", () => {
  function seeded() {
    const p = tempProgram("log");
    freshState(p);
    const events = [
      { at: ago(3 * 3_600_000), type: "manager_started", reason: "first start", planned: true },
      { at: ago(2 * 3_600_000), type: "claimed", pid: 4242, hostname: "box" },
      { at: ago(2 * 3_600_000), type: "claimed", pid: 1, carried: true },
      { at: ago(30 * 60_000), type: "saved", pid: 4242, context_tokens: 151204, progress: null },
      { at: ago(60_000), type: "hand_over", context_tokens: 201000, note: "context full" },
    ];
    writeFileSync(
      join(p.stateDir, "journal.jsonl"),
      `${events.map((e) => JSON.stringify(e)).join("\n")}\n`,
      { mode: 0o600 },
    );
    return p;
  }

  it("prints one aligned line per event, without the copies made at rotation", () => {
    const p = seeded();
    const r = sheepdog(["journal"], { env: p.env });
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trimEnd().split("\n");
    expect(lines).toHaveLength(4);
    expect(lines[0]).toMatch(
      /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d [A-Z][\w+:-]* {2}manager_started {2}reason="first start" planned=true$/,
    );
    expect(lines[2]).toMatch(/saved +pid=4242 context_tokens=151204$/);
    expect(lines[3]).toMatch(/hand_over +context_tokens=201000 note="context full"$/);
    // Fields start in the same column on every line.
    const columns = lines.map((l) => l.search(/ [a-z_]+=/));
    expect(new Set(columns).size).toBe(1);
  });

  it("--since keeps the recent events; --json prints one document", () => {
    const p = seeded();
    const recent = sheepdog(["journal", "--since", "1h"], { env: p.env });
    expect(
      recent.stdout
        .trimEnd()
        .split("\n")
        .map((l) => l.split(/ +/)[3]),
    ).toEqual(["saved", "hand_over"]);
    const json = sheepdog(["journal", "--since", "150m", "--json"], { env: p.env });
    expect(json.code, json.stderr).toBe(0);
    const doc = JSON.parse(json.stdout);
    expect(doc.program).toBe("log");
    expect(doc.events.map((e: { type: string }) => e.type)).toEqual([
      "claimed",
      "saved",
      "hand_over",
    ]);
    expect(doc.events[0]).toEqual({
      at: expect.any(String),
      type: "claimed",
      pid: 4242,
      hostname: "box",
    });
    const iso = sheepdog(["journal", "--json", "--since", ago(45 * 60_000)], { env: p.env });
    expect(JSON.parse(iso.stdout).events).toHaveLength(2);

    const none = sheepdog(["journal", "--since", "10s"], { env: p.env });
    expect(none.code).toBe(0);
    expect(none.stdout).toBe("");
    expect(none.stderr).toMatch(/log: no events in the last 10s/);
  });

  it("a bad --since is exit 2; a program with no state prints nothing and creates none", () => {
    const p = seeded();
    const bad = sheepdog(["journal", "--since", "yesterday"], { env: p.env });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain(
      `--since: expected a duration such as 2h or an ISO-8601 time such as 2026-11-30T18:00:00Z, got "yesterday"`,
    );
    const empty = tempProgram("empty");
    const r = sheepdog(["journal", "--json"], { env: empty.env });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ program: "empty", events: [] });
    expect(existsSync(empty.stateDir)).toBe(false);
  });
});
