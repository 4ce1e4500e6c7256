import { join } from "node:path";
import * as z from "zod/mini";
import { appendEvent } from "../../journal/journal.js";
import {
  LockBusy,
  placeWhole,
  readHolderFile,
  releaseIfMine,
  removeAside,
  withMutex,
} from "../../lock/dir-lock.js";
import { identityOf, livenessOf } from "../../process/identity.js";
import { parseJsonWith } from "../../util/json-file.js";
import { iso } from "../../util/time.js";

export const TICK_LOCK = "tick.lock";
export const TICK_LOCK_BREAK = "tick.lock.break";
const BREAK_LOCK = TICK_LOCK_BREAK;
/**
 * A live holder's lock is broken only this long after its deadline: a tick ends itself at its
 * deadline (journals, pages, exits), so one still alive a minute later is hung (stopped, say).
 * Breaking it at the deadline itself could let a second tick act beside one still finishing.
 */
export const BREAK_AFTER_DEADLINE_MS = 60_000;

/** tick.lock/holder.json, validated with zod (DESIGN §1). */
const holderSchema = z.object({
  pid: z.number().check(z.int(), z.positive()),
  start_time: z.string(),
  machine_id: z.string(),
  at: z.string(),
});
export type TickLockHolder = z.infer<typeof holderSchema>;

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
  const file = readHolderFile(stateDir, TICK_LOCK);
  if (file.state === "absent") return { held: false };
  // A lock appears whole (dir-lock.ts): one without a readable holder is never being made.
  if (file.state === "unreadable")
    return {
      held: true,
      live: false,
      holder: null,
      why: `it has no readable holder (${file.problem})`,
    };
  const holder = parseJsonWith(file.text, holderSchema);
  if (!holder)
    return { held: true, live: false, holder: null, why: "its holder.json is not valid" };
  const liveness = livenessOf(holder);
  if (liveness === "dead" || liveness === "reused")
    return { held: true, live: false, holder, why: `its tick (pid ${holder.pid}) is gone` };
  const age = now - Date.parse(holder.at);
  if (!(age < deadlineMs + BREAK_AFTER_DEADLINE_MS))
    return {
      held: true,
      live: false,
      holder,
      why: `it is older than the tick deadline (${Math.round(age / 1000)}s)`,
    };
  return { held: true, live: true, holder };
}

/** Whether `tick.lock/` is held by this very tick (pid and the `at` it wrote). */
function isMine(stateDir: string, pid: number, at: string): boolean {
  const seen = readTickLock(stateDir, Number.POSITIVE_INFINITY);
  return seen.held && seen.holder !== null && seen.holder.pid === pid && seen.holder.at === at;
}

/** What taking the tick lock gives: the lock, a live tick's hold, or a busy breakers' mutex. */
export type TickLockTaken =
  | { release(): void }
  | { held: TickLockState & { held: true; live: true } }
  | { busy: LockBusy };

/**
 * Takes `tick.lock/` for this process, breaking a dead, unreadable or overdue one (journaled).
 * The lock appears whole (dir-lock's placeWhole). Returns `{ held }` when a live tick holds
 * it, `{ busy }` when the mutex its breakers share is held (by a live process: one left by a
 * killed process is broken at once).
 */
export function acquireTickLock(
  stateDir: string,
  deadlineMs: number,
  now = Date.now(),
): TickLockTaken {
  const me = identityOf(process.pid);
  if (!me) throw new Error("cannot read this process's own identity");
  const holder: TickLockHolder = { ...me, at: iso(now) };
  const take = (): boolean => placeWhole(stateDir, TICK_LOCK, holder, "take");
  const lock = {
    release() {
      // Only our own lock, compared and removed under the breakers' mutex.
      releaseIfMine(stateDir, TICK_LOCK, BREAK_LOCK, () => isMine(stateDir, me.pid, holder.at));
    },
  };
  if (take()) return lock;
  let seen = readTickLock(stateDir, deadlineMs, now);
  // Held by this very process: left by an earlier pass whose release met a busy mutex (a
  // process runs one pass of a program at a time, so it is not in use). Without this a
  // watcher locked itself, and the timer, out until the lock aged past the deadline.
  if (seen.held && seen.holder?.pid === me.pid && seen.holder.start_time === me.start_time)
    seen = { held: true, live: false, holder: seen.holder, why: "this process left it" };
  if (!seen.held) return take() ? lock : heldNow(stateDir, deadlineMs, now);
  if (seen.live) return { held: seen };
  const stale = seen;
  // Break it under the mutex, so two breakers never remove a lock a third has just taken.
  const out = withMutex(
    join(stateDir, BREAK_LOCK),
    (): TickLockTaken => {
      const again = readTickLock(stateDir, deadlineMs, now);
      const mineAgain = again.held && again.holder?.pid === me.pid;
      if (again.held && again.live && !mineAgain) return { held: again };
      if (again.held && JSON.stringify(again.holder) === JSON.stringify(stale.holder)) {
        removeAside(stateDir, TICK_LOCK);
        appendEvent(
          stateDir,
          {
            type: "tick_lock_broken",
            reason: stale.why,
            ...(stale.holder ? { pid: stale.holder.pid, locked_at: stale.holder.at } : {}),
          },
          now,
        );
      }
      return take() ? lock : heldNow(stateDir, deadlineMs, now);
    },
    { waitMs: MUTEX_WAIT_MS },
  );
  return out instanceof LockBusy ? { busy: out } : out;
}

/** A breaker's critical section is a read and two renames: a pass waits this long for one. */
const MUTEX_WAIT_MS = 2_000;

/** After a lost race for the lock: whoever took it first (a live tick), or busy when unreadable. */
function heldNow(stateDir: string, deadlineMs: number, now: number): TickLockTaken {
  const seen = readTickLock(stateDir, deadlineMs, now);
  if (seen.held && seen.live) return { held: seen };
  // Taken, and its taker gone, in the instant between: the next pass finds it settled.
  return {
    busy: new LockBusy(TICK_LOCK, null, { problem: seen.held ? seen.why : "it came and went" }),
  };
}

/** Removes `tick.lock/` only when this very process (pid and start time) holds it. */
export function releaseOwnTickLock(stateDir: string): void {
  const me = identityOf(process.pid);
  if (!me) return;
  releaseIfMine(stateDir, TICK_LOCK, BREAK_LOCK, () => {
    const seen = readTickLock(stateDir, Number.POSITIVE_INFINITY);
    return (
      seen.held &&
      seen.holder !== null &&
      seen.holder.pid === me.pid &&
      seen.holder.start_time === me.start_time
    );
  });
}
