import {
  closeSync,
  existsSync,
  fchmodSync,
  openSync,
  readFileSync,
  statSync,
  writeSync,
} from "node:fs";
import { basename, join, resolve } from "node:path";
import {
  codexManager,
  codexPromptPlaceholder,
  initSeat,
  writeProfile,
} from "../agent/codex/init.js";
import { AGENTS, type AgentKind } from "../agent/kinds.js";
import { CLAIM_AND_SAVE_DUTIES } from "../agent/prompt-duties.js";
import { CONFIG_FILE, PROMPT_FILE } from "../config/files.js";
import { parseConfig } from "../config/load.js";
import {
  DEFAULT_PROMPT,
  DEFAULTS,
  LAUNCHERS,
  type LauncherKind,
  NAME_PATTERN,
} from "../config/schema.js";
import { EXIT, RefusedError, UsageError } from "../errors.js";
import { UNSAFE_PROGRAM } from "../state/dir.js";
import { ensureOwnedDir } from "../state/owned.js";
import { SHEEPDOG_ALLOW_RULE } from "../usage/claude-permissions.js";
import { claudeSettingsSnippet } from "../usage/claude-settings.js";
import { parseCommandArgs } from "../util/args.js";
import { expandHome, writeFileAtomic } from "../util/fs.js";

export { PROMPT_FILE };

/** The program.json `init` writes: every defaulted setting spelled out, optional sections left out. */
export function initialConfig(
  name: string,
  launcher: LauncherKind,
  agent: AgentKind = "claude",
  env: NodeJS.ProcessEnv = process.env,
): Record<string, unknown> {
  const manager: Record<string, unknown> =
    agent === "codex"
      ? codexManager(launcher, name, DEFAULT_PROMPT, env)
      : claudeManager(launcher, name);
  return {
    name,
    manager,
    watchdog: { ...DEFAULTS.watchdog, crash_loop: { ...DEFAULTS.watchdog.crash_loop } },
    hand_over_tokens: DEFAULTS.hand_over_tokens,
    usage: { ...DEFAULTS.usage },
  };
}

function claudeManager(launcher: LauncherKind, name: string): Record<string, unknown> {
  const manager: Record<string, unknown> = {
    launcher,
    agent: "claude",
    prompt: DEFAULT_PROMPT,
    env: {},
  };
  // Without a terminal claude answers once and exits (DESIGN §7): the command launcher runs it in
  // print mode; an interactive manager wants the tmux or herdr launcher.
  if (launcher === "command") manager.command = ["claude", "-p", "{prompt}"];
  if (launcher === "tmux")
    manager.tmux = { session: name, command: ["claude", "{prompt}"], accept_trust_dialog: false };
  if (launcher === "herdr")
    manager.herdr = {
      workspace: name,
      agent: "manager",
      kind: "claude",
      args: [],
      accept_trust_dialog: false,
    };
  return manager;
}

const PROMPT_PLACEHOLDER = (name: string) => `# Manager prompt for ${name}

You are the manager of the program "${name}". Replace this file with your real prompt.

sheepdog starts you with a one-line prompt naming this file and why you were started.
What sheepdog expects of you:

${CLAIM_AND_SAVE_DUTIES}
- Keep one \`sheepdog wait\` running in the background (run it with run_in_background). It
  wakes you when its interval (20m) has passed, the program is paused or stood down, your
  claim is lost, or this host lost the program's lease (\`lease_lost\`: stop), printing one JSON line (Claude Code tells you the background command
  completed and names its output file: read the line there), then save, act on what it says,
  and start a new one.
- When the backlog is done: \`sheepdog finish --note "what was done"\`.

For usage limits to pause the program, and for the watchdog to tell a manager that waits from
one that is stuck, the seat's Claude Code settings (\`settings.json\` in its config folder,
e.g. \`~/.claude/settings.json\`) need sheepdog's statusline and hooks (\`sheepdog doctor\`
checks each):

\`\`\`json
${claudeSettingsSnippet(2)}
\`\`\`
`;

/** The program's Claude Code project settings, where the manager's permission to run sheepdog goes. */
export const PROJECT_SETTINGS = join(".claude", "settings.json");

/**
 * What `.claude/settings.json` becomes with sheepdog's allow rule (docs/launchers.md#permissions):
 * the new text, null when the rule is there already, or why the file cannot be changed.
 */
export function withAllowRule(text: string | null): { text: string | null } | { why: string } {
  if (text === null)
    return {
      text: `${JSON.stringify({ permissions: { allow: [SHEEPDOG_ALLOW_RULE] } }, null, 2)}\n`,
    };
  let settings: unknown;
  try {
    settings = JSON.parse(text);
  } catch (err) {
    return { why: `it is not valid JSON (${(err as Error).message})` };
  }
  if (!settings || typeof settings !== "object" || Array.isArray(settings))
    return { why: "it is not a JSON object" };
  const s = settings as { permissions?: unknown };
  const perms = s.permissions ?? {};
  if (typeof perms !== "object" || Array.isArray(perms) || perms === null)
    return { why: "its permissions is not an object" };
  const allow = (perms as { allow?: unknown }).allow ?? [];
  if (!Array.isArray(allow)) return { why: "its permissions.allow is not a list" };
  if (allow.includes(SHEEPDOG_ALLOW_RULE)) return { text: null };
  const next = { ...s, permissions: { ...perms, allow: [...allow, SHEEPDOG_ALLOW_RULE] } };
  return { text: `${JSON.stringify(next, null, 2)}\n` };
}

