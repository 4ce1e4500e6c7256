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

/** The arguments after the executable when the argv runs `claude`, else null. */
export function claudeArgsOf(argv: readonly string[]): string[] | null {
  if (!runsClaude(argv)) return null;
  const exe = executableOf(argv);
  return argv.slice(argv.indexOf(exe) + 1);
}

/**
 * The arguments the manager's Claude Code is started with, by launcher (tmux's command, Herdr's
 * `args` for kind claude, the command launcher's argv), or null when the manager is not Claude
 * Code.
 */
export function managerClaudeArgs(manager: {
  launcher: string;
  command?: readonly string[];
  tmux?: { command: readonly string[] };
  herdr?: { kind: string; args: readonly string[] };
}): string[] | null {
  if (manager.launcher === "tmux")
    return claudeArgsOf(manager.tmux?.command ?? ["claude", "{prompt}"]);
  if (manager.launcher === "herdr")
    return (manager.herdr?.kind ?? "claude") === "claude" ? [...(manager.herdr?.args ?? [])] : null;
  return manager.command ? claudeArgsOf(manager.command) : null;
}
