import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import { join } from "node:path";
import { parseJournal } from "../journal/journal.js";

/**
 * Events only a watchdog pass writes. A pass's own journal lines must not trigger another pass
 * (a page that keeps failing would otherwise run passes back to back); anything else in the
 * journal was written by a manager or a person (a hand-over, a finish, a resume) and does.
 */
export const OWN_EVENT_TYPES: ReadonlySet<string> = new Set([
  "manager_started",
  "manager_start_failed",
  "manager_stopped",
  "claim_broken",
  "paged",
  "page_failed",
  "tick_failed",
  "tick_lock_broken",
  "stood_down",
  "heartbeat_failed",
  "incident_opened",
  "incident_closed",
  "remote_accepted",
  "remote_refused",
  "remote_poll_failed",
]);

/**
 * Whether a changed path under a program's root can change what a pass decides. What a pass
 * writes for itself (last-tick.json, tick.lock, evidence, the manager's log) and temp files of
 * atomic writes never can. Paths are relative to the program root.
 */
export function relevantPath(rel: string): boolean {
  const parts = rel.split(/[\\/]/);
  if (parts[0] === "program.json") return parts.length === 1;
  if (parts[0] !== ".sheepdog") return false;
  const name = parts[1];
  if (name === undefined) return true; // the state directory itself (made or removed)
  if (name.endsWith(".tmp") || name.startsWith(".")) return false;
  if (name === "claim") return parts.length <= 3;
  return name === "heartbeat.json" || name === "journal.jsonl";
}

/** Where the watcher has read the journal up to. */
export interface JournalMark {
  ino: number;
  size: number;
}

/**
 * Reads what was appended to the journal since `mark` and says whether any of it is not a
 * pass's own event. A rotated or truncated journal counts as relevant (it cannot be compared).
 */
export function journalChange(
  stateDir: string,
  mark: JournalMark | null,
): { relevant: boolean; mark: JournalMark | null } {
  let fd: number;
  try {
    fd = openSync(join(stateDir, "journal.jsonl"), "r");
  } catch {
    return { relevant: mark !== null, mark: null };
  }
  try {
    const st = fstatSync(fd);
    const now = { ino: st.ino, size: st.size };
    if (!mark || mark.ino !== st.ino || st.size < mark.size)
      return { relevant: mark !== null || st.size > 0, mark: now };
    if (st.size === mark.size) return { relevant: false, mark: now };
    const buf = Buffer.alloc(st.size - mark.size);
    readSync(fd, buf, 0, buf.length, mark.size);
    const events = parseJournal(buf.toString("utf8"));
    return { relevant: events.some((e) => !OWN_EVENT_TYPES.has(e.type)), mark: now };
  } finally {
    closeSync(fd);
  }
}
