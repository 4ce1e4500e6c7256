// The one torn-line-tolerant JSONL reader and appender (the journal and the usage readings):
// appenders write one line per write(2) on an O_APPEND file, so concurrent writers never
// interleave; a line torn by a crash is skipped by readers and ended by the next appender.
import { fstatSync, ftruncateSync, readSync, writeSync } from "node:fs";
import type * as z from "zod/mini";

const pause = new Int32Array(new SharedArrayBuffer(4));

/** Blocks this thread for `ms` (for the few waits that must stay synchronous). */
export function sleepSync(ms: number): void {
  Atomics.wait(pause, 0, 0, ms);
}

/** `length` bytes of an open file from `start`, as text (fewer at its end). */
export function readRange(fd: number, start: number, length: number): string {
  const buf = Buffer.allocUnsafe(length);
  let got = 0;
  while (got < length) {
    const n = readSync(fd, buf, got, length - got, start + got);
    if (n === 0) break;
    got += n;
  }
  return buf.toString("utf8", 0, got);
}

/**
 * The whole JSON values of `text`'s lines, in order or last line first. A torn line (its writer
 * died mid-write; the next line starts on a fresh one) is skipped, as is a blank one.
 */
export function* jsonValues(text: string, fromEnd = false): Generator<unknown> {
  const lines = text.split("\n");
  for (let k = 0; k < lines.length; k++) {
    const line = lines[fromEnd ? lines.length - 1 - k : k] as string;
    if (!line.trim()) continue;
    let v: unknown;
    try {
      v = JSON.parse(line);
    } catch {
      continue;
    }
    yield v;
  }
}

/** The lines of `text` that are whole JSON values `isValid` accepts; the rest (torn) skipped. */
export function parseJsonl<T>(text: string, isValid: (v: unknown) => v is T): T[] {
  const out: T[] = [];
  for (const v of jsonValues(text)) if (isValid(v)) out.push(v);
  return out;
}

/**
 * The lines of `text` that are whole JSON values `schema` accepts, as it parsed them (its
 * fallbacks filled in, its unknown keys dropped); torn lines and records it refuses are skipped.
 */
export function parseJsonlWith<T>(text: string, schema: z.ZodMiniType<T>): T[] {
  const out: T[] = [];
  for (const v of jsonValues(text)) {
    const parsed = schema.safeParse(v);
    if (parsed.success) out.push(parsed.data);
  }
  return out;
}

/** How long the size must hold still before a last line without its newline counts as torn. */
const TORN_AFTER_MS = 100;

/**
 * Whether the file ends in a torn line. A last byte that is not a newline is either a torn
 * line (its writer died) or another appender's write seen half-way: the size grows page by
 * page during one write(2), and on a loaded host that writer may be off the CPU for tens of
 * milliseconds in between. So the size must hold still for TORN_AFTER_MS before the line counts
 * as torn; otherwise concurrent appenders would sprinkle empty lines. A torn line comes only
 * from a crash, so the wait is paid almost never.
 */
export function endsInTornLine(fd: number): boolean {
  const last = Buffer.alloc(1);
  let size = fstatSync(fd).size;
  const started = Date.now();
  let stillSince = started;
  for (;;) {
    if (size === 0) return false;
    readSync(fd, last, 0, 1, size - 1);
    if (last[0] === 0x0a) return false;
    // Still for long enough, or never ending in a newline however long we look.
    if (Date.now() - stillSince >= TORN_AFTER_MS || Date.now() - started > 2000) return true;
    sleepSync(5);
    const now = fstatSync(fd).size;
    if (now !== size) {
      size = now;
      stillSince = Date.now();
    }
  }
}

/**
 * Appends `lines` (each ending in a newline) to an O_APPEND file as one write(2), after a
 * newline of its own when the file ends in a torn line. A full disk that takes part of the write
 * and says nothing is taken back and reported, so nothing is left half-written.
 */
export function appendLines(
  fd: number,
  path: string,
  lines: string,
  lost = "the line is not written",
): number {
  const bytes = Buffer.from(`${endsInTornLine(fd) ? "\n" : ""}${lines}`);
  const before = fstatSync(fd).size;
  const written = writeSync(fd, bytes);
  if (written < bytes.length) {
    ftruncateSync(fd, before);
    throw Object.assign(new Error(`ENOSPC: no space left on device, write to ${path} (${lost})`), {
      code: "ENOSPC",
    });
  }
  return written;
}
