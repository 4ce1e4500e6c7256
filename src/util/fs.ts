import { closeSync, fsyncSync, openSync, renameSync, rmSync, writeSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { faultPoint } from "./fault-point.js";

let tmpCounter = 0;
/** Unique within this process, unlikely to collide across processes (the pid is beside it). */
function uniqueSuffix(): string {
  tmpCounter++;
  return `${Date.now().toString(36)}${tmpCounter}${Math.random().toString(36).slice(2, 8)}`;
}

/**
 * Writes a whole file by write-temp-then-rename, so a reader sees the old or the new
 * content and never half of either.
 */
export function writeFileAtomic(path: string, data: string, mode = 0o600): void {
  const tmp = join(dirname(path), `.${basename(path)}.${process.pid}.${uniqueSuffix()}.tmp`);
  const fd = openSync(tmp, "wx", mode);
  try {
    try {
      writeSync(fd, data);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    faultPoint("write.before-rename");
    renameSync(tmp, path);
  } catch (err) {
    // A full disk fails the write: the temp file must not stay behind, holding what space is left.
    rmSync(tmp, { force: true });
    throw err;
  }
}

export function writeJsonAtomic(path: string, value: unknown, mode = 0o600): void {
  writeFileAtomic(path, `${JSON.stringify(value, null, 2)}\n`, mode);
}

/** Expands a leading `~` to the home directory. */
export function expandHome(path: string, home = process.env.HOME ?? ""): string {
  if (path === "~") return home;
  if (path.startsWith("~/")) return join(home, path.slice(2));
  return path;
}

export function isErrno(err: unknown, code: string): boolean {
  return typeof err === "object" && err !== null && (err as { code?: string }).code === code;
}
