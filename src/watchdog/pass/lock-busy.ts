import { appendEvent, type JournalEvent } from "../../journal/journal.js";
import type { LockBusy } from "../../lock/dir-lock.js";

/**
 * The action a pass reports when a claim it meant to break was behind a busy mutex: the pass did
 * not do its restart, so a watcher looks again soon (resident/program-watch.ts wakeOf).
 */
export const CLAIM_NOT_BROKEN = "claim not broken: ";

/**
 * `lock_busy {lock, pid?, since?, reason}`: a pass could not act because a lock was held (by
 * a live process; one left by a killed process is broken at once). The one way it is written.
 */
export function lockBusyEvent(busy: LockBusy, reason: string) {
  return {
    type: "lock_busy" as const,
    lock: busy.lock,
    ...(busy.holder ? { pid: busy.holder.pid } : {}),
    ...(busy.holder?.at ? { since: busy.holder.at } : {}),
    reason,
  };
}

export function journalLockBusy(
  stateDir: string,
  busy: LockBusy,
  reason: string,
  now = Date.now(),
): JournalEvent {
  return appendEvent(stateDir, lockBusyEvent(busy, reason), now);
}
