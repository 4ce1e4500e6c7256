// What runs is the user's own (DESIGN §18): a program folder, its program.json and prompt, the
// host state dir and its bin/ shim, the unit and plist folders and every state folder are used
// only when they are the user's, not writable by anyone else, and not links. One lstat each.
// Every folder sheepdog makes gets 0700 whatever the umask; one that is there already is
// narrowed (a command that makes things) or refused (a command that uses them), never widened.
import { chmodSync, lstatSync, mkdirSync, type Stats } from "node:fs";
import { dirname } from "node:path";
import { UsageError } from "../errors.js";
import { isErrno } from "../util/fs.js";

/** What is wrong with a path, in words, and the one command that fixes it. */
export interface PathProblem {
  path: string;
  /** `<path>: is world-writable (mode 0777)`: names the path. */
  problem: string;
  fix: string;
}

/** A path sheepdog refused to use: exit 2, naming it, why and the fix. */
export class UnsafePath extends UsageError {
  constructor(
    readonly what: string,
    readonly detail: PathProblem,
  ) {
    super(`${what}: ${detail.problem}; fix with: ${detail.fix}`);
  }
}

function octal(mode: number): string {
  return (mode & 0o7777).toString(8).padStart(4, "0");
}

/** The one lstat: the path's stats, null when absent. */
export function lstatOrNull(path: string): Stats | null {
  try {
    return lstatSync(path);
  } catch (err) {
    if (isErrno(err, "ENOENT") || isErrno(err, "ENOTDIR")) return null;
    throw err;
  }
}

/**
 * Why `path` may not be used (a symbolic link, not a `kind`, another user's, writable by group
 * or others), or null when it is fine or absent. `dirFix` is the chmod a folder of sheepdog's
 * own takes (700); a person's folder or file keeps its read bits (go-w).
 */
export function pathProblem(
  path: string,
  kind: "dir" | "file",
  opts: { chmod?: string } = {},
): PathProblem | null {
  let st: Stats | null;
  try {
    st = lstatOrNull(path);
  } catch (err) {
    return {
      path,
      problem: `${path}: cannot inspect: ${(err as Error).message}`,
      fix: `check ${path}`,
    };
  }
  return st ? statsProblem(path, st, kind, opts) : null;
}

/** pathProblem on stats already taken. */
export function statsProblem(
  path: string,
  st: Stats,
  kind: "dir" | "file",
  opts: { chmod?: string } = {},
): PathProblem | null {
  const noun = kind === "dir" ? "directory" : "regular file";
  if (st.isSymbolicLink())
    return {
      path,
      problem: `${path}: is not a ${noun} (a symbolic link); sheepdog uses nothing through a link`,
      fix: `replace the link with the real ${kind === "dir" ? "folder" : "file"} (or name the real path)`,
    };
  if (kind === "dir" ? !st.isDirectory() : !st.isFile())
    return { path, problem: `${path}: is not a ${noun}`, fix: `move ${path} out of the way` };
  const uid = process.getuid?.();
  if (uid !== undefined && st.uid !== uid)
    return {
      path,
      problem: `${path}: owned by uid ${st.uid}, not by you (uid ${uid}); sheepdog uses only what is yours`,
      fix: `remove ${path} if it is not yours, else: chown $(id -un) ${path}`,
    };
  const mode = st.mode & 0o777;
  if (mode & 0o022) {
    const who = mode & 0o002 ? "world-writable" : "group-writable";
    return {
      path,
      problem: `${path}: is ${who} (mode ${octal(mode)})`,
      fix: `chmod ${opts.chmod ?? "go-w"} ${path}`,
    };
  }
  return null;
}

/** Refuses (exit 2) a path that is not the user's own; `what` says what it was for. */
export function checkOwned(
  path: string,
  kind: "dir" | "file",
  what: string,
  opts: { chmod?: string } = {},
): void {
  const problem = pathProblem(path, kind, opts);
  if (problem) throw new UnsafePath(what, problem);
}

/**
 * A folder of sheepdog's own, made 0700 (its missing parents too) whatever the umask. One that
 * exists is used when it is the user's and no link; writable by others, it is narrowed to
 * `mode & ~0o022` with `narrow`, else refused. Returns whether it was made.
 */
export function ensureOwnedDir(
  path: string,
  what: string,
  opts: { narrow?: boolean; chmod?: string } = {},
): boolean {
  const st = lstatOrNull(path);
  if (st) {
    const problem = statsProblem(path, st, "dir", opts);
    if (!problem) return false;
    const loose = st.isDirectory() && !st.isSymbolicLink() && st.uid === process.getuid?.();
    if (!(opts.narrow && loose)) throw new UnsafePath(what, problem);
    chmodSync(path, st.mode & 0o7755); // narrowed: write taken from the others, nothing added
    return false;
  }
  const parent = dirname(path);
  if (parent !== path && !lstatOrNull(parent)) makeDirs(parent);
  try {
    mkdirSync(path, { mode: 0o700 });
  } catch (err) {
    if (!isErrno(err, "EEXIST")) throw err;
    return ensureOwnedDir(path, what, opts); // made meanwhile: judged like any other
  }
  chmodSync(path, 0o700); // the umask may have narrowed mkdir's mode further; this is the mode
  return true;
}

/**
 * mkdir -p with 0700, one level at a time. (Node's recursive mkdir can spin forever where a
 * parent refuses creation with ENOENT, as under /proc.)
 */
function makeDirs(dir: string): void {
  const parent = dirname(dir);
  if (parent === dir) throw new Error(`cannot create ${dir}`);
  if (!lstatOrNull(parent)) makeDirs(parent);
  try {
    mkdirSync(dir, { mode: 0o700 });
    chmodSync(dir, 0o700);
  } catch (err) {
    if (!isErrno(err, "EEXIST")) throw err;
  }
}
