// Usage pauses end to end (DESIGN §5, §6 rules 3–5): real `sheepdog tick`/`statusline`/`save`
// processes, real fake managers, real transcripts under a real seat folder, and a real HTTP
// server on 127.0.0.1 standing in for ntfy.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { CLI, sheepdog, sheepdogAsync, tempProgram } from "./helpers/cli.js";
import { useNtfyServer } from "./helpers/ntfy-server.js";
import { apiErrorLine, assistantLine, writeTranscript } from "./helpers/usage.js";
import {
  FAKE_MANAGER,
  hashTree,
  holder,
  isAlive,
  killStarted,
  ofType,
  type TickProgram,
  waitFor,
  waitForClaimBy,
} from "./helpers/watchdog.js";

const server = useNtfyServer();
const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

const REFUSAL = "Claude AI usage limit reached";

/**
 * `sheepdog tick --json`, run asynchronously: the ntfy stand-in lives in this process and must
 * be able to answer the tick's pages while it runs.
 */
async function tick(env: NodeJS.ProcessEnv, args: string[] = []): Promise<{ report: TickProgram }> {
  const r = await sheepdogAsync(["tick", "--json", ...args], { env });
  expect(r.stderr).toBe("");
  expect(r.code).toBe(0);
  return {
    report: (JSON.parse(r.stdout) as { programs: TickProgram[] }).programs[0] as TickProgram,
  };
}
const epoch = () => Math.floor(Date.now() / 1000);

interface Started {
  pid: number;
  start_time: string;
  planned: boolean;
  reason: string;
}
const starts = (stateDir: string) => ofType(stateDir, "manager_started") as unknown as Started[];
const lastStart = (stateDir: string) => starts(stateDir).at(-1) as Started;

/**
 * A program whose `command` launcher runs the fake manager, on its own seat folder (shared
 * by the `CLAUDE_CONFIG_DIR` every call of the test gets), paging the test's ntfy server.
 * `home`: put it under an existing $SHEEPDOG_HOME (a second program on the same host).
 */
function program(
  opts: {
    flags?: string[];
    watchdog?: Record<string, unknown>;
    usage?: Record<string, unknown>;
    name?: string;
    home?: { home: string; env: Record<string, string>; seat: string };
  } = {},
) {
  const name = opts.name ?? "catalog";
  const body = {
    manager: {
      launcher: "command",
      command: [process.execPath, FAKE_MANAGER, ...(opts.flags ?? []), "{prompt}"],
      env: { SHEEPDOG_CLI: CLI },
    },
    watchdog: { interval: "1h", stale_after: "1h", claim_grace: "1h", ...opts.watchdog },
    usage: { ...opts.usage },
    page: { ntfy: { server: server.url, topic: `${name}-alerts` } },
  };
  const config = { name, ...body };
  let p: { home: string; root: string; env: Record<string, string>; stateDir: string };
  if (opts.home) {
    const root = join(opts.home.home, name);
    mkdirSync(root);
    writeFileSync(join(root, "program.json"), `${JSON.stringify(config, null, 2)}\n`);
    p = {
      home: opts.home.home,
      root,
      env: { ...opts.home.env, SHEEPDOG_PROGRAM: root },
      stateDir: join(root, ".sheepdog"),
    };
  } else {
    p = tempProgram(name, body);
  }
  const seat = opts.home?.seat ?? join(p.home, "seat");
  mkdirSync(seat, { recursive: true });
  const env = { ...p.env, CLAUDE_CONFIG_DIR: seat };
  const readings = join(p.env.SHEEPDOG_STATE_DIR as string, "usage");
  cleanups.push(() => killStarted(p.stateDir));
  return { ...p, env, seat, readings };
}
type Program = ReturnType<typeof program>;

/** Records a reading through the real statusline, as Claude Code on this seat would. */
function statusline(p: Program, windows: Record<string, { pct: number; resets: number }>) {
  const rate_limits = Object.fromEntries(
    Object.entries(windows).map(([w, v]) => [w, { used_percentage: v.pct, resets_at: v.resets }]),
  );
  const r = sheepdog(["statusline"], {
    env: p.env,
    input: JSON.stringify({ rate_limits, session_id: "s-test", model: { display_name: "Opus" } }),
  });
  expect(r.code).toBe(0);
}

/** The folder Claude Code keeps transcripts of a working directory in, under the seat. */
const projectDir = (p: Program, cwd = p.root) =>
  join(p.seat, "projects", cwd.replace(/[^a-zA-Z0-9]/g, "-"));

