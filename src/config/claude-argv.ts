// Whether an argv runs Claude Code, and how: the launchers and `check` decide on it (DESIGN §7).
import { basename } from "node:path";

/** The executable an argv runs, past `env` and its `NAME=value` words (tmux wraps in `env --`). */
export function executableOf(argv: readonly string[]): string {
  let i = 0;
  if (basename(argv[0] ?? "") === "env") {
    i = 1;
    while (
      i < argv.length &&
      (/^[A-Za-z_][A-Za-z0-9_]*=/.test(argv[i] as string) || argv[i] === "--")
    )
      i++;
  }
  return argv[i] ?? "";
}

/** Whether the argv runs `claude` (bare or a path ending in `/claude`). */
export function runsClaude(argv: readonly string[]): boolean {
  return basename(executableOf(argv)) === "claude";
}

/** `claude` without `-p`/`--print`: it needs a terminal (without one it answers once and exits). */
export function isInteractiveClaude(argv: readonly string[]): boolean {
  return runsClaude(argv) && !argv.some((a) => a === "-p" || a === "--print");
}
