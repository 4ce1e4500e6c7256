import { join, resolve } from "node:path";
import type { ProgramConfig } from "../config/schema.js";
import { expandHome } from "../util/fs.js";
import { homeDir } from "../util/lazy.js";

/**
 * The program's seat (its Claude config folder, DESIGN §4): `usage.seat`, else
 * `manager.env.CLAUDE_CONFIG_DIR`, else `$CLAUDE_CONFIG_DIR`, else `~/.claude`.
 */
export function seatOf(config: ProgramConfig, env = process.env): string {
  const chosen =
    config.usage.seat ??
    config.manager.env.CLAUDE_CONFIG_DIR ??
    env.CLAUDE_CONFIG_DIR ??
    join(homeDir(env), ".claude");
  return resolve(expandHome(chosen));
}
