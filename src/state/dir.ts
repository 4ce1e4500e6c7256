import { closeSync, openSync, writeSync } from "node:fs";
import { join } from "node:path";
import { CONFIG_FILE, PROMPT_FILE } from "../config/files.js";
import { isErrno } from "../util/fs.js";
import { checkOwned, ensureOwnedDir, type PathProblem, pathProblem } from "./owned.js";

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

/** What refuses an unsafe state directory says first (DESIGN §9). */
export const UNSAFE_STATE = "unsafe state directory";
/** What refuses a program folder (or its program.json or prompt) that is not the user's says. */
export const UNSAFE_PROGRAM = "unsafe program folder";

/** `.sheepdog/.gitignore`: the state folder never leaves the host (DESIGN §18). */
export const STATE_GITIGNORE = ".gitignore";

export function stateDirOf(root: string): string {
  return join(root, STATE_DIR);
}

/** Why a state directory is unsafe to use, or null when it is fine or absent. */
export function stateDirProblem(dir: string): PathProblem | null {
  return pathProblem(dir, "dir", { chmod: "700" });
}

/** Refuses (exit 2) to use an unsafe state directory. Returns its path. */
export function checkStateDir(root: string): string {
  const dir = stateDirOf(root);
  checkOwned(dir, "dir", UNSAFE_STATE, { chmod: "700" });
  return dir;
}

/**
 * Why a program folder may not be used (DESIGN §18): the folder, its program.json and its
 * prompt (MANAGER-PROMPT.md, when there is one) must each be the user's, not writable by others,
 * and not a link. Empty when all is well; one lstat each.
 */
export function programFolderProblems(root: string): PathProblem[] {
  return [
    pathProblem(root, "dir"),
    pathProblem(join(root, CONFIG_FILE), "file"),
    pathProblem(join(root, PROMPT_FILE), "file"),
  ].filter((p): p is PathProblem => p !== null);
}

/** Refuses (exit 2) a program folder that is not the user's own. */
export function checkProgramFolder(root: string): void {
  checkOwned(root, "dir", UNSAFE_PROGRAM);
  checkOwned(join(root, CONFIG_FILE), "file", UNSAFE_PROGRAM);
  checkOwned(join(root, PROMPT_FILE), "file", UNSAFE_PROGRAM);
}

/**
 * The state directory, created 0700 if absent (with its `.gitignore` of `*`, so a ledger repo
 * that is the program root never commits it), refused if unsafe.
 */
export function ensureStateDir(root: string): string {
  const dir = stateDirOf(root);
  ensureOwnedDir(dir, UNSAFE_STATE, { chmod: "700" });
  ensureGitignore(dir);
  return dir;
}

/** Writes `.gitignore` (`*`) into a state folder that has none (older ones, too). */
function ensureGitignore(dir: string): void {
  let fd: number;
  try {
    fd = openSync(join(dir, STATE_GITIGNORE), "wx", 0o600);
  } catch (err) {
    if (isErrno(err, "EEXIST")) return;
    throw err;
  }
  try {
    writeSync(fd, "# sheepdog's state never leaves this host (DESIGN §18)\n*\n");
  } finally {
    closeSync(fd);
  }
}