/** A transcript that ends in an API-error entry with `text`, stamped `at`. */
function refusalTranscript(path: string, text: string, at: Date): string {
  const before = new Date(at.getTime() - 1000).toISOString();
  return writeTranscript(path, [
    assistantLine({ input: 1200, cc: 300, cr: 90_000 }, { timestamp: before }),
    apiErrorLine(text, at.toISOString()),
  ]);
}

/** Starts the program's first manager through a tick and waits for it to claim. */
async function firstManager(p: Program): Promise<Started> {
  expect((await tick(p.env)).report.decision).toBe("start");
  const s = lastStart(p.stateDir);
  await waitForClaimBy(p.stateDir, s.pid);
  return s;
}

async function kill(s: Started): Promise<void> {
  process.kill(s.pid, "SIGKILL");
  await waitFor(`pid ${s.pid} to die`, () => !isAlive(s.pid, s.start_time));
}

/** Waits (bounded) until the clock passes an ISO time or epoch seconds. */
async function until(at: string | number): Promise<void> {
  const ms = typeof at === "number" ? at * 1000 : Date.parse(at);
  await waitFor("the reset", () => Date.now() >= ms + 50, 60_000);
}

const pausedPages = () => server.received.filter((r) => /paused/.test(r.title ?? ""));

describe("usage pauses through tick", () => {
  it("a 100 % reading pauses without starting, pages once, and the reset brings a planned start the crash-loop guard ignores", async () => {
    const p = program({ watchdog: { crash_loop: { starts: 1, within: "1h" } } });
    const a = await firstManager(p); // the program's first start (planned)
    await kill(a); // without the pause this is restart_dead
    const resets = epoch() + 10; // room for two ticks on a loaded machine before it resets
    statusline(p, { five_hour: { pct: 100, resets } });

    const t1 = await tick(p.env);
    expect(t1.report.decision).toBe("pause");
    const paused = ofType(p.stateDir, "paused");
    expect(paused).toHaveLength(1);
    expect(paused[0]).toMatchObject({
      until: new Date(resets * 1000).toISOString(),
      window: "five_hour",
    });
    expect(paused[0]?.reason).toMatch(/five_hour window at 100%/);
    expect(starts(p.stateDir)).toHaveLength(1);
    expect(pausedPages()).toHaveLength(1);
    expect(pausedPages()[0]?.title).toBe("catalog paused at a usage limit");

    const t2 = await tick(p.env);
    expect(t2.report.decision).toBe("wait_pause");
    expect(starts(p.stateDir)).toHaveLength(1);
    expect(server.received).toHaveLength(1);
    expect(holder(p.stateDir)?.pid).toBe(a.pid); // the dead holder's claim is not touched

    await until(resets);
    const t3 = await tick(p.env);
    expect(t3.report.decision).toBe("restart_dead");
    expect(ofType(p.stateDir, "unpaused")).toHaveLength(1);
    const b = lastStart(p.stateDir);
    expect(starts(p.stateDir)).toHaveLength(2);
    expect(b.planned).toBe(true);
    expect(b.reason).toBe(
      `the usage pause is over: the five_hour window reset at ${new Date(resets * 1000).toISOString()}; the previous manager stopped: holder pid ${a.pid} is dead`,
    );
    expect(pausedPages()).toHaveLength(1);

    // crash_loop.starts is 1: the planned start did not count, so one unplanned start still
    // goes ahead, and only the next stands down.
    await waitForClaimBy(p.stateDir, b.pid);
    await kill(b);
    expect((await tick(p.env)).report.decision).toBe("restart_dead");
    const c = lastStart(p.stateDir);
    expect(c.planned).toBe(false);
    await waitForClaimBy(p.stateDir, c.pid);
    await kill(c);
    expect((await tick(p.env)).report.decision).toBe("stand_down");
  });

  it("a refusal at the end of the holder's transcript pauses until the time it names, and another program on the seat pauses with it", async () => {
    const p = program();
    const a = await firstManager(p);
    const resets = epoch() + 30;
    const transcript = refusalTranscript(
      join(projectDir(p), "5c0f4a7e-2b1d-4c55-9a53-0f1e2d3c4b5a.jsonl"),
      `${REFUSAL}|${resets}`,
      new Date(),
    );

    const t1 = await tick(p.env);
    expect(t1.report.decision).toBe("pause");
    const want = new Date(resets * 1000).toISOString();
    expect(ofType(p.stateDir, "paused")).toMatchObject([{ until: want, window: "five_hour" }]);
    expect(t1.report.reason).toMatch(/transcript ends in a usage-limit refusal/);
    const seat = (t1.report.facts as { seat: { refusal: Record<string, unknown> } }).seat;
    expect(seat.refusal).toMatchObject({ text: `${REFUSAL}|${resets}`, transcript });
    // The live manager is left to save and stop itself.
    expect(isAlive(a.pid, a.start_time)).toBe(true);
    expect(ofType(p.stateDir, "manager_stopped")).toHaveLength(0);
    expect(pausedPages()).toHaveLength(1);

    // A second program on the same seat, with no transcript of its own: its next tick pauses.
    const q = program({ name: "billing", home: p });
    const t2 = await tick(q.env);
    expect(t2.report.decision).toBe("pause");
    expect(ofType(q.stateDir, "paused")).toMatchObject([{ until: want, window: "five_hour" }]);
    expect(starts(q.stateDir)).toHaveLength(0);

    // The refusal is one reading: further ticks record it no more.
    const before = hashTree(p.readings);
    expect((await tick(p.env)).report.decision).toBe("wait_pause");
    expect(hashTree(p.readings)).toBe(before);
  });

  it("unpause wins over what is already recorded: the next tick does not pause on the same reading or refusal; a newer one pauses again (issue 18)", async () => {
    const p = program();
    const a = await firstManager(p);
    statusline(p, { five_hour: { pct: 100, resets: epoch() + 3600 } });
    refusalTranscript(
      join(projectDir(p), "5c0f4a7e-2b1d-4c55-9a53-0f1e2d3c4b5a.jsonl"),
      `${REFUSAL}|${epoch() + 3600}`,
      new Date(),
    );
    expect((await tick(p.env)).report.decision).toBe("pause");
    await new Promise((r) => setTimeout(r, 20)); // the unpause is stamped after both
    expect(sheepdog(["unpause"], { env: p.env }).code).toBe(0);
    for (let i = 0; i < 2; i++) {
      const t = await tick(p.env);
      expect(t.report.decision).toBe("ok");
      expect((t.report.facts as { seat: { limited: boolean } }).seat.limited).toBe(false);
    }
    expect(ofType(p.stateDir, "paused")).toHaveLength(1);
    expect(isAlive(a.pid, a.start_time)).toBe(true);
    // A reading taken after the unpause is news: it pauses again. Its own value (the same one
    // re-reported is not recorded again, and within one second epoch() + 3600 would be it).
    await new Promise((r) => setTimeout(r, 20));
    statusline(p, { five_hour: { pct: 100, resets: epoch() + 7200 } });
    expect((await tick(p.env)).report.decision).toBe("pause");
    expect(ofType(p.stateDir, "paused")).toHaveLength(2);
  });

  it("a refusal whose named reset does not fit its window is not trusted: pause_fallback, and the journal says why (issue 18)", async () => {
    const p = program({ usage: { pause_fallback: "20m" } });
    await firstManager(p);
    // a five-hour limit "resetting" in a year: a date read into next year
    const misread = epoch() + 365 * 86_400;
    refusalTranscript(
      join(projectDir(p), "5c0f4a7e-2b1d-4c55-9a53-0f1e2d3c4b5a.jsonl"),
      `${REFUSAL}|${misread}`,
      new Date(),
    );
    const before = Date.now();
    const t = await tick(p.env);
    expect(t.report.decision).toBe("pause");
    const [paused] = ofType(p.stateDir, "paused");
    const until = Date.parse(String(paused?.until));
    expect(until).toBeGreaterThanOrEqual(before + 20 * 60_000 - 1000);
    expect(until).toBeLessThan(before + 21 * 60_000);
    expect(paused?.reason).toContain(
      `whose reset (${new Date(misread * 1000).toISOString()}) does not fit its window and is not trusted`,
    );
  });

  it("finds the holder's transcript through the session map its statusline recorded", async () => {
    // (The fake manager runs in the program root: the path is relative to it.)
    const p = program({ flags: ["--statusline", "status.json"] });
    // The transcript lives outside the seat's project folder: only the session map names it.
    const transcript = join(p.home, "elsewhere", "session.jsonl");
    writeFileSync(
      join(p.root, "status.json"),
      JSON.stringify({ session_id: "s-map", transcript_path: transcript }),
    );
    const a = await firstManager(p);
    await waitFor("the first save", () => ofType(p.stateDir, "saved").some((e) => e.pid === a.pid));
    const resets = epoch() + 30;
    refusalTranscript(transcript, `${REFUSAL}|${resets}`, new Date());

    const t = await tick(p.env);
    expect(t.report.decision).toBe("pause");
    expect(ofType(p.stateDir, "paused")[0]?.until).toBe(new Date(resets * 1000).toISOString());
  });

  it("a refusal older than the holder's claim does not pause", async () => {
    const p = program();
    const a = await firstManager(p);
    const claimedAt = Date.parse(String(ofType(p.stateDir, "claimed")[0]?.at));
    refusalTranscript(
      join(projectDir(p), "old.jsonl"),
      `${REFUSAL}|${epoch() + 3600}`,
      new Date(claimedAt - 60_000),
    );
    const t = await tick(p.env);
    expect(t.report.decision).toBe("ok");
    expect(ofType(p.stateDir, "paused")).toHaveLength(0);
    expect(hashTree(p.readings)).toBe(hashTree(join(p.home, "no-such-dir")));
    expect(isAlive(a.pid, a.start_time)).toBe(true);
  });

  it("a refusal naming no time pauses for usage.pause_fallback, then is re-checked and unpaused", async () => {
    const q = program({ usage: { pause_fallback: "1h" } });
    // The hour passes on the test's clock (SHEEPDOG_CLOCK_FILE), not the wall's.
    const clock = join(q.home, "clock-step");
    writeFileSync(clock, "0");
    const p = { ...q, env: { ...q.env, SHEEPDOG_CLOCK_FILE: clock } };
    const a = await firstManager(p);
    refusalTranscript(join(projectDir(p), "a.jsonl"), REFUSAL, new Date());
    await kill(a); // a manager that hit the limit often exits

    const t1 = await tick(p.env);
    expect(t1.report.decision).toBe("pause");
    expect(t1.report.reason).toMatch(/naming no reset.*pause_fallback \(1h\)/);
    const paused = ofType(p.stateDir, "paused")[0];
    // The fallback runs from the tick that first saw the refusal.
    const now = Date.parse(String((t1.report.facts as { now: string }).now));
    expect(paused?.until).toBe(new Date(now + 3600_000).toISOString());
    expect((await tick(p.env)).report.decision).toBe("wait_pause");

    writeFileSync(clock, String(Date.parse(String(paused?.until)) - Date.now() + 1000));
    // The same refusal is still at the end of the dead holder's transcript: it is the reading
    // already recorded, whose fallback has passed, so the pause does not begin again.
    const t2 = await tick(p.env);
    expect(t2.report.decision).toBe("restart_dead");
    expect(ofType(p.stateDir, "unpaused")).toHaveLength(1);
    expect(ofType(p.stateDir, "paused")).toHaveLength(1);
    const b = lastStart(p.stateDir);
    expect(b.planned).toBe(true);
    await waitForClaimBy(p.stateDir, b.pid);
    // The old refusal predates the new holder: nothing pauses.
    expect((await tick(p.env)).report.decision).toBe("ok");
  });

  it("75 % and 90 % readings change nothing", async () => {
    const p = program();
    const a = await firstManager(p);
    const resets = epoch() + 3600;
    statusline(p, { five_hour: { pct: 75, resets }, seven_day: { pct: 90, resets } });
    const t1 = await tick(p.env);
    expect(t1.report.decision).toBe("ok");
    expect(t1.report.reason).toMatch(new RegExp(`^pid ${a.pid} alive`));
    await kill(a);
    statusline(p, { five_hour: { pct: 90, resets }, seven_day: { pct: 99.9, resets } });
    expect((await tick(p.env)).report.decision).toBe("restart_dead");
    expect(ofType(p.stateDir, "paused")).toHaveLength(0);
    expect(server.received).toHaveLength(0);
    // Control: the same seat at 100 % would pause.
    statusline(p, { five_hour: { pct: 100, resets } });
    expect((await tick(p.env)).report.decision).toBe("pause");
  });

  it("while paused a live manager is left alone, even past stale_after, and every save answers with the pause", async () => {
    const p = program({
      flags: ["--save-every", "3600"],
      watchdog: { stale_after: "3s" },
    });
    const a = await firstManager(p);
    const resets = epoch() + 12;
    const untilIso = new Date(resets * 1000).toISOString();
    statusline(p, { five_hour: { pct: 100, resets } });
    expect((await tick(p.env)).report.decision).toBe("pause");

    // Past stale_after with no save: outside a pause this would be restart_stuck.
    const beat = JSON.parse(readFileSync(join(p.stateDir, "heartbeat.json"), "utf8"));
    expect(beat.pid).toBe(a.pid);
    await waitFor("the heartbeat to go stale", () => Date.now() - Date.parse(beat.at) > 3500);
    expect((await tick(p.env)).report.decision).toBe("wait_pause");
    expect(isAlive(a.pid, a.start_time)).toBe(true);
    expect(ofType(p.stateDir, "manager_stopped")).toHaveLength(0);
    expect(starts(p.stateDir)).toHaveLength(1);

    for (let n = 0; n < 2; n++) {
      const r = sheepdog(["save", "--pid", String(a.pid)], { env: p.env, cwd: p.root });
      expect(r.code).toBe(0);
      const answer = JSON.parse(r.stdout);
      expect(answer.pause).toEqual({ until: untilIso, reason: expect.stringMatching(/limited/) });
      expect(answer.notices).toContain(`the program is paused until ${untilIso}: save and stop`);
    }

    // After the reset: the pause is over, and a live manager that saved lately is left alone.
    await until(resets);
    const r = sheepdog(["save", "--pid", String(a.pid)], { env: p.env, cwd: p.root });
    expect(JSON.parse(r.stdout).pause).toBeNull();
    const t = await tick(p.env);
    expect(t.report.decision).toBe("ok");
    expect(ofType(p.stateDir, "unpaused")).toHaveLength(1);
    expect(starts(p.stateDir)).toHaveLength(1);
    expect(isAlive(a.pid, a.start_time)).toBe(true);
  });

  it("after the pause a live manager has claim_grace from the reset to go on by itself; still silent after it, it is stopped as stuck", async () => {
    const p = program({
      flags: ["--first-save-after", "3600"],
      watchdog: { stale_after: "3s", claim_grace: "4s" },
    });
    const a = await firstManager(p);
    // Silent past stale_after before the limit: the pause (rule 5) comes before rule 9.
    await new Promise((r) => setTimeout(r, 3500));
    const resets = epoch() + 5;
    statusline(p, { five_hour: { pct: 100, resets } });
    expect((await tick(p.env)).report.decision).toBe("pause");
    await until(resets);
    // Its silence inside the pause does not count, and the grace runs from the reset (DESIGN §6).
    const t = await tick(p.env);
    expect(t.report.decision).toBe("ok");
    const until_ = new Date(resets * 1000).toISOString();
    expect(t.report.reason).toContain(`the usage pause ended at ${until_}`);
    expect(t.report.reason).toMatch(/inside a usage pause is not counted.*to go on by itself/);
    expect(isAlive(a.pid, a.start_time)).toBe(true);
    expect(ofType(p.stateDir, "unpaused")).toHaveLength(1);
    expect(ofType(p.stateDir, "manager_stopped")).toHaveLength(0);

    await until(resets + 5);
    const t2 = await tick(p.env);
    expect(t2.report.decision).toBe("restart_stuck");
    expect(isAlive(a.pid, a.start_time)).toBe(false);
    const [stopped] = ofType(p.stateDir, "manager_stopped");
    expect(stopped).toMatchObject({ pid: a.pid, decision: "restart_stuck" });
    expect(stopped?.reason).toMatch(/no save since it claimed/);
    expect(String(stopped?.evidence)).toContain(join(p.stateDir, "evidence"));
    // The first start after the pause is planned.
    expect(lastStart(p.stateDir).planned).toBe(true);
    await waitForClaimBy(p.stateDir, lastStart(p.stateDir).pid);
  });

  it("--dry-run (and status) see a refusal but record no reading", async () => {
    const p = program();
    await firstManager(p);
    const resets = epoch() + 600;
    refusalTranscript(join(projectDir(p), "a.jsonl"), `${REFUSAL}|${resets}`, new Date());
    const before = hashTree(p.readings);

    const dry = await tick(p.env, ["--dry-run"]);
    expect(dry.report.decision).toBe("pause");
    // The dry run describes the same effects a real tick carries out, the recording included.
    expect(dry.report.actions).toEqual([
      `would record the usage-limit refusal in ${join(projectDir(p), "a.jsonl")} as a seat reading`,
      `would pause until ${new Date(resets * 1000).toISOString()}`,
    ]);
    const status = sheepdog(["status", "--json"], { env: p.env });
    expect(JSON.parse(status.stdout).programs[0].decision).toBe("pause");
    expect(hashTree(p.readings)).toBe(before);
    expect(ofType(p.stateDir, "paused")).toHaveLength(0);

    // Control: a real tick records it.
    expect((await tick(p.env)).report.decision).toBe("pause");
    expect(hashTree(p.readings)).not.toBe(before);
  });
});
