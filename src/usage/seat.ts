import { agentFor } from "../agent/index.js";
import type { ProgramConfig } from "../config/schema.js";

/**
 * The program's seat (DESIGN §4, §19): `usage.seat`, else the agent's own config folder as
 * the manager sees it (Claude: `manager.env.CLAUDE_CONFIG_DIR`, `$CLAUDE_CONFIG_DIR`,
 * `~/.claude`; Codex: `manager.env.CODEX_HOME`, `$CODEX_HOME`, `~/.codex`).
 */
export function seatOf(config: ProgramConfig, env = process.env): string {
  return agentFor(config).seat(config, env);
}
