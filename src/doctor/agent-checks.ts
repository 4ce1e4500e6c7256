// Doctor's checks of the manager's agent (DESIGN §17, §19), one entry per agent: a third agent
// adds its own here, as it adds its readers in src/agent/.
import type { AgentKind } from "../agent/kinds.js";
import { agentKindOf } from "../agent/kinds.js";
import type { Program } from "../config/load.js";
import type { Installed } from "../install/installed.js";
import { type Check, guarded } from "./check.js";
import { claudeChecks } from "./claude-checks.js";
import { codexChecks } from "./codex-checks.js";
import { permissionCheck } from "./permission-check.js";
import { hookChecks, statuslineCheck } from "./tool-checks.js";
import { trustCheck } from "./trust.js";

const CHECKS: Record<AgentKind, (program: Program, covering: Installed[]) => Check[]> = {
  claude: (program, covering) => [
    guarded(program.name, "statusline", () => statuslineCheck(program)),
    ...hookChecks(program),
    ...claudeChecks(program, covering),
    ...[trustCheck(program), permissionCheck(program)].filter((c): c is Check => c !== null),
  ],
  codex: (program) => codexChecks(program),
};

export function agentChecks(program: Program, covering: Installed[]): Check[] {
  return CHECKS[agentKindOf(program.config)](program, covering);
}
