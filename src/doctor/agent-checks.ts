// Doctor's checks of the manager's agent (DESIGN §17, §19), one entry per agent: a third agent
// adds its own here, as it adds its readers in src/agent/.
import type { AgentKind } from "../agent/kinds.js";
import { agentKindOf } from "../agent/kinds.js";
import type { Program } from "../config/load.js";
import type { Check } from "./check.js";
import { codexChecks } from "./codex-checks.js";
import { hookChecks, statuslineCheck } from "./tool-checks.js";
import { trustCheck } from "./trust.js";

const CHECKS: Record<AgentKind, (program: Program) => Check[]> = {
  claude: (program) => [
    statuslineCheck(program),
    ...hookChecks(program),
    ...[trustCheck(program)].filter((c): c is Check => c !== null),
  ],
  codex: codexChecks,
};

export function agentChecks(program: Program): Check[] {
  return CHECKS[agentKindOf(program.config)](program);
}
