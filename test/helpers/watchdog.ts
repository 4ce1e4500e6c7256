import { type ChildProcess, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterEach } from "vitest";
import { livenessOf, machineId } from "../../src/process/identity.js";
import { CLI, type RunResult, sheepdog, sheepdogAsync, sleeper, tempProgram } from "./cli.js";
import { WaitTimeout, waitFor } from "./poll.js";

export const FAKE_MANAGER = resolve("test/fixtures/fake-manager.cjs");

/**
 * A program whose `command` launcher runs the fake manager with `flags`. The watchdog's
 * interval is long so no sleep-gap credit applies unless a test writes one.
 */
export function managerProgram(
  flags: string[] = [],
  watchdog: Record<string, unknown> = {},
  extra: Record<string, unknown> = {},
  name = "demo",
) {
  return tempProgram(name, {
    manager: {
      launcher: "command",
      command: [process.execPath, FAKE_MANAGER, ...flags, "{prompt}"],
      env: { SHEEPDOG_CLI: CLI },
    },
    watchdog: { interval: "1h", stale_after: "1h", claim_grace: "1h", ...watchdog },
    ...extra,
  });
}

export interface Event {
  at: string;
  type: string;
  [k: string]: unknown;
}

export function events(stateDir: string): Event[] {
  try {
    return readFileSync(join(stateDir, "journal.jsonl"), "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Event);
  } catch {
    return [];
  }
}

export const ofType = (stateDir: string, type: string) =>
  events(stateDir).filter((e) => e.type === type);

export interface TickProgram {
  program: string;
  root: string;
  decision: string;
  reason: string;
  facts: Record<string, unknown> | null;
  actions: string[];
  effects?: string[];
}

/** `sheepdog tick --json` for the test's program: the exit code and its one program's report. */
export function tick(
  env: NodeJS.ProcessEnv,
  args: string[] = [],
): RunResult & { report: TickProgram } {
  return withReport(sheepdog(["tick", "--json", ...args], { env }));
}

/** A `tick --json` run with its one program's report. */
function withReport(r: RunResult): RunResult & { report: TickProgram } {
  let report: TickProgram;
  try {
    report = (JSON.parse(r.stdout) as { programs: TickProgram[] }).programs[0] as TickProgram;
  } catch {
    throw new Error(`tick --json printed no JSON (exit ${r.code}): ${r.stdout}\n${r.stderr}`);
  }
  return { ...r, report };
}

/**
 * `tick` without blocking the test's event loop: for tests whose servers (the fake Anthropic
 * API, ntfy) live in the test process and must answer while the tick runs.
 */
export async function tickAsync(
  env: NodeJS.ProcessEnv,
  args: string[] = [],
): Promise<RunResult & { report: TickProgram }> {
  return withReport(await sheepdogAsync(["tick", "--json", ...args], { env }));
}

export function holder(stateDir: string): { pid: number; start_time: string } | null {
  try {
    return JSON.parse(readFileSync(join(stateDir, "claim", "holder.json"), "utf8"));
  } catch {
    return null;
  }
}

export function isAlive(pid: number, start_time: string): boolean {
  return livenessOf({ pid, start_time, machine_id: machineId() }) === "alive";
}

export { waitFor } from "./poll.js";

/**
 * A live process that stands in for a stuck manager: on SIGTERM it runs `onTerm` (by default
 * nothing: a tick must wait the whole grace). Resolves once its handler is in place (it says
 * so on stdout), so no TERM can come before it.
 */
export async function stuckProcess(onTerm = ""): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    [
      "-e",
      `process.on('SIGTERM', () => {${onTerm}}); process.stdout.write("ready\\n"); setInterval(() => {}, 1e6)`,
    ],
    { stdio: ["ignore", "pipe", "ignore"] },
  );
  let out = "";
  child.stdout?.on("data", (d) => {
    out += d;
  });
  await waitFor(
    "the stand-in's SIGTERM handler",
    () => out.includes("ready") || child.exitCode !== null,
    30_000,
    10,
  );
  if (!out.includes("ready")) throw new Error("the stand-in exited before it was ready");
  child.stdout?.removeAllListeners("data");
  child.stdout?.resume();
  return child;
}

