// A light program for the lock tests (test/faults-kill-lock-*.test.ts): its manager is `sleep`
// under the command launcher (it starts in a millisecond and never claims), and the test makes
// the claim itself for a stand-in process it then kills, so every tick has a dead holder to
// break and a manager to start: the work that passes through every lock.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync } from "node:fs";
import { readClaim, tryAcquire } from "../../src/claim/claim.js";
import { identityOf, type ProcessIdentity } from "../../src/process/identity.js";
import { CLI, sleeper, tempProgram } from "./cli.js";
import { armFaultPoint } from "./fault-point.js";
import { lockedOut } from "./invariants.js";
import { killStarted, type TickProgram, tick, waitFor } from "./watchdog.js";

export interface LockWorld {
  root: string;
  stateDir: string;
  env: NodeJS.ProcessEnv;
}

export function lockWorld(extraEnv: NodeJS.ProcessEnv = {}): LockWorld {
  const p = tempProgram("locks", {
    manager: { launcher: "command", command: ["sleep", "600"] },
    watchdog: {
      interval: "1h",
      stale_after: "1h",
      claim_grace: "1h",
      crash_loop: { starts: 100_000, within: "1h" },
    },
  });
  mkdirSync(p.stateDir, { mode: 0o700 });
  return { root: p.root, stateDir: p.stateDir, env: { ...p.env, ...extraEnv } };
}

/** The claim held by a process that has just died (reaped: the OS says it is gone). */
export async function deadClaim(w: LockWorld): Promise<void> {
  const now = readClaim(w.stateDir);
  if (now.held && now.liveness !== "alive") return;
  const s = now.held ? standIns.get(now.holder?.pid ?? -1) : await standIn();
  if (!s)
    throw new Error(`the claim is held by pid ${now.held && now.holder?.pid}, not a stand-in`);
  if (!now.held && !tryAcquire(w.stateDir, s.id).ok)
    throw new Error("the claim was taken meanwhile");
  const gone = new Promise((r) => s.child.once("exit", r));
  s.child.kill("SIGKILL");
  await gone;
  standIns.delete(s.id.pid);
}

/** Live stand-ins by pid: only these ever hold a claim in these worlds. */
const standIns = new Map<number, { child: ChildProcess; id: ProcessIdentity }>();

/** A live process to hold a claim, with its identity. */
export async function standIn(): Promise<{ child: ChildProcess; id: ProcessIdentity }> {
  const child = sleeper(600);
  const id = await waitFor(
    "the stand-in's identity",
    () => identityOf(child.pid as number),
    10_000,
    5,
  );
  const s = { child, id };
  standIns.set(id.pid, s);
  return s;
}

/** The claim is not held by a dead (or pid-reused, or unreadable) holder. */
export function deadClaimLeft(w: LockWorld): string | null {
  const c = readClaim(w.stateDir);
  if (!c.held || c.liveness === "alive") return null;
  return c.holder
    ? `the claim of dead pid ${c.holder.pid} is still there`
    : `an unreadable claim is still there (${"problem" in c ? c.problem : ""})`;
}

/**
 * Runs `sheepdog ARGS` armed to stop at fault point `point` (src/util/fault-point.ts) and
 * SIGKILLs it there. Returns false when it finished without reaching it.
 */
export async function killedAt(w: LockWorld, args: string[], point: string): Promise<boolean> {
  const armed = armFaultPoint(point);
  const child = spawn(process.execPath, [CLI, ...args], {
    env: { ...process.env, ...w.env, ...armed.env },
    stdio: "ignore",
  });
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  if (!(await armed.reached(child))) return false;
  child.kill("SIGKILL");
  await exited;
  return true;
}

/** Runs `sheepdog ARGS` and SIGKILLs it after `ms` (false: it ended first). */
export async function killedAfter(w: LockWorld, args: string[], ms: number): Promise<boolean> {
  const child = spawn(process.execPath, [CLI, ...args], {
    env: { ...process.env, ...w.env },
    stdio: "ignore",
  });
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  const ended = await Promise.race([
    exited.then(() => true),
    new Promise<false>((r) => setTimeout(() => r(false), ms)),
  ]);
  if (ended) return false;
  child.kill("SIGKILL");
  await exited;
  return true;
}

/** One clean tick: its report, and whether a lock kept it from acting. */
export function cleanTick(w: LockWorld): {
  code: number;
  report: TickProgram;
  lockedOut: boolean;
  stderr: string;
} {
  const r = tick(w.env);
  return { code: r.code, report: r.report, lockedOut: lockedOut(r.report), stderr: r.stderr };
}

/** Ends the managers the world's ticks started (exact pids from the journal). */
export function endWorld(w: LockWorld): void {
  killStarted(w.stateDir);
}

/** Ends every stand-in still alive (a test that failed half-way). */
export function endStandIns(): void {
  for (const s of standIns.values()) s.child.kill("SIGKILL");
  standIns.clear();
}
