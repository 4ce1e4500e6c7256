// manager.log, bounded for a year unattended (DESIGN §16, §18): the command launcher's managers
// write their output there; each start writes a header line (time, pid, launcher, why) and,
// when this process sees the child end, its exit status, so a crash-loop page points at a log
// divided by start. At 10 MB it rotates: copied to manager.1.log (the one older file kept) and
// emptied in place, since a running manager keeps its descriptor (O_APPEND: it goes on at the
// new end).
import {
  closeSync,
  fstatSync,
  ftruncateSync,
  openSync,
  readSync,
  renameSync,
  rmSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import { isErrno, openRegular, openStateFile } from "../util/fs.js";
import { shownLine } from "../util/sanitize.js";
import { iso } from "../util/time.js";

export const MANAGER_LOG = "manager.log";
export const MANAGER_LOG_ROTATED = "manager.1.log";

/** Where it rotates: 10 MB (`SHEEPDOG_MANAGER_LOG_MAX_BYTES` for tests). */
function maxBytes(): number {
  const n = Number(process.env.SHEEPDOG_MANAGER_LOG_MAX_BYTES);
  return Number.isFinite(n) && n > 0 ? n : 10 * 1024 * 1024;
}

/** The log, opened to append (O_NOFOLLOW, created 0600), rotated first when it is full. */
export function openManagerLog(stateDir: string): number {
  rotateManagerLog(stateDir);
  return openStateFile(join(stateDir, MANAGER_LOG), "a");
}

/**
 * Rotates manager.log when it has reached its bound: its content becomes manager.1.log (the
 * older one goes), and it is emptied. Called before each start and by every tick, so even one
 * chatty manager's life is cut at the next tick. Returns whether it rotated.
 */
export function rotateManagerLog(stateDir: string): boolean {
  const path = join(stateDir, MANAGER_LOG);
  let src: number;
  try {
    src = openRegular(path, { noFollow: true });
  } catch (err) {
    if (isErrno(err, "ENOENT")) return false;
    throw err;
  }
  try {
    if (fstatSync(src).size < maxBytes()) return false;
    const tmp = join(stateDir, `.${MANAGER_LOG_ROTATED}.${process.pid}.tmp`);
    const dst = openSync(tmp, "wx", 0o600);
    try {
      const buf = Buffer.allocUnsafe(1024 * 1024);
      for (let at = 0; ; ) {
        const n = readSync(src, buf, 0, buf.length, at);
        if (n === 0) break;
        writeSync(dst, buf, 0, n);
        at += n;
      }
    } catch (err) {
      closeSync(dst);
      rmSync(tmp, { force: true });
      throw err;
    }
    closeSync(dst);
    renameSync(tmp, join(stateDir, MANAGER_LOG_ROTATED));
    const out = openStateFile(path, "a");
    try {
      ftruncateSync(out, 0);
    } finally {
      closeSync(out);
    }
    return true;
  } finally {
    closeSync(src);
  }
}

/** Appends one line of sheepdog's own to the log (a header or an exit status); never throws. */
export function logLine(fd: number | string, text: string, now = Date.now()): void {
  const line = `--- sheepdog ${iso(now)}: ${shownLine(text)} ---\n`;
  try {
    if (typeof fd === "number") writeSync(fd, line);
    else {
      const out = openStateFile(fd, "a");
      try {
        writeSync(out, line);
      } finally {
        closeSync(out);
      }
    }
  } catch {
    // the log is for people; a start or an exit never fails for it
  }
}

/** How a child ended, in words. */
export function exitText(pid: number, code: number | null, signal: string | null): string {
  if (signal) return `pid ${pid} ended by ${signal}`;
  return `pid ${pid} exited with status ${code ?? "unknown"}`;
}
