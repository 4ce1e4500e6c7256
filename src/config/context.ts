import { existsSync } from "node:fs";
import { join } from "node:path";
import { UsageError } from "../errors.js";
import { checkProgramFolder, checkStateDir, ensureStateDir } from "../state/dir.js";
import {
  type ConfigInvalid,
  invalidOf,
  LAST_VALID,
  lastValidText,
  rememberValid,
} from "./last-valid.js";
import { ConfigMissing, loadProgramText, type Program, programOf } from "./load.js";
import { allProgramRoots, resolveProgramRoot } from "./resolve.js";

/** A loaded program and its (checked) state directory. */
export interface ProgramContext extends Program {
  stateDir: string;
  /**
   * Set when program.json is invalid and the program runs on its last valid config (only for
   * `lastValid` opens: tick, watch, save, status, doctor).
   */
  configInvalid?: ConfigInvalid;
}

/**
 * Loads the program a command concerns and checks its state directory. Config is validated
 * before any state is created, so a bad config never leaves half-written state.
 */
export function openProgram(
  flag: string | undefined,
  opts: { create?: boolean; takesAll?: boolean; lastValid?: boolean } = {},
): ProgramContext {
  const root = resolveProgramRoot(flag, process.cwd(), process.env, { takesAll: opts.takesAll });
  return openProgramAt(root, opts);
}

export function openProgramAt(
  root: string,
  opts: { create?: boolean; lastValid?: boolean } = {},
): ProgramContext {
  // What runs is the user's own (DESIGN §18): a folder, program.json or prompt another user
  // could have written is refused before a byte of it is read.
  checkProgramFolder(root);
  let loaded: ReturnType<typeof loadProgramText>;
  try {
    loaded = loadProgramText(root);
  } catch (err) {
    if (!opts.lastValid || !(err instanceof UsageError) || err instanceof ConfigMissing) throw err;
    return onLastValid(root, err);
  }
  const stateDir = opts.create ? ensureStateDir(root) : checkStateDir(root);
  // Kept by the commands that write state; a read-only one (status, doctor) changes nothing.
  if (opts.create && existsSync(stateDir)) rememberValid(stateDir, loaded.text);
  return { ...loaded.program, stateDir };
}

/**
 * program.json does not load: go on with the copy the last good load kept (DESIGN §16), or fail
 * as before when there is none (a program that never had a valid config fails loudly).
 */
function onLastValid(root: string, err: UsageError): ProgramContext {
  const stateDir = checkStateDir(root);
  const text = lastValidText(stateDir);
  if (text === null) throw err;
  let program: Program;
  try {
    program = programOf(root, text, join(stateDir, LAST_VALID));
  } catch {
    throw err; // the copy no longer loads either (an older version's schema): the real error
  }
  return { ...program, stateDir, configInvalid: invalidOf(program.configPath, err.message) };
}

/** `--all` or `--program`/the default program, as a list of roots. */
export function selectRoots(flag: string | undefined, all: boolean | undefined): string[] {
  if (all && flag !== undefined)
    throw new UsageError("--all and --program cannot be used together");
  if (all) return allProgramRoots();
  return [resolveProgramRoot(flag, process.cwd(), process.env, { takesAll: true })];
}
