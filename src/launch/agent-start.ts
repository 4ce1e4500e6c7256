// How a launcher watches a new manager of each agent until its prompt has arrived (DESIGN §7,
// §19): whether an argv runs the agent, the screen watch (its dialogs, its input box), and where
// the prompt shows up. Launcher-side, so `save` and the readings never load screen code. One
// entry per agent, as in src/agent/index.ts.
import { promptInRollouts } from "../agent/codex/arrival.js";
import { type AgentKind, agentKindOf } from "../agent/kinds.js";
import { runsClaude } from "../config/claude-argv.js";
import { runsCodex } from "../config/codex-argv.js";
import { promptArrived } from "./herdr-arrival.js";
import type { StartEnd, StartWatch } from "./start-watch.js";
import { watchClaudeStart } from "./tmux-claude.js";
import { watchCodexStart } from "./tmux-codex.js";

export interface AgentStart {
  /** Whether the argv runs this agent (its start is then watched on screen). */
  runsIn(argv: readonly string[]): boolean;
  /** Watches a new window until its prompt arrived, answering what `acceptTrustDialog` allows. */
  watchStart(w: StartWatch): Promise<StartEnd>;
  /** Whether `prompt` reached a transcript of `root` on this seat since `sinceMs`. */
  promptArrived(
    seat: string,
    q: { root: string; env: NodeJS.ProcessEnv },
    prompt: string,
    sinceMs: number,
  ): boolean;
}

const STARTS: Record<AgentKind, AgentStart> = {
  claude: {
    runsIn: runsClaude,
    watchStart: watchClaudeStart,
    promptArrived: (seat, q, prompt, sinceMs) =>
      promptArrived(seat, q.root, prompt, sinceMs, q.env),
  },
  codex: {
    runsIn: runsCodex,
    watchStart: watchCodexStart,
    promptArrived: (seat, q, prompt, sinceMs) => promptInRollouts(seat, q.root, prompt, sinceMs),
  },
};

export function agentStart(config: { manager: { agent?: AgentKind } }): AgentStart {
  return STARTS[agentKindOf(config)];
}
