// The agents a manager can be (DESIGN §19), and what each needs at load time: no readers here,
// so program.json's loader, check and init know the agents without loading their code.

export const AGENTS = ["claude", "codex"] as const;
export type AgentKind = (typeof AGENTS)[number];

/** What a launcher runs for an agent when program.json names no command of its own. */
export interface LaunchDefaults {
  /** `manager.tmux.command`. */
  tmux: readonly string[];
  /** `manager.herdr.kind` and `.args`. */
  herdr: { kind: string; args: readonly string[] };
}

export interface AgentFacts {
  /** Its name for people. */
  label: string;
  /** The executable its commands run (`claude`, `codex`). */
  executable: string;
  launch: LaunchDefaults;
  /**
   * Whether it goes on by itself when a usage limit resets (Claude Code sends itself "…limit
   * has reset. Continue"; Codex 0.171.0 does nothing): when not, the launcher types
   * `manager.resume_line` into a live holder at its prompt once the pause ends.
   */
  continuesAfterLimit: boolean;
  /**
   * Whether a background process it left running wakes it when it ends (Claude Code tells the
   * model a background task completed; Codex 0.171.0 does not: its model must poll): a live
   * child is evidence of `waiting` only then.
   */
  backgroundWakes: boolean;
  /** The context window a manager has when its agent never said (`hand_over_tokens: "auto"`). */
  defaultWindow: number;
}

export const AGENT_FACTS: Record<AgentKind, AgentFacts> = {
  claude: {
    label: "Claude Code",
    executable: "claude",
    launch: { tmux: ["claude", "{prompt}"], herdr: { kind: "claude", args: [] } },
    continuesAfterLimit: true,
    backgroundWakes: true,
    defaultWindow: 200_000,
  },
  codex: {
    label: "Codex",
    executable: "codex",
    // Without --no-daemon the TUI leaves an app-server daemon behind after every manager.
    launch: {
      tmux: ["codex", "--no-daemon", "{prompt}"],
      herdr: { kind: "codex", args: ["--no-daemon"] },
    },
    continuesAfterLimit: false,
    backgroundWakes: false,
    // Codex's own window is in every token_count; this is only the fallback before the first.
    defaultWindow: 200_000,
  },
};

/** The line typed into a Codex manager when its usage pause ends (`manager.resume_line`). */
export const DEFAULT_RESUME_LINE = "The usage limit has reset. Continue from your last save.";

/** The agent a program's manager is: `manager.agent`, Claude Code by default. */
export function agentKindOf(config: { manager: { agent?: AgentKind } }): AgentKind {
  return config.manager.agent ?? "claude";
}
