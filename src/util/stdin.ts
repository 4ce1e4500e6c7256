// Hot commands never hang (DESIGN §18): the statusline and the hooks read at most 1 MB of stdin
// within 5 s. Claude Code gives each a timeout only when its settings say so, and a stdin that
// is never closed (or a payload without end) would otherwise keep one process per update alive.
//
// A pipe (what Claude Code gives) is read without blocking: on Linux synchronously, through a
// non-blocking description of its own; elsewhere, and for a socket or a terminal, through
// libuv's non-blocking handles, which a deadline can close. (A blocking read(2) left in the
// thread pool would be joined at exit, and the process would never end.) A file or another
// device ends by itself, and is read as it is.
import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";
import type { Readable } from "node:stream";

/** The most a hot command reads of its stdin. */
export const STDIN_MAX_BYTES = 1024 * 1024;

/** How long it waits for stdin's end (`SHEEPDOG_STDIN_WAIT_MS` for tests). */
export function stdinWaitMs(): number {
  const n = Number(process.env.SHEEPDOG_STDIN_WAIT_MS);
  return Number.isFinite(n) && n > 0 ? n : 5000;
}

/** stdin as text: up to its end, its first `max` bytes, or what came within `ms`, whichever is first. */
export async function readStdin(max = STDIN_MAX_BYTES, ms = stdinWaitMs()): Promise<string> {
  let stream: Readable;
  try {
    const st = fstatSync(0);
    if (st.isFIFO()) {
      const fast = readPipeNonBlocking(max, ms);
      if (fast !== null) return fast;
    }
    if (st.isFIFO() || st.isSocket()) {
      const { Socket } = await import("node:net");
      stream = new Socket({ fd: 0, readable: true, writable: false });
    } else if (st.isCharacterDevice() && (await import("node:tty")).isatty(0)) {
      const { ReadStream } = await import("node:tty");
      stream = new ReadStream(0);
    } else return readEnded(max);
  } catch {
    return ""; // no stdin at all (closed): nothing to read
  }
  return new Promise((done) => {
    const chunks: Buffer[] = [];
    let got = 0;
    const end = () => {
      clearTimeout(timer);
      stream.removeAllListeners("data");
      stream.destroy(); // the handle goes: nothing is left to keep the process alive
      done(Buffer.concat(chunks).toString("utf8", 0, Math.min(got, max)));
    };
    const timer = setTimeout(end, ms);
    stream.on("data", (chunk: Buffer) => {
      chunks.push(chunk);
      got += chunk.length;
      if (got >= max) end(); // the writer may have more: it is not waited for
    });
    stream.once("end", end);
    stream.once("error", end);
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
 * event loop to turn (the statusline's start-up, DESIGN §18). Null where that cannot be done.
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
    }
  } finally {
    closeSync(fd);
  }
  return buf.toString("utf8", 0, got);
}

/** A file (or a device such as /dev/null) read from fd 0 to its end or `max` bytes. */
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
