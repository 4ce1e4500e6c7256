import {
  closeSync,
  constants,
  fstatSync,
  fsyncSync,
  lstatSync,
  openSync,
  renameSync,
  rmSync,
  writeSync,
} from "node:fs";
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
  refuseLink(path);
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

/** A state file that is a link (DESIGN §18): sheepdog reads and writes no state through one. */
export class LinkRefused extends Error {
  readonly code = "ELOOP";
  constructor(readonly path: string) {
    super(`${path}: is a symbolic link; sheepdog writes no state through a link (remove it)`);
  }
}

/** Throws LinkRefused when `path` is a symbolic link (absent is fine: it is about to be made). */
function refuseLink(path: string): void {
  try {
    if (lstatSync(path).isSymbolicLink()) throw new LinkRefused(path);
  } catch (err) {
    if (err instanceof LinkRefused) throw err;
  }
}

const { O_APPEND, O_CREAT, O_NOFOLLOW, O_NONBLOCK, O_RDONLY, O_RDWR, O_WRONLY } = constants;

/** A file that is not one (a FIFO, a device, a folder) where a state file or transcript should be. */
export class NotRegularFile extends Error {
  readonly code = "ENOTREG";
  constructor(readonly path: string) {
    super(
      `${path}: is not a regular file (a FIFO, a device or a folder); sheepdog reads and writes only regular files`,
    );
  }
}

/**
 * Opens a state file to append to (`a`) or to read and append (`a+`), creating it 0600:
 * O_NOFOLLOW (a link swapped in for a usage file must not make the statusline append to
 * ~/.bashrc) and O_NONBLOCK (a FIFO planted there must not hang a hot command), then only a
 * regular file is kept.
 */
export function openStateFile(path: string, how: "a" | "a+"): number {
  const flags = (how === "a" ? O_WRONLY : O_RDWR) | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK;
  return keepRegular(path, () => openSync(path, flags, 0o600));
}

/**
 * Opens a file to read without ever blocking on it (O_NONBLOCK: a FIFO given as a transcript
 * has no writer), and keeps it only when it is a regular file. `noFollow` for state files.
 */
export function openRegular(path: string, opts: { noFollow?: boolean } = {}): number {
  const flags = O_RDONLY | O_NONBLOCK | (opts.noFollow ? O_NOFOLLOW : 0);
  return keepRegular(path, () => openSync(path, flags));
}

function keepRegular(path: string, open: () => number): number {
  let fd: number;
  try {
    fd = open();
  } catch (err) {
    if (isErrno(err, "ELOOP")) throw new LinkRefused(path);
    if (isErrno(err, "ENXIO")) throw new NotRegularFile(path); // a FIFO with no reader
    throw err;
  }
  if (!fstatSync(fd).isFile()) {
    closeSync(fd);
    throw new NotRegularFile(path);
  }
  return fd;
}
