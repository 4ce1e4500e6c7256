import {
  closeSync,
  existsSync,
  fstatSync,
  linkSync,
  lstatSync,
  renameSync,
  rmSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { basename, join } from "node:path";
import { withMutex } from "../lock/dir-lock.js";
import { faultArmed, faultPoint } from "../util/fault-point.js";
import { isErrno, openRegular, openStateFile, writeFileAtomic } from "../util/fs.js";
import { appendLines, readRange } from "../util/jsonl.js";
import { iso } from "../util/time.js";
import { carriedForward, copiesInOrder, stayingOf } from "./carry.js";
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

/** A journal file's events, what was skipped in it, and which file it is; null when there is none. */
interface JournalFile extends JournalRead {
  dev: number;
  ino: number;
}

function readOne(path: string, types?: ReadonlySet<EventType>): JournalFile | null {
  const text = readOneText(path);
  if (!text) return null;
  const file = basename(path);
  return { ...parseJournalText(text.text, { file, types }), dev: text.dev, ino: text.ino };
}

const NONE: JournalRead = { events: [], skipped: { lines: 0, first: null } };

function addSkipped(to: SkippedLines, more: SkippedLines): void {
  to.lines += more.lines;
  to.first ??= more.first;
}

/** A journal file's text (its end, when too large to read whole); null when there is none. */
function readOneText(path: string): { text: string; dev: number; ino: number } | null {
  let fd: number;
  try {
    fd = openRegular(path, { noFollow: true });
  } catch (err) {
    if (isErrno(err, "ENOENT")) return null;
    throw err;
  }
  try {
    const st = fstatSync(fd);
    return { text: tailText(fd, st.size, JOURNAL_READ_MAX), dev: st.dev, ino: st.ino };
  } finally {
    closeSync(fd);
  }
}

/**
 * A file's text, or its last `max` bytes from the first line that starts in them (what a
 * file too large to read whole has at its end: the newest events).
 */
function tailText(fd: number, size: number, max: number): string {
  if (size <= max) return readRange(fd, 0, size);
  const text = readRange(fd, size - max, max);
  const nl = text.indexOf("\n");
  return nl < 0 ? "" : text.slice(nl + 1);
}

const same = (a: { dev: number; ino: number } | null, b: { dev: number; ino: number } | null) =>
  !!a && !!b && a.dev === b.dev && a.ino === b.ino;

/**
 * The two files replay reads: journal.1 and the current one. A rotation half-way (journal.1
 * already the current file under a second name, the next file not yet in place: see rotate)
 * reads as the rotation done, the next file in the current one's place. The current file is
 * opened first, so a rotation between the two opens reads that way too, never as the old
 * journal.1 with the new current file (which carries copies of it).
 */
function viewFiles(
  stateDir: string,
  types?: ReadonlySet<EventType>,
): { previous: JournalRead; current: JournalRead } {
  let current = readOne(join(stateDir, JOURNAL), types);
  const previous = readOne(join(stateDir, rotatedName(1)), types);
  if (same(current, previous)) {
    current = readOne(join(stateDir, NEXT), types) ?? readOne(join(stateDir, JOURNAL), types);
    if (same(current, previous)) current = null;
  }
  return { previous: previous ?? NONE, current: current ?? NONE };
}

/**
 * The events the watchdog replays: the previous rotation and the current file, and what was
 * skipped in them. Rotation copies what must stay in view to the head of the new file
 * (carry.ts), so older state is never lost. `types`: only these (a hot command that reads a few).
 */
export function readJournal(stateDir: string, types?: ReadonlySet<EventType>): JournalRead {
  const { previous, current } = viewFiles(stateDir, types);
  // Append order is the truth (a clock stepped back must not reorder a resume before its
  // stand-down). Each file's copies summarise what came before the file ahead of it, so they go
  // first: the previous file's (but for those the current file carried again), then the
  // current file's, then each file's own events.
  const carried = (events: JournalEvent[]) => events.filter((e) => e.carried);
  const own = (events: JournalEvent[]) => events.filter((e) => !e.carried);
  const skipped = { ...previous.skipped };
  addSkipped(skipped, current.skipped);
  return {
    events: [
      ...copiesInOrder(carried(previous.events), carried(current.events)),
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
  const read: JournalFile[] = [];
  for (let n = ROTATED_KEPT; n >= 0; n--) {
    const file = readOne(join(stateDir, rotatedName(n)));
    // one file under two names (a rotation stopped half-way) is shown once
    if (!file || read.some((f) => same(f, file))) continue;
    read.push(file);
    for (const e of file.events) if (!e.carried) events.push(e);
    addSkipped(skipped, file.skipped);
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

/** The next current file, written whole before it takes the name (DESIGN §2: temp, then rename). */
const NEXT = "journal.next.jsonl";
/** The current file's second name for a moment, renamed onto journal.1 (one atomic step). */
const HOLD = "journal.hold.jsonl";

/** Whether the file at `path` is a regular file at or past the size bound (no link is followed). */
function large(path: string): boolean {
  try {
    const st = lstatSync(path);
    return st.isFile() && st.size >= maxBytes();
  } catch {
    return false;
  }
}

function rotateIfLarge(stateDir: string, path: string, now: number): void {
  if (!large(path)) return;
  // One rotator at a time, under the one mutex mechanism (a holder that died is seen by its
  // pid, not guessed from an age); a writer that finds it busy appends to either file.
  withMutex(join(stateDir, "journal.rotate.lock"), () => {
    finishRotation(stateDir, now);
    // Another rotator may have just rotated it, before any appender made it large again.
    if (large(path)) rotate(stateDir, now);
  });
}

/**
 * Rotation, so that a kill at any step leaves the view (journal.1 and the current file, see
 * viewFiles) whole: the next file is written whole first (with what carry.ts says must stay in
 * view), journal.1 is kept as journal.2 by a second name, journal.1 becomes the current file
 * by a second name renamed onto it, and the next file is renamed onto the current name. Every
 * step is one rename or link; no name is ever missing, so no appender makes a file of its own.
 */
function rotate(stateDir: string, now: number): void {
  const at = (n: number) => join(stateDir, rotatedName(n));
  writeFileAtomic(join(stateDir, NEXT), forwardText(at(1), at(0), now));
  faultPoint("journal.rotate.next-written");
  // The older files move up one from below the first free name: a shift a kill stopped is
  // taken up where it stopped, never renaming a file onto one already moved.
  let top = 2;
  while (top < ROTATED_KEPT && existsSync(at(top))) top++;
  for (let n = top - 1; n >= 2; n--) {
    renameSync(at(n), at(n + 1));
    faultPoint(`journal.rotate.shifted.${n}`);
  }
  try {
    linkSync(at(1), at(2));
  } catch (err) {
    if (!isErrno(err, "ENOENT")) throw err; // the first rotation: no journal.1 yet
  }
  faultPoint("journal.rotate.kept");
  swap(stateDir);
}

/** journal.1 := the current file (a second name, renamed onto it), then the next file in place. */
function swap(stateDir: string): void {
  const hold = join(stateDir, HOLD);
  rmSync(hold, { force: true });
  linkSync(join(stateDir, JOURNAL), hold);
  renameSync(hold, join(stateDir, rotatedName(1)));
  faultPoint("journal.rotate.half-swapped");
  renameSync(join(stateDir, NEXT), join(stateDir, JOURNAL));
}

/**
 * The copies for the next file, as its text: from the file leaving view and the one staying
 * (its copies, and the incidents it opens and closes).
 */
function forwardText(leavingPath: string, stayingPath: string, now: number): string {
  const leaving = readOne(leavingPath)?.events ?? [];
  const staying = stayingOf(readOneText(stayingPath)?.text ?? "");
  return carriedForward(leaving, staying, now)
    .map((e) => `${JSON.stringify({ ...e, carried: true })}\n`)
    .join("");
}

/** Finishes a rotation a kill stopped half-way (see rotate), from the step it reached. */
function finishRotation(stateDir: string, now: number): void {
  const at = (n: number) => join(stateDir, rotatedName(n));
  const id = (path: string) => {
    try {
      const st = lstatSync(path);
      return { dev: st.dev, ino: st.ino };
    } catch {
      return null;
    }
  };
  rmSync(join(stateDir, HOLD), { force: true }); // a second name not yet renamed onto journal.1
  const next = existsSync(join(stateDir, NEXT));
  if (same(id(at(1)), id(at(0)))) {
    // Half-swapped: the view reads as rotated. The next file goes in place (made again from
    // journal.2, the file that left, should it be gone).
    if (!next) writeFileAtomic(join(stateDir, NEXT), forwardText(at(2), at(1), now));
    renameSync(join(stateDir, NEXT), at(0));
  } else if (same(id(at(2)), id(at(1)))) {
    // journal.1 kept as journal.2 by a second name; the swap not begun.
    if (next) swap(stateDir);
    else unlinkSync(at(2));
  } else if (next) {
    rmSync(join(stateDir, NEXT), { force: true }); // written, and nothing after: made again
  }
}
