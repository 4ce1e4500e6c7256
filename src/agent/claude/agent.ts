// Claude Code as the manager's agent: a thin delegation to the readers that were written for it
// (src/usage/transcript.ts, transcript-tail.ts, sessions.ts, src/launch/tmux-claude.ts). Shapes
// as Claude Code 2.1.328 writes them.
import { basename, join, resolve } from "node:path";
import { lookupSession } from "../../usage/sessions.js";
import { contextTokensOf, findTranscript, refusalAtEnd } from "../../usage/transcript.js";
import { transcriptTail } from "../../usage/transcript-tail.js";
import { expandHome } from "../../util/fs.js";
import { homeDir } from "../../util/lazy.js";
import type { Agent } from "../agent.js";
import { AGENT_FACTS } from "../kinds.js";
import { subagentsGrewAt } from "./subagents.js";

export const claude: Agent = {
  ...AGENT_FACTS.claude,
  kind: "claude",
  // DESIGN §4: `usage.seat`, else `manager.env.CLAUDE_CONFIG_DIR`, else `$CLAUDE_CONFIG_DIR`,
  // else `~/.claude`.
  seat(config, env = process.env) {
    const chosen =
      config.usage.seat ??
      config.manager.env.CLAUDE_CONFIG_DIR ??
      env.CLAUDE_CONFIG_DIR ??
      join(homeDir(env), ".claude");
    return resolve(expandHome(chosen));
  },
  findTranscript(seat, q) {
    return findTranscript({
      seat,
      cwd: q.cwd,
      ...(q.manager ? { manager: q.manager } : {}),
      ...(q.env ? { env: q.env } : {}),
    });
  },
  context(transcript, manager) {
    let window: number | null = null;
    if (manager) {
      try {
        window = lookupSession(manager)?.context_window_size ?? null;
      } catch {
        // no session map: the default window
      }
    }
    return { tokens: transcript ? contextTokensOf(transcript) : null, window };
  },
  refusal: (transcript) => refusalAtEnd(transcript),
  readings: () => [],
  tail: (transcript) => transcriptTail(transcript),
  shellTool: "Bash",
  contextReady: () => true,
  sessionOf: (transcript) => basename(transcript, ".jsonl"),
  sideGrewAt: subagentsGrewAt,
};