/**
 * Waits until the manager a start launched has claimed (its `claimed` event is journaled, or it
 * holds the claim now): a manager that claims and hands over at once holds the claim only for
 * a moment, which a poll of holder.json can miss on a slow host.
 */
export async function waitForClaimBy(stateDir: string, pid: number): Promise<number> {
  await waitFor(
    `pid ${pid} to claim`,
    () => holder(stateDir)?.pid === pid || ofType(stateDir, "claimed").some((e) => e.pid === pid),
  );
  return pid;
}

/** Every manager a test's ticks started, stopped by exact pid + start time. */
export function killStarted(stateDir: string): void {
  for (const e of ofType(stateDir, "manager_started")) {
    if (typeof e.pid !== "number" || typeof e.start_time !== "string") continue;
    if (!isAlive(e.pid, e.start_time)) continue;
    try {
      process.kill(e.pid, "SIGCONT");
      process.kill(e.pid, "SIGKILL");
    } catch {
      // gone meanwhile
    }
  }
}

/** A hash of every file's name, mode and content under a folder (to prove nothing changed). */
export function hashTree(dir: string): string {
  const h = createHash("sha256");
  const walk = (d: string) => {
    if (!existsSync(d)) return;
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      const st = statSync(p);
      h.update(`${p}\0${st.mode}\0${st.mtimeMs}\0`);
      if (st.isDirectory()) walk(p);
      else h.update(readFileSync(p));
    }
  };
  h.update(`${existsSync(dir)}`);
  walk(dir);
  return h.digest("hex");
}

/**
 * Registers an afterEach that ends what each test started: the managers of the programs it made
 * (by exact pid) and the live stand-ins. `cleanups` takes anything else.
 */
export function cleanedUp() {
  const cleanups: (() => void)[] = [];
  afterEach(() => {
    for (const c of cleanups.splice(0)) c();
  });
  return {
    cleanups,
    program(...args: Parameters<typeof managerProgram>) {
      const p = managerProgram(...args);
      cleanups.push(() => killStarted(p.stateDir));
      return p;
    },
    live(seconds = 300) {
      const child = sleeper(seconds);
      cleanups.push(() => child.kill("SIGKILL"));
      return child;
    },
  };
}

/**
 * When a live holder's heartbeat goes stale: the later of its claim and its own last save, plus
 * `staleMs` (DESIGN §6's heartbeat age, with no gap credit). The test computes the moment from
 * the files the rule reads, instead of polling ticks until it comes.
 */
export function staleDue(stateDir: string, staleMs: number): number {
  const h = holder(stateDir) as { pid: number; claimed_at?: string } | null;
  let from = h?.claimed_at ? Date.parse(h.claimed_at) : Date.now();
  try {
    const beat = JSON.parse(readFileSync(join(stateDir, "heartbeat.json"), "utf8"));
    if (beat.pid === h?.pid) from = Math.max(from, Date.parse(beat.at));
  } catch {
    // no save yet: judged from the claim
  }
  return from + staleMs;
}

/** When the last start's claim grace ends: its `manager_started` time plus `graceMs`. */
export function graceDue(stateDir: string, graceMs: number): number {
  const last = ofType(stateDir, "manager_started").at(-1);
  return (last ? Date.parse(last.at) : Date.now()) + graceMs;
}

/**
 * Sleeps until `dueAt`, then ticks (dry run) until the decision is `decision`: one tick, as a
 * rule, or a few 250 ms apart when the host is slow. Returns the dry run's report.
 */
export async function dueFor(
  env: NodeJS.ProcessEnv,
  decision: string,
  dueAt: number,
  ms = 30_000,
): Promise<TickProgram> {
  const wait = dueAt - Date.now() + 50;
  if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  let last: TickProgram | null = null;
  try {
    return await waitFor(
      `${decision} once due`,
      () => {
        last = tick(env, ["--dry-run"]).report;
        return last.decision === decision && last;
      },
      ms,
      250,
    );
  } catch (err) {
    // Only the wait's own end is said so; a tick that failed says why.
    if (!(err instanceof WaitTimeout)) throw err;
    const r = last as TickProgram | null;
    throw new Error(
      `still ${r?.decision} (not ${decision}) ${ms} ms after it was due: ${r?.reason}`,
    );
  }
}
