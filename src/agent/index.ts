// The agent a program's manager runs, chosen once from `manager.agent` (DESIGN §19).
import type { Agent } from "./agent.js";
import { claude } from "./claude/agent.js";
import { codex } from "./codex/agent.js";
import { type AgentKind, agentKindOf } from "./kinds.js";

const AGENTS: Record<AgentKind, Agent> = { claude, codex };

export function agentFor(config: { manager: { agent?: AgentKind } }): Agent {
  return AGENTS[agentKindOf(config)];
}

export type { Agent } from "./agent.js";
