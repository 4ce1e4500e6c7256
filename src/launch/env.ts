import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { ProgramContext } from "../config/context.js";
import { CONFIG_FILE } from "../config/files.js";
import { allProgramRoots } from "../config/resolve.js";
import { programFolderProblems } from "../state/dir.js";

/**
 * The variables that must never reach a manager: the one named by `page.ntfy.token_env` holds
 * the ntfy access token (DESIGN §8: never in a log), and an agent may echo its environment
 * into its transcript or manager.log.
 */
export function secretVars(program: ProgramContext): string[] {
  const name = program.config.page?.ntfy?.token_env;
  return [...new Set([...(name ? [name] : []), ...everyTokenEnv()])];
}

let others: string[] | null = null;
/**
 * The `page.ntfy.token_env` of every program under $SHEEPDOG_HOME (DESIGN §18): under `tick
 * --all` or `watch --all` one process starts every program's manager, and program A's manager
 * must not inherit program B's token either. Only folders that are the user's own count: a
 * planted program.json must not strip PATH from every manager. Read once a process.
 */
function everyTokenEnv(): string[] {
  if (others) return others;
  const found = new Set<string>();
  for (const root of allProgramRoots()) {
    if (programFolderProblems(root).length > 0) continue;
    try {
      const raw = JSON.parse(readFileSync(join(root, CONFIG_FILE), "utf8")) as {
        page?: { ntfy?: { token_env?: unknown } };
      };
      const name = raw?.page?.ntfy?.token_env;
      if (typeof name === "string" && name) found.add(name);
    } catch {
      // a program.json that does not parse names no variable
    }
  }
  others = [...found];
  return others;
}

function without<T extends Record<string, string | undefined>>(env: T, names: string[]): T {
  if (!names.some((n) => n in env)) return env;
  const out = { ...env };
  for (const n of names) delete out[n];
  return out;
}

/**
 * What a launcher adds to the manager's environment: `manager.env` from program.json and
 * `SHEEPDOG_PROGRAM=<root>`, so the manager's own sheepdog calls find their program. The page
 * token variable is left out even when `manager.env` names it.
 */
export function managerEnv(program: ProgramContext): Record<string, string> {
  return without(
    { ...program.config.manager.env, SHEEPDOG_PROGRAM: program.root },
    secretVars(program),
  );
}

/**
 * The environment a launcher runs anything in (the manager itself, tmux, herdr): this
 * process's, without the page token variable. A tmux or Herdr server keeps the environment
 * of the client that started it and hands it to every pane, so it must never see the token.
 */
export function launchEnv(
  program: ProgramContext,
  base: NodeJS.ProcessEnv = process.env,
): NodeJS.ProcessEnv {
  return without(base, secretVars(program));
}
