import type { ProgramContext } from "../config/context.js";

/**
 * What a launcher adds to the manager's environment: `manager.env` from program.json and
 * `SHEEPDOG_PROGRAM=<root>`, so the manager's own sheepdog calls find their program.
 */
export function managerEnv(program: ProgramContext): Record<string, string> {
  return { ...program.config.manager.env, SHEEPDOG_PROGRAM: program.root };
}
