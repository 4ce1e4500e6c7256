// Hot commands never hang (DESIGN §18): the statusline and the hooks read at most 1 MB of stdin
// within 5 s. Claude Code gives each a timeout only when its settings say so, and a stdin that
// is never closed (or a payload without end) would otherwise keep one process per update alive.
//
// What they read is one JSON object: reading stops at its end, so a writer that never closes
// costs nothing. Claude Code (2.1.332) hands them a socket; Node's own stream for one costs a
// statusline ~5 ms of start-up (net and its streams), so it is read with the thread pool's
// read(2), and a pipe on Linux without blocking at all. A read still pending at the deadline
// (a writer that sent half an object and stays) cannot be taken back: the thread pool is
// joined at exit, so once the command has answered, the process ends itself by SIGTERM
// (endIfStdinPending).
import { closeSync, constants, fstatSync, openSync, read, readSync } from "node:fs";
import { envMs } from "./env-ms.js";

/** The most a hot command reads of its stdin. */
export const STDIN_MAX_BYTES = 1024 * 1024;

/** How long it waits for the rest of its input (`SHEEPDOG_STDIN_WAIT_MS` for tests). */
export function stdinWaitMs(): number {
  return envMs("SHEEPDOG_STDIN_WAIT_MS", 5000);
}

// Shared by every bundle in the process (the StopFailure hook is a bundle of its own).
const PENDING = Symbol.for("sheepdog.stdin.pending");
type Flagged = typeof globalThis & { [PENDING]?: boolean };

/**
 * Ends the process when a read of stdin is still pending (it would never exit by itself): call
 * it once the command has given its answer. SIGTERM, as any supervisor would end it.
 */
export function endIfStdinPending(): void {
  if ((globalThis as Flagged)[PENDING]) process.kill(process.pid, "SIGTERM");
}

/** Whether `buf[0, got)` is a whole JSON value (cheap first: it must end in `}` or `]`). */
function wholeJson(buf: Buffer, got: number): boolean {
  let end = got - 1;
  while (
    end >= 0 &&
    (buf[end] === 0x20 || buf[end] === 0x0a || buf[end] === 0x0d || buf[end] === 0x09)
  )
    end--;
  if (end < 0 || (buf[end] !== 0x7d && buf[end] !== 0x5d)) return false;
  try {
    JSON.parse(buf.toString("utf8", 0, got));
    return true;
  } catch {
    return false;
  }
}

/**
 * stdin as text: up to its end, a whole JSON value, its first `max` bytes, or what came within
 * `ms`, whichever is first.
 */
export async function readStdin(max = STDIN_MAX_BYTES, ms = stdinWaitMs()): Promise<string> {
  let st: ReturnType<typeof fstatSync>;
  try {
    st = fstatSync(0);
  } catch {
    return ""; // no stdin at all (closed): nothing to read
  }
  if (st.isFIFO()) {
    const fast = readPipeNonBlocking(max, ms);
    if (fast !== null) return fast;
  }
  if (st.isFile()) return readEnded(max); // a file ends by itself
  // a socket, a terminal, a device (/dev/null ends at once; a terminal waits for a person)
  return readWithDeadline(max, ms);
}

/** The thread pool's reads, one after the other, until the end, a whole value, `max` or `ms`. */
function readWithDeadline(max: number, ms: number): Promise<string> {
  return new Promise((done) => {
    const buf = Buffer.allocUnsafe(max);
    let got = 0;
    let over = false;
    const end = (pending: boolean) => {
      if (over) return;
      over = true;
      clearTimeout(timer);
      if (pending) (globalThis as Flagged)[PENDING] = true;
      done(buf.toString("utf8", 0, got));
    };
    const timer = setTimeout(() => end(true), ms);
    const next = () =>
      read(0, buf, got, max - got, null, (err, n) => {
        if (over) return;
        // a non-blocking descriptor with nothing yet (a terminal, another process's flags)
        if (err && (err as NodeJS.ErrnoException).code === "EAGAIN")
          return void setTimeout(next, 5);
        if (err || n === 0) return end(false);
        got += n;
        if (got >= max || wholeJson(buf, got)) return end(false);
        next();
      });
    next();
  });
}

const pause = new Int32Array(new SharedArrayBuffer(4));

/** A monotonic clock in ms (process.hrtime: `performance`'s first use costs a start-up 1–2 ms). */
function monotonicMs(): number {
  const [s, ns] = process.hrtime();
  return s * 1000 + ns / 1e6;
}

/**
 * Linux: the pipe opened anew through /proc/self/fd/0 is a description of its own, so it can be
 * non-blocking (O_NONBLOCK) and read synchronously with a deadline: no module to load and no
 * event loop to turn. Null where that cannot be done.
 */
function readPipeNonBlocking(max: number, ms: number): string | null {
  let fd: number;
  try {
    fd = openSync("/proc/self/fd/0", constants.O_RDONLY | constants.O_NONBLOCK);
  } catch {
    return null; // not Linux, or no /proc
  }
  const buf = Buffer.allocUnsafe(max);
  let got = 0;
  const deadline = monotonicMs() + ms; // a clock step must not stretch it
  try {
    while (got < max) {
      let n: number;
      try {
        n = readSync(fd, buf, got, max - got, null);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "EAGAIN") break;
        if (monotonicMs() > deadline) break; // the writer never closed: what came is all
        Atomics.wait(pause, 0, 0, 2);
        continue;
      }
      if (n === 0) break;
      got += n;
      if (wholeJson(buf, got)) break;
    }
  } finally {
    closeSync(fd);
  }
  return buf.toString("utf8", 0, got);
}

/** A file read from fd 0 to its end or `max` bytes. */
function readEnded(max: number): string {
  const buf = Buffer.allocUnsafe(max);
  let got = 0;
  try {
    while (got < max) {
      const n = readSync(0, buf, got, max - got, null);
      if (n === 0) break;
      got += n;
    }
  } catch {
    // EAGAIN and the like: what was read is what there is
  }
  return buf.toString("utf8", 0, got);
}