function readIfThere(path: string): string | null {
  try {
    return readFileSync(path, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw err;
  }
}

/** A new file, 0600 whatever the umask; never one that exists (or a link where it would go). */
function writePrivate(path: string, text: string): void {
  const fd = openSync(path, "wx", 0o600);
  try {
    fchmodSync(fd, 0o600);
    writeSync(fd, text);
  } finally {
    closeSync(fd);
  }
}

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs("init", argv);
  if (positionals.length !== 1) throw new UsageError("sheepdog init: expected exactly one DIR");
  const root = resolve(expandHome(positionals[0] as string));
  const name = values.name ?? basename(root).toLowerCase();
  if (!NAME_PATTERN.test(name)) {
    throw new UsageError(
      `sheepdog init: name ${JSON.stringify(name)} does not match [a-z0-9][a-z0-9-]{0,62}; pass --name`,
    );
  }
  const launcher = (values.launcher ?? "command") as LauncherKind;
  if (!LAUNCHERS.includes(launcher)) {
    throw new UsageError(
      `--launcher: expected one of ${LAUNCHERS.join(", ")}, got ${JSON.stringify(values.launcher)}`,
    );
  }
  const agent = (values.agent ?? "claude") as AgentKind;
  if (!AGENTS.includes(agent))
    throw new UsageError(
      `--agent: expected one of ${AGENTS.join(", ")}, got ${JSON.stringify(values.agent)}`,
    );
  const configPath = join(root, CONFIG_FILE);
  const promptPath = join(root, PROMPT_FILE);
  for (const path of [configPath, promptPath]) {
    if (existsSync(path)) throw new RefusedError(`${path} already exists; not overwriting it`);
  }
  const text = `${JSON.stringify(initialConfig(name, launcher, agent), null, 2)}\n`;
  parseConfig(text, configPath); // what init writes must pass check
  // 0700 whatever the umask (its parents too, when init makes them); a folder that is there
  // already is narrowed when it is yours and others may write it, refused when it is not yours
  // or a link (DESIGN §18). program.json may carry manager.env secrets: 0600, as the prompt.
  ensureOwnedDir(root, UNSAFE_PROGRAM, { narrow: true });
  const placeholder = agent === "codex" ? codexPromptPlaceholder(name) : PROMPT_PLACEHOLDER(name);
  writePrivate(configPath, text);
  writePrivate(promptPath, placeholder);
  const created = [configPath, promptPath];
  const updated: string[] = [];
  /** What each settings file written is for, said after its path. */
  const why = new Map<string, string>();
  let unchanged: string | null = null;
  if (agent === "codex") {
    // The seat's profile: permissions, this root's trust, the trusted Stop hook (DESIGN §19).
    const profile = writeProfile(initSeat(), root);
    if (profile.created) created.push(profile.path);
    else if (profile.changed) updated.push(profile.path);
  } else {
    // The manager runs `sheepdog claim acquire` through Claude Code's Bash tool first of all:
    // without an allow rule every launcher leaves it to a person (see claude-permissions.ts).
    const settingsPath = join(root, PROJECT_SETTINGS);
    const existing = readIfThere(settingsPath);
    const settings = withAllowRule(existing);
    if ("text" in settings && settings.text !== null) {
      // Its settings can declare hooks that run as the user: a folder of the user's own, 0700.
      ensureOwnedDir(join(root, ".claude"), UNSAFE_PROGRAM, { narrow: true });
      // A file that was there keeps its mode.
      const mode = existing === null ? 0o600 : statSync(settingsPath).mode & 0o777;
      writeFileAtomic(settingsPath, settings.text, mode);
      (existing === null ? created : updated).push(settingsPath);
      why.set(settingsPath, `(lets the manager run sheepdog unasked: ${SHEEPDOG_ALLOW_RULE})`);
    }
    if ("why" in settings)
      unchanged = `${settingsPath} was left as it is: ${settings.why}; add "${SHEEPDOG_ALLOW_RULE}" to its permissions.allow yourself, or the manager's sheepdog calls wait for a person`;
  }
  if (values.json) {
    const out = {
      program: name,
      root,
      created,
      updated,
      launcher,
      // (`agent` is said for an agent other than the default, so Claude's answer is as before.)
      ...(agent !== "claude" ? { agent } : {}),
      ...(unchanged ? { warnings: [unchanged] } : {}),
    };
    process.stdout.write(`${JSON.stringify(out)}\n`);
    return EXIT.ok;
  }
  const said = (path: string) => (why.has(path) ? ` ${why.get(path)}` : "");
  for (const path of created) process.stdout.write(`created ${path}${said(path)}\n`);
  for (const path of updated) process.stdout.write(`updated ${path}${said(path)}\n`);
  if (unchanged) process.stderr.write(`warning: ${unchanged}\n`);
  process.stdout.write(
    `next: edit program.json and MANAGER-PROMPT.md, then run: sheepdog check --program ${root}${agent === "codex" ? ` and sheepdog doctor --program ${root}` : ""}\n`,
  );
  return EXIT.ok;
}
