import { closeSync, fstatSync, readSync } from "node:fs";
import { join } from "node:path";
import { type EventType, PASS_EVENT_TYPES } from "../journal/events.js";
import { openRegular } from "../util/fs.js";
import { jsonValues } from "../util/jsonl.js";

/**
 * Events only a watchdog pass writes (`by: "pass"` in journal/events.ts). A pass's own journal
 * lines must not trigger another pass (a page that keeps failing would otherwise run passes
 * back to back); anything else in the journal was written by a manager or a person (a
 * hand-over, a finish, a resume), or is not known, and does.
 */
export const OWN_EVENT_TYPES: ReadonlySet<EventType> = PASS_EVENT_TYPES;

function isOwn(v: unknown): boolean {
  const type = (v as { type?: unknown } | null)?.type;
  return typeof type === "string" && OWN_EVENT_TYPES.has(type as EventType);
}

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
    fd = openRegular(join(stateDir, "journal.jsonl"), { noFollow: true });
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
    // Every whole line counts, checked or not: one a reader would skip wakes a pass for nothing.
    for (const v of jsonValues(buf.toString("utf8")))
      if (!isOwn(v)) return { relevant: true, mark: now };
    return { relevant: false, mark: now };
  } finally {
    closeSync(fd);
  }
}
