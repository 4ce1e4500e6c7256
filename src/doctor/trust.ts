// Whether Claude will start in the program root without its folder-trust dialog, which holds a
// Herdr or tmux start (DESIGN §7). Read only: Claude's own files are never edited.
import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { runsClaude } from "../config/claude-argv.js";
import type { Program } from "../config/load.js";
import { homeDir } from "../install/target.js";
import { expandHome } from "../util/fs.js";
import type { Check } from "./check.js";

/**
 * The `.claude.json` the manager's Claude reads: `$CLAUDE_CONFIG_DIR/.claude.json` when the
 * manager gets that variable, else `~/.claude.json` (Claude Code 2.1.196, as kcap-cli#202 found
 * by running it with both set).
 */
export function claudeJsonOf(program: Program, env = process.env): string {
  const dir = program.config.manager.env.CLAUDE_CONFIG_DIR ?? env.CLAUDE_CONFIG_DIR;
  return dir ? join(resolve(expandHome(dir)), ".claude.json") : join(homeDir(env), ".claude.json");
}

/** The launcher that would meet Claude's dialog (herdr kind claude, or tmux running claude). */
function claudeLauncher(program: Program): "herdr" | "tmux" | null {
  const m = program.config.manager;
  if (m.launcher === "herdr" && (m.herdr?.kind ?? "claude") === "claude") return "herdr";
  if (m.launcher === "tmux" && runsClaude(m.tmux?.command ?? ["claude"])) return "tmux";
  return null;
}

/** The folder (root or an ancestor, which Claude's trust also covers) recorded as trusted. */
function trustedBy(file: string, root: string): string | null | "unreadable" {
  let projects: Record<string, { hasTrustDialogAccepted?: unknown }>;
  try {
    projects = JSON.parse(readFileSync(file, "utf8"))?.projects ?? {};
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "ENOENT" ? null : "unreadable";
  }
  for (let dir = root; ; dir = dirname(dir)) {
    if (projects[dir]?.hasTrustDialogAccepted === true) return dir;
    if (dir === dirname(dir)) return null;
  }
}

export function trustCheck(program: Program): Check | null {
  const launcher = claudeLauncher(program);
  if (!launcher) return null;
  const file = claudeJsonOf(program);
  const root = program.root;
  const by = trustedBy(file, root);
  const base = { program: program.name, check: "claude-trust" };
  if (by && by !== "unreadable")
    return { ...base, status: "ok", detail: `${file}: ${by} is trusted`, fix: null };
  const accepts = program.config.manager[launcher]?.accept_trust_dialog === true;
  const detail =
    by === "unreadable"
      ? `${file} cannot be read as JSON; Claude may show its folder-trust dialog in ${root}`
      : `${file} does not record ${root} as trusted: Claude will show its folder-trust dialog there${accepts ? `; manager.${launcher}.accept_trust_dialog answers it` : ", and a start is held at it"}`;
  const dir = program.config.manager.env.CLAUDE_CONFIG_DIR;
  const fix = `run \`${dir ? `CLAUDE_CONFIG_DIR=${dir} ` : ""}claude\` once in ${root} and accept the dialog, or set manager.${launcher}.accept_trust_dialog: true`;
  return { ...base, status: accepts ? "ok" : "warn", detail, fix: accepts ? null : fix };
}
