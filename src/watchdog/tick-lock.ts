import { mkdirSync, readFileSync, renameSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { appendEvent } from "../journal/journal.js";
import { identityOf, livenessOf } from "../process/identity.js";
import { faultPoint } from "../util/fault-point.js";
import { isErrno, writeJsonAtomic } from "../util/fs.js";
import { iso } from "../util/time.js";

export const TICK_LOCK = "tick.lock";
const BREAK_LOCK = "tick.lock.break";
/** A lock directory still without holder.json is being made, unless it is older than this. */
const MAKING_MS = 30_000;

export interface TickLockHolder {
  pid: number;
  start_time: string;
  machine_id: string;
  at: string;
}

/** What is in `tick.lock/`, and whether it still holds. */
export type TickLockState =
  | { held: false }
  | { held: true; live: true; holder: TickLockHolder | null }
  | { held: true; live: false; holder: TickLockHolder | null; why: string };

/** Reads the lock without changing it (what dry-run and status use). */
export function readTickLock(
  stateDir: string,
  deadlineMs: number,
  now = Date.now(),
): TickLockState {
  const dir = join(stateDir, TICK_LOCK);
  let text: string;
  try {
    text = readFileSync(join(dir, "holder.json"), "utf8");
  } catch (err) {
    if (!isErrno(err, "ENOENT"))
      return { held: true, live: false, holder: null, why: "unreadable" };
    let mtime: number;
    try {
      mtime = statSync(dir).mtimeMs;
    } catch {
      return { held: false };
    }
    return now - mtime < MAKING_MS
      ? { held: true, live: true, holder: null }
      : { held: true, live: false, holder: null, why: "it has no holder.json" };
  }
  let holder: TickLockHolder;
  try {
    holder = JSON.parse(text) as TickLockHolder;
    if (typeof holder.pid !== "number" || typeof holder.start_time !== "string") throw new Error();
  } catch {
    return { held: true, live: false, holder: null, why: "its holder.json is not valid" };
  }
  const liveness = livenessOf(holder);
  if (liveness === "dead" || liveness === "reused")
    return { held: true, live: false, holder, why: `its tick (pid ${holder.pid}) is gone` };
  const age = now - Date.parse(holder.at);
  if (!(age < deadlineMs))
    return {
      held: true,
      live: false,
      holder,
      why: `it is older than the tick deadline (${Math.round(age / 1000)}s)`,
    };
  return { held: true, live: true, holder };
}

/**
 * Takes `tick.lock/` for this process, breaking a dead or overdue one (journaled). The lock
 * appears whole: holder.json is written in a private directory renamed over the empty one.
 * Returns null when a live tick holds it.
 */
export function acquireTickLock(
  stateDir: string,
  deadlineMs: number,
  now = Date.now(),
): { release(): void } | { held: TickLockState } {
  const me = identityOf(process.pid);
  if (!me) throw new Error("cannot read this process's own identity");
  const dir = join(stateDir, TICK_LOCK);
  const holder: TickLockHolder = { ...me, at: iso(now) };
  const take = (): boolean => {
    try {
      mkdirSync(dir, { mode: 0o700 });
    } catch (err) {
      if (isErrno(err, "EEXIST")) return false;
      throw err;
    }
    faultPoint("tick-lock.made");
    const tmp = join(stateDir, `.tick.lock.${process.pid}.${now}.tmp`);
    try {
      mkdirSync(tmp, { mode: 0o700 });
      writeJsonAtomic(join(tmp, "holder.json"), holder);
      renameSync(tmp, dir);
    } catch (err) {
      // A full disk: an empty tick.lock/ would read as "being made" and hold off ticks for 30 s.
      rmSync(tmp, { recursive: true, force: true });
      rmSync(dir, { recursive: true, force: true });
      throw err;
    }
    return true;
  };
  const lock = {
    release() {
      // Only our own lock is removed: a lock broken and retaken by another tick stays.
      const seen = readTickLock(stateDir, Number.POSITIVE_INFINITY);
      if (seen.held && seen.holder && seen.holder.pid === me.pid && seen.holder.at === holder.at)
        removeDir(stateDir, dir);
    },
  };
  if (take()) return lock;
  const seen = readTickLock(stateDir, deadlineMs, now);
  if (!seen.held) return take() ? lock : { held: readTickLock(stateDir, deadlineMs, now) };
  if (seen.live) return { held: seen };
  // Break it under a short lock, so two breakers never remove a lock a third has just taken.
  const breaker = join(stateDir, BREAK_LOCK);
  try {
    mkdirSync(breaker, { mode: 0o700 });
  } catch (err) {
    if (!isErrno(err, "EEXIST")) throw err;
    try {
      if (now - statSync(breaker).mtimeMs < MAKING_MS) return { held: seen };
      rmSync(breaker, { recursive: true, force: true });
      mkdirSync(breaker, { mode: 0o700 });
    } catch {
      return { held: seen };
    }
  }
  try {
    const again = readTickLock(stateDir, deadlineMs, now);
    if (again.held && again.live) return { held: again };
    if (again.held && JSON.stringify(again.holder) === JSON.stringify(seen.holder)) {
      removeDir(stateDir, dir);
      appendEvent(
        stateDir,
        {
          type: "tick_lock_broken",
          reason: seen.why,
          ...(seen.holder ? { pid: seen.holder.pid, locked_at: seen.holder.at } : {}),
        },
        now,
      );
    }
    return take() ? lock : { held: readTickLock(stateDir, deadlineMs, now) };
  } finally {
    rmSync(breaker, { recursive: true, force: true });
  }
}

function removeDir(stateDir: string, dir: string): void {
  const aside = join(stateDir, `.tick.lock.removed.${process.pid}.${Date.now()}`);
  try {
    renameSync(dir, aside);
  } catch (err) {
    if (isErrno(err, "ENOENT")) return;
    throw err;
  }
  rmSync(aside, { recursive: true, force: true });
}
