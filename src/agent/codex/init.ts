// What `sheepdog init --agent codex` writes for Codex (DESIGN §19): the program's manager
// section (codex --no-daemon --profile sheepdog …) and sheepdog's profile in the seat.
import { existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { LauncherKind } from "../../config/schema.js";
import { expandHome } from "../../util/fs.js";
import { homeDir } from "../../util/lazy.js";
import { DEFAULT_RESUME_LINE } from "../kinds.js";
import { CLAIM_AND_SAVE_DUTIES } from "../prompt-duties.js";
import { PROFILE, profilePath, profileText } from "./profile.js";

/** The flags every Codex manager argv starts with: no daemon left behind, sheepdog's profile. */
export const CODEX_FLAGS = ["--no-daemon", "--profile", PROFILE] as const;

/** The seat init writes the profile into: `$CODEX_HOME`, else `~/.codex`. */
export function initSeat(env: NodeJS.ProcessEnv = process.env): string {
  return resolve(expandHome(env.CODEX_HOME || join(homeDir(env), ".codex"), homeDir(env)));
}

/** The manager section of a Codex program, for a launcher. */
export function codexManager(
  launcher: LauncherKind,
  name: string,
  prompt: string,
  env: NodeJS.ProcessEnv = process.env,
): Record<string, unknown> {
  const manager: Record<string, unknown> = {
    launcher,
    agent: "codex",
    prompt,
    resume_line: DEFAULT_RESUME_LINE,
    // The seat the manager and the watchdog share, when it is not the default one.
    env: env.CODEX_HOME ? { CODEX_HOME: initSeat(env) } : {},
  };
  // `exec` runs once without a terminal; a program folder need not be a git repository.
  if (launcher === "command")
    manager.command = ["codex", ...CODEX_FLAGS, "exec", "--skip-git-repo-check", "{prompt}"];
  if (launcher === "tmux")
    manager.tmux = {
      session: name,
      command: ["codex", ...CODEX_FLAGS, "{prompt}"],
      accept_trust_dialog: false,
    };
  if (launcher === "herdr")
    manager.herdr = {
      workspace: name,
      agent: "manager",
      kind: "codex",
      args: [...CODEX_FLAGS],
      accept_trust_dialog: false,
    };
  return manager;
}

/**
 * Writes (or completes) sheepdog's profile in the seat for `root`: what was there is kept.
 * Returns its path and whether it was created.
 */
export function writeProfile(
  seat: string,
  root: string,
): { path: string; created: boolean; changed: boolean } {
  const path = profilePath(seat);
  let real = root;
  try {
    real = realpathSync(root);
  } catch {
    // not made yet: as given
  }
  const existing = existsSync(path) ? readFileSync(path, "utf8") : null;
  const text = profileText(existing, path, real);
  if (text !== existing) {
    mkdirSync(seat, { recursive: true, mode: 0o700 });
    writeFileSync(path, text, { mode: 0o600 });
  }
  return { path, created: existing === null, changed: text !== existing };
}

/** The placeholder MANAGER-PROMPT.md for a Codex manager: what sheepdog expects of it. */
export function codexPromptPlaceholder(name: string): string {
  return `# Manager prompt for ${name}

You are the manager of the program "${name}". Replace this file with your real prompt.

sheepdog starts you (Codex, with \`--profile ${PROFILE}\`) with a one-line prompt naming this file
and why you were started. What sheepdog expects of you:

${CLAIM_AND_SAVE_DUTIES}
- When there is nothing to do until something changes, run \`sheepdog wait --every 20m\` and
  keep reading its output until it prints its one JSON line (it wakes when its interval has
  passed, the program is paused or stood down, your claim is lost, or this host lost the
  program's lease: stop then), then save, act on what it says, and go on.
- When a usage limit stops you, sheepdog pauses the program and, once the limit has reset,
  types "${DEFAULT_RESUME_LINE}" into your prompt: read your last save and go on.
- When the backlog is done: \`sheepdog finish --note "what was done"\`.

\`sheepdog doctor\` checks what Codex needs for this: the profile
(\`$CODEX_HOME/${PROFILE}.config.toml\`: approval_policy never, a sandbox that lets sheepdog write
its state, this folder trusted, the trusted Stop hook \`sheepdog hook stop\`) and the Codex version.
`;
}
