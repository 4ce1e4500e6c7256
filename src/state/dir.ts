import { chmodSync, lstatSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { UsageError } from "../errors.js";
import { isErrno } from "../util/fs.js";

export const STATE_DIR = ".sheepdog";

export const stateFiles = {
  claim: "claim",
  holder: join("claim", "holder.json"),
  heartbeat: "heartbeat.json",
  journal: "journal.jsonl",
  lastTick: "last-tick.json",
  tickLock: "tick.lock",
  managerLog: "manager.log",
  evidence: "evidence",
} as const;

export function stateDirOf(root: string): string {
  return join(root, STATE_DIR);
}

/** Why a state directory is unsafe to use, or null when it is fine or absent. */
export function stateDirProblem(dir: string): string | null {
  let st: ReturnType<typeof lstatSync>;
  try {
    st = lstatSync(dir);
  } catch (err) {
    if (isErrno(err, "ENOENT")) return null;
    return `${dir}: cannot inspect: ${(err as Error).message}`;
  }
  if (!st.isDirectory())
    return `${dir}: is not a directory${st.isSymbolicLink() ? " (a symbolic link)" : ""}`;
  const uid = process.getuid?.();
  if (uid !== undefined && st.uid !== uid) {
    return `${dir}: owned by uid ${st.uid}, not by you (uid ${uid}); sheepdog state must be yours alone`;
  }
  const mode = st.mode & 0o777;
  if (mode & 0o022) {
    const who = mode & 0o002 ? "world-writable" : "group-writable";
    return `${dir}: is ${who} (mode ${mode.toString(8).padStart(4, "0")}); fix with: chmod 700 ${dir}`;
  }
  return null;
}

/** Refuses (exit 2) to use an unsafe state directory. Returns its path. */
export function checkStateDir(root: string): string {
  const dir = stateDirOf(root);
  const problem = stateDirProblem(dir);
  if (problem) throw new UsageError(`unsafe state directory: ${problem}`);
  return dir;
}

/** The state directory, created 0700 if absent, refused if unsafe. */
export function ensureStateDir(root: string): string {
  const dir = checkStateDir(root);
  try {
    mkdirSync(dir, { mode: 0o700 });
    chmodSync(dir, 0o700); // the umask may have narrowed or widened mkdir's mode
  } catch (err) {
    if (!isErrno(err, "EEXIST")) throw err;
  }
  return dir;
}
