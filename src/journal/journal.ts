import { closeSync, fstatSync, renameSync, statSync, writeSync } from "node:fs";
import { join } from "node:path";
import { withMutex } from "../lock/dir-lock.js";
import { faultArmed, faultPoint } from "../util/fault-point.js";
import { isErrno, openRegular, openStateFile } from "../util/fs.js";
import { appendLines, readRange } from "../util/jsonl.js";
import { iso } from "../util/time.js";
import { checkEvent, type EventType, type JournalEvent, type NewEvent } from "./events.js";

export type { EventOf, EventType, JournalEvent, NewEvent } from "./events.js";

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
  event: NewEvent,
  now: number = Date.now(),
): JournalEvent {
  const full: JournalEvent = { at: iso(now), ...event } as JournalEvent;
  const path = join(stateDir, JOURNAL);
  rotateIfLarge(stateDir, path);
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

/**
 * Lines that are whole JSON but not events sheepdog knows (an old journal's, a hand edit's):
 * skipped, and counted here so the caller can say so. Torn lines (a writer killed mid-line) are
 * expected and skipped without a count.
 */
export interface SkippedLines {
  lines: number;
  /** The first one: file, line number and why (`journal.jsonl line 12: saved: pid: expected number`). */
  first: string | null;
}

export interface JournalRead {
  events: JournalEvent[];
  skipped: SkippedLines;
}

/**
 * Parses journal text: the lines that are events (events.ts), in order. `types` keeps only
 * those types (the rest are not checked: a hot reader pays only for what it reads).
 */
export function parseJournalText(
  text: string,
  opts: { file?: string; types?: ReadonlySet<EventType> } = {},
): JournalRead {
  const events: JournalEvent[] = [];
  const skipped: SkippedLines = { lines: 0, first: null };
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    if (!line.trim()) continue;
    let v: unknown;
    try {
      v = JSON.parse(line);
    } catch {
      continue; // torn
    }
    if (opts.types && !opts.types.has((v as { type?: unknown } | null)?.type as EventType))
      continue;
    const checked = checkEvent(v);
    if ("event" in checked) events.push(checked.event);
    else {
      skipped.lines++;
      skipped.first ??= `${opts.file ?? JOURNAL} line ${i + 1}: ${checked.problem}`;
    }
  }
  return { events, skipped };
}

/** The events of journal text (see parseJournalText), skipping what is not one. */
export function parseJournal(text: string): JournalEvent[] {
  return parseJournalText(text).events;
}

function readOne(stateDir: string, n: number, types?: ReadonlySet<EventType>): JournalRead {
  const file = rotatedName(n);
  let fd: number;
  try {
    fd = openRegular(join(stateDir, file), { noFollow: true });
  } catch (err) {
    if (isErrno(err, "ENOENT")) return { events: [], skipped: { lines: 0, first: null } };
    throw err;
  }
  try {
    return parseJournalText(tailText(fd, JOURNAL_READ_MAX), { file, types });
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

function addSkipped(to: SkippedLines, more: SkippedLines): void {
  to.lines += more.lines;
  to.first ??= more.first;
}

/**
 * The events the watchdog replays: the previous rotation and the current file, and what was
 * skipped in them. Rotation copies each type's newest event forward, so older state is never
 * lost. `types`: only these (a hot command that reads a few).
 */
export function readJournal(stateDir: string, types?: ReadonlySet<EventType>): JournalRead {
  const previous = readOne(stateDir, 1, types);
  const current = readOne(stateDir, 0, types);
  // Append order is the truth (a clock stepped back must not reorder a resume before its
  // stand-down). Each file's carried copies come from the file before it, so they go first:
  // the previous file's copies, then the current file's, then each file's own events.
  const carried = (events: JournalEvent[]) => events.filter((e) => e.carried);
  const own = (events: JournalEvent[]) => events.filter((e) => !e.carried);
  const skipped = { ...previous.skipped };
  addSkipped(skipped, current.skipped);
  return {
    events: [
      ...carried(previous.events),
      ...carried(current.events),
      ...own(previous.events),
      ...own(current.events),
    ],
    skipped,
  };
}

/** readJournal's events alone. */
export function readEvents(stateDir: string, types?: ReadonlySet<EventType>): JournalEvent[] {
  return readJournal(stateDir, types).events;
}

/** Every event kept, oldest first, without the copies made at rotation (for people). */
export function readAllJournal(stateDir: string): JournalRead {
  const events: JournalEvent[] = [];
  const skipped: SkippedLines = { lines: 0, first: null };
  for (let n = ROTATED_KEPT; n >= 0; n--) {
    const one = readOne(stateDir, n);
    for (const e of one.events) if (!e.carried) events.push(e);
    addSkipped(skipped, one.skipped);
  }
  return { events, skipped };
}

export function readAllEvents(stateDir: string): JournalEvent[] {
  return readAllJournal(stateDir).events;
}

/** `N lines of the journal are not events sheepdog knows; skipped (the first: …)`. */
export function describeSkipped(s: SkippedLines): string | null {
  if (s.lines === 0) return null;
  const lines = s.lines === 1 ? "1 line" : `${s.lines} lines`;
  return `the journal has ${lines} that ${s.lines === 1 ? "is" : "are"} not an event sheepdog knows, skipped (${s.first})`;
}

function rotateIfLarge(stateDir: string, path: string): void {
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
    let now: number;
    try {
      now = statSync(path).size;
    } catch (err) {
      if (isErrno(err, "ENOENT")) return;
      throw err;
    }
    if (now < maxBytes()) return;
    // The file about to drop out of replay's view hands its newest event of each type forward.
    const leaving = readOne(stateDir, 1).events;
    // Kept in append order, which is the truth (a clock stepped back must not put a start
    // before its intent): each by the place of its last occurrence.
    const newest = new Map<string, { e: JournalEvent; i: number }>();
    for (const [i, e] of leaving.entries()) newest.set(e.type, { e, i });
    for (let n = ROTATED_KEPT - 1; n >= 1; n--) {
      try {
        renameSync(join(stateDir, rotatedName(n)), join(stateDir, rotatedName(n + 1)));
      } catch (err) {
        if (!isErrno(err, "ENOENT")) throw err;
      }
    }
    renameSync(path, join(stateDir, rotatedName(1)));
    if (newest.size > 0) {
      const carried = [...newest.values()]
        .sort((a, b) => a.i - b.i)
        .map(({ e }) => JSON.stringify({ ...e, carried: true }))
        .join("\n");
      const fd = openStateFile(path, "a");
      try {
        writeSync(fd, `${carried}\n`);
      } finally {
        closeSync(fd);
      }
    }
  });
}
