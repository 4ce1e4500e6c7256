import { closeSync, fstatSync, readSync } from "node:fs";
import { openRegular } from "../util/fs.js";
import { readRange } from "../util/jsonl.js";

/** How much of the file one read takes, walking backwards. */
const CHUNK = 64 * 1024;
/** Lines up to this size are read whole; bigger ones only at their two ends. */
export const LINE_CAP = 2 * 1024 * 1024;
/** How much of each end of an over-sized line is read. */
const END_KEEP = 64 * 1024;

/**
 * One line of a JSONL file, seen from the end. `text` is the whole line when it fits under
 * LINE_CAP; an over-sized line (a 20 MB tool result) comes with only its `head` and `tail`,
 * so walking past it never holds it in memory.
 */
export interface BackLine {
  /** The whole line, or null when it was over-sized. */
  text: string | null;
  /** The line's first bytes (up to 64 KB), as text. */
  head: string;
  /** The line's last bytes (up to 64 KB; the whole line when it fits), as text. */
  tail: string;
  /** False for the file's last line when it does not end in a newline (maybe torn). */
  terminated: boolean;
}

/**
 * Yields the lines of a file from the last to the first (empty lines skipped), reading 64 KB
 * chunks backwards with positioned reads: finding something near the end costs the same in a
 * 1 MB file as in a 500 MB one. Only newline positions are searched; each line is then read
 * once (whole, or its two ends when over-sized). Stop iterating to stop reading.
 */
export function* linesBackward(path: string): Generator<BackLine> {
  // never a blocking open: a FIFO or a device given as a transcript is refused (DESIGN §18)
  const fd = openRegular(path);
  try {
    const size = fstatSync(fd).size;
    const buf = Buffer.allocUnsafe(CHUNK);
    let lineEnd = size; // exclusive end of the line being delimited
    let terminated = true;
    if (size > 0) {
      readSync(fd, buf, 0, 1, size - 1);
      if (buf[0] === 0x0a) lineEnd = size - 1;
      else terminated = false;
    }
    const emit = (start: number): BackLine | null => {
      const length = lineEnd - start;
      const wasTerminated = terminated;
      terminated = true;
      if (length <= 0) return null;
      if (length <= LINE_CAP) {
        const text = readRange(fd, start, length);
        return { text, head: text.slice(0, END_KEEP), tail: text, terminated: wasTerminated };
      }
      return {
        text: null,
        head: readRange(fd, start, END_KEEP),
        tail: readRange(fd, lineEnd - END_KEEP, END_KEEP),
        terminated: wasTerminated,
      };
    };
    let pos = lineEnd;
    while (pos > 0) {
      const len = Math.min(CHUNK, pos);
      pos -= len;
      readSync(fd, buf, 0, len, pos);
      let end = len;
      for (;;) {
        const nl = end > 0 ? buf.lastIndexOf(0x0a, end - 1) : -1;
        if (nl < 0) break; // the line goes on in the previous chunk
        const line = emit(pos + nl + 1);
        lineEnd = pos + nl;
        if (line) yield line;
        end = nl;
      }
    }
    const line = emit(0);
    if (line) yield line;
  } finally {
    closeSync(fd);
  }
}
