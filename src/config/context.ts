import { UsageError } from "../errors.js";
import { checkStateDir, ensureStateDir } from "../state/dir.js";
import { loadProgram, type Program } from "./load.js";
import { allProgramRoots, resolveProgramRoot } from "./resolve.js";

/** A loaded program and its (checked) state directory. */
export interface ProgramContext extends Program {
  stateDir: string;
}

/**
 * Loads the program a command concerns and checks its state directory. Config is validated
 * before any state is created, so a bad config never leaves half-written state.
 */
export function openProgram(
  flag: string | undefined,
  opts: { create?: boolean; takesAll?: boolean } = {},
): ProgramContext {
  const root = resolveProgramRoot(flag, process.cwd(), process.env, { takesAll: opts.takesAll });
  return openProgramAt(root, opts);
}

export function openProgramAt(root: string, opts: { create?: boolean } = {}): ProgramContext {
  const program = loadProgram(root);
  const stateDir = opts.create ? ensureStateDir(root) : checkStateDir(root);
  return { ...program, stateDir };
}

/** `--all` or `--program`/the default program, as a list of roots. */
export function selectRoots(flag: string | undefined, all: boolean | undefined): string[] {
  if (all && flag !== undefined)
    throw new UsageError("--all and --program cannot be used together");
  if (all) return allProgramRoots();
  return [resolveProgramRoot(flag, process.cwd(), process.env, { takesAll: true })];
}
