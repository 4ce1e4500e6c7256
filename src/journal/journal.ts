import { closeSync, fstatSync, renameSync, statSync, writeSync } from "node:fs";
import { join } from "node:path";
import { withMutex } from "../lock/dir-lock.js";
import { faultArmed, faultPoint } from "../util/fault-point.js";
import { isErrno, openRegular, openStateFile } from "../util/fs.js";
import { appendLines, parseJsonl, readRange } from "../util/jsonl.js";
import { iso } from "../util/time.js";
import { carriedForward, copiesInOrder, stayingOf } from "./carry.js";

/** One journal line: every event has `at` (ISO-8601 UTC) and `type`. */
export interface JournalEvent {
  at: string;
  type: string;
  /** Set on an event copied forward when the journal rotated. */
  carried?: boolean;
  [field: string]: unknown;
}

export const JOURNAL = "journal.jsonl";
const ROTATED_KEPT = 5;
/**
 * The most of one journal file read (DESIGN §18): a file larger than this (a rotation that
 * could not happen, a hand-made file) is read from its end, so no command meets V8's string
 * limit (512 MB) and a program is never wedged by its own journal.
 */
export const JOURNAL_READ_MAX = 64 * 1024 * 1024;

function maxBytes(): number {
  const fromEnv = Number(process.env.SHEEPDOG_JOURNAL_MAX_BYTES);
  return Number.isFinite(fromEnv) && fromEnv > 0 ? fromEnv : 10 * 1024 * 1024;
}

export function rotatedName(n: number): string {
  return n === 0 ? JOURNAL : `journal.${n}.jsonl`;
}

/**
 * Appends one event as one write(2) to an O_APPEND file, so concurrent appenders never
 * interleave. If the file does not end in a newline (a torn line), the event starts on a new one.
 */
export function appendEvent(
  stateDir: string,
  event: { type: string; [field: string]: unknown },
  now: number = Date.now(),
): JournalEvent {
  const full: JournalEvent = { at: iso(now), ...event } as JournalEvent;
  const path = join(stateDir, JOURNAL);
  rotateIfLarge(stateDir, path, now);
  const fd = openStateFile(path, "a+");
  try {
    const line = `${JSON.stringify(full)}\n`;
    if (faultArmed(`journal.torn.${event.type}`)) {
      // Test hook: the writer dies half-way through its line.
      writeSync(fd, line.slice(0, line.length >> 1));
      faultPoint(`journal.torn.${event.type}`);
    }
    appendLines(fd, path, line, "the event is not journaled");
  } finally {
    closeSync(fd);
  }
  return full;
}

/** Parses JSONL, skipping lines that are not whole JSON objects (a torn last line above all). */
export function parseJournal(text: string): JournalEvent[] {
  return parseJsonl(text, isEvent);
}

function isEvent(v: unknown): v is JournalEvent {
  const e = v as JournalEvent;
  return !!e && typeof e === "object" && typeof e.type === "string" && typeof e.at === "string";
}

function readOne(path: string): JournalEvent[] {
  return parseJournal(readOneText(path));
}

/** A journal file's text (its end, when too large to read whole); "" when there is none. */
function readOneText(path: string): string {
  let fd: number;
  try {
    fd = openRegular(path, { noFollow: true });
  } catch (err) {
    if (isErrno(err, "ENOENT")) return "";
    throw err;
  }
  try {
    return tailText(fd, JOURNAL_READ_MAX);
  } finally {
    closeSync(fd);
  }
}

/**
 * A file's text, or its last `max` bytes from the first line that starts in them (what a
 * file too large to read whole has at its end: the newest events).
 */
function tailText(fd: number, max: number): string {
  const size = fstatSync(fd).size;
  if (size <= max) return readRange(fd, 0, size);
  const text = readRange(fd, size - max, max);
  const nl = text.indexOf("\n");
  return nl < 0 ? "" : text.slice(nl + 1);
}

/**
 * The events the watchdog replays: the previous rotation and the current file. Rotation copies
 * what must stay in view to the head of the new file (carry.ts), so older state is never lost.
 */
export function readEvents(stateDir: string): JournalEvent[] {
  const previous = readOne(join(stateDir, rotatedName(1)));
  const current = readOne(join(stateDir, JOURNAL));
  // Append order is the truth (a clock stepped back must not reorder a resume before its
  // stand-down). Each file's copies summarise what came before the file ahead of it, so they go
  // first: the previous file's (but for those the current file carried again), then the
  // current file's, then each file's own events.
  const carried = (events: JournalEvent[]) => events.filter((e) => e.carried);
  const own = (events: JournalEvent[]) => events.filter((e) => !e.carried);
  return [...copiesInOrder(carried(previous), carried(current)), ...own(previous), ...own(current)];
}

/** Every event kept, oldest first, without the copies made at rotation (for people). */
export function readAllEvents(stateDir: string): JournalEvent[] {
  const out: JournalEvent[] = [];
  for (let n = ROTATED_KEPT; n >= 0; n--) {
    const events = readOne(join(stateDir, rotatedName(n)));
    for (const e of events) if (!e.carried) out.push(e);
  }
  return out;
}

function rotateIfLarge(stateDir: string, path: string, now: number): void {
  let size: number;
  try {
    size = statSync(path).size;
  } catch {
    return;
  }
  if (size < maxBytes()) return;
  // One rotator at a time, under the one mutex mechanism (a holder that died is seen by its
  // pid, not guessed from an age); a writer that finds it busy appends to either file.
  withMutex(join(stateDir, "journal.rotate.lock"), () => {
    // Another rotator may have just renamed it, before any appender made it again.
    let sizeNow: number;
    try {
      sizeNow = statSync(path).size;
    } catch (err) {
      if (isErrno(err, "ENOENT")) return;
      throw err;
    }
    if (sizeNow < maxBytes()) return;
    // What must stay in view (carry.ts), from the file leaving it and the one staying, each
    // read from its end when it is too large to read whole; the files themselves are renamed.
    const forward = forwardText(join(stateDir, rotatedName(1)), path, now);
    for (let n = ROTATED_KEPT - 1; n >= 1; n--) {
      try {
        renameSync(join(stateDir, rotatedName(n)), join(stateDir, rotatedName(n + 1)));
      } catch (err) {
        if (!isErrno(err, "ENOENT")) throw err;
      }
    }
    renameSync(path, join(stateDir, rotatedName(1)));
    if (forward) {
      const fd = openStateFile(path, "a");
      try {
        writeSync(fd, forward);
      } finally {
        closeSync(fd);
      }
    }
  });
}

/**
 * The copies for the next file, as its text: from the file leaving view and the one staying
 * (its copies, and the incidents it opens and closes).
 */
function forwardText(leavingPath: string, stayingPath: string, now: number): string {
  const leaving = readOne(leavingPath);
  const staying = stayingOf(readOneText(stayingPath));
  return carriedForward(leaving, staying, now)
    .map((e) => `${JSON.stringify({ ...e, carried: true })}\n`)
    .join("");
}
