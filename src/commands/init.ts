import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import {
  codexManager,
  codexPromptPlaceholder,
  initSeat,
  writeProfile,
} from "../agent/codex/init.js";
import { AGENTS, type AgentKind } from "../agent/kinds.js";
import { CONFIG_FILE, parseConfig } from "../config/load.js";
import {
  DEFAULT_PROMPT,
  DEFAULTS,
  LAUNCHERS,
  type LauncherKind,
  NAME_PATTERN,
} from "../config/schema.js";
import { EXIT, RefusedError, UsageError } from "../errors.js";
import { claudeSettingsSnippet } from "../usage/claude-settings.js";
import { parseCommandArgs } from "../util/args.js";
import { expandHome } from "../util/fs.js";

export const PROMPT_FILE = "MANAGER-PROMPT.md";

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

- At start: \`sheepdog claim acquire\` (exit 3 means another manager holds the program: stop).
- After every change of state: \`sheepdog save\`. It answers with JSON; when \`hand_over\` is true,
  finish the step you are on, write down where things stand, and run
  \`sheepdog hand-over --note "why"\`, then stop. When \`pause\` is set, save and stop.
  When the program is staged on more than one host and \`lease.held_here\` is false, this
  host no longer holds it: stop at once (another host's manager takes over).
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
  mkdirSync(root, { recursive: true });
  writeFileSync(configPath, text, { flag: "wx", mode: 0o644 });
  const placeholder = agent === "codex" ? codexPromptPlaceholder(name) : PROMPT_PLACEHOLDER(name);
  writeFileSync(promptPath, placeholder, { flag: "wx", mode: 0o644 });
  const created = [configPath, promptPath];
  const lines = [`created ${configPath}`, `created ${promptPath}`];
  let updated: string[] = [];
  if (agent === "codex") {
    // The seat's profile: permissions, this root's trust, the trusted Stop hook (DESIGN §19).
    const profile = writeProfile(initSeat(), root);
    if (profile.created) created.push(profile.path);
    else if (profile.changed) updated = [profile.path];
    if (profile.created || profile.changed)
      lines.push(`${profile.created ? "created" : "updated"} ${profile.path}`);
  }
  if (values.json) {
    const out = {
      program: name,
      root,
      created,
      ...(updated.length ? { updated } : {}),
      launcher,
      // (`agent` is said for an agent other than the default, so Claude's answer is as before.)
      ...(agent !== "claude" ? { agent } : {}),
    };
    process.stdout.write(`${JSON.stringify(out)}\n`);
    return EXIT.ok;
  }
  process.stdout.write(
    `${lines.join("\n")}\nnext: edit both, then run: sheepdog check --program ${root}${agent === "codex" ? ` and sheepdog doctor --program ${root}` : ""}\n`,
  );
  return EXIT.ok;
}
