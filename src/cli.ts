import { createRequire } from "node:module";
import { EXIT } from "./errors.js";
import { finish } from "./run-command.js";
import { applyClockStep } from "./util/clock-step.js";
import { nearest } from "./util/nearest.js";

/** A command module: runs with its own argv and resolves to an exit code. */
export interface CommandModule {
  run(argv: string[]): Promise<number>;
}

// Each command is its own chunk: `statusline` never loads what `tick` needs.
const COMMANDS: Record<string, () => Promise<CommandModule>> = {
  init: () => import("./commands/init.js"),
  check: () => import("./commands/check.js"),
  claim: () => import("./commands/claim.js"),
  save: () => import("./commands/save.js"),
  journal: () => import("./commands/journal.js"),
  tick: () => import("./commands/tick.js"),
  status: () => import("./commands/status.js"),
  resume: () => import("./commands/resume.js"),
  pause: () => import("./commands/pause.js"),
  unpause: () => import("./commands/unpause.js"),
  finish: () => import("./commands/finish.js"),
  reopen: () => import("./commands/reopen.js"),
  "hand-over": () => import("./commands/hand-over.js"),
  statusline: () => import("./commands/statusline.js"),
  hook: () => import("./commands/hook.js"),
  usage: () => import("./commands/usage.js"),
  "merge-lock": () => import("./commands/merge-lock.js"),
  page: () => import("./commands/page.js"),
  install: () => import("./commands/install.js"),
  uninstall: () => import("./commands/uninstall.js"),
  doctor: () => import("./commands/doctor.js"),
  watch: () => import("./commands/watch.js"),
  demo: () => import("./commands/demo.js"),
  report: () => import("./commands/report.js"),
};

const HELP = `sheepdog — keeps unattended AI coding loops alive

  sheepdog init DIR [--name N] [--launcher command|tmux|herdr] [--json]
  sheepdog check [--json]
  sheepdog tick  [--all] [--dry-run] [--json]
  sheepdog status [--all] [--json]
  sheepdog claim acquire|release|show [--pid N] [--break-stale] [--force --note T] [--json]
  sheepdog save [--pid N] [--transcript PATH] [--progress TEXT]
  sheepdog hand-over --note TEXT [--pid N] [--transcript PATH] [--progress TEXT]
  sheepdog finish --note TEXT [--pid N] [--json]  |  sheepdog reopen [--json]
  sheepdog statusline                 (Claude Code statusLine: stdin JSON → one line)
  sheepdog hook stop-failure          (Claude Code StopFailure hook: stdin JSON)
  sheepdog usage [--seat DIR] [--json]
  sheepdog merge-lock acquire|release|show [--pid N] [--item ID] [--stale] [--json]
  sheepdog pause --until WHEN  |  sheepdog unpause  |  sheepdog resume   (each [--json])
  sheepdog page --test [--json]
  sheepdog install launchd|systemd [--all] [--interval 5m] [--watch] [--dry-run] [--json]
  sheepdog uninstall launchd|systemd [--all] [--dry-run] [--json]
  sheepdog doctor [--json]
  sheepdog journal [--since 1h] [--json]
  sheepdog report [--all] [--since 24h] [--out FILE] [--open] [--json]
  sheepdog demo
  sheepdog watch [--all] [--json]     (resident mode: reacts in seconds)

Every command that concerns a program takes --program NAME|PATH.
Exit codes: 0 done, 1 failed, 2 bad usage/config/input, 3 refused.`;

// Built whole by scripts/build.mjs: one module to load instead of a dozen chunks.
const HOT = new Set(["save", "tick"]);

async function loadHot(
  name: string,
  fallback: () => Promise<CommandModule>,
): Promise<CommandModule> {
  const url = new URL(`./hot/${name}.js`, import.meta.url);
  try {
    return (await import(url.href)) as CommandModule;
  } catch (err) {
    if ((err as { code?: string }).code !== "ERR_MODULE_NOT_FOUND") throw err;
    return fallback();
  }
}

export function register(name: string, load: () => Promise<CommandModule>): void {
  COMMANDS[name] = load;
}

/** An unknown command: exit 2, with the nearest command when it looks like a typo. */
function unknownCommand(name: string): number {
  const near = nearest(name, Object.keys(COMMANDS));
  process.stderr.write(
    `sheepdog: unknown command ${JSON.stringify(name)}${near ? ` (did you mean ${near}?)` : ""}; sheepdog --help lists them\n`,
  );
  return EXIT.usage;
}

/** `sheepdog help COMMAND`, `sheepdog COMMAND --help`: that command's lines of the help. */
function commandHelp(name: string): number {
  if (!COMMANDS[name]) return unknownCommand(name);
  const mine = (l: string) => l.includes(`sheepdog ${name} `) || l.endsWith(`sheepdog ${name}`);
  const lines = HELP.split("\n").filter(mine);
  const footer = HELP.split("\n").slice(-2);
  process.stdout.write(`usage:\n${lines.join("\n")}\n\n${footer.join("\n")}\n`);
  return EXIT.ok;
}

async function main(argv: string[]): Promise<number | undefined> {
  const [name, ...rest] = argv;
  if (name === "help" && rest[0] !== undefined) return commandHelp(rest[0]);
  if (name === undefined || name === "help" || name === "--help" || name === "-h") {
    process.stdout.write(`${HELP}\n`);
    return name === undefined ? EXIT.usage : EXIT.ok;
  }
  if (name === "--version" || name === "-V") {
    process.stdout.write("sheepdog 0.1.0\n");
    return EXIT.ok;
  }
  const load = COMMANDS[name];
  if (!load) return unknownCommand(name);
  // Before `--`, a --help anywhere asks for help, whatever else is on the line.
  const options = rest.indexOf("--") < 0 ? rest : rest.slice(0, rest.indexOf("--"));
  if (options.includes("--help") || options.includes("-h")) return commandHelp(name);
  if (name === "statusline" || name === "hook") {
    // The same CommonJS bundle bin/sheepdog.cjs runs; it sets its own exit code.
    createRequire(import.meta.url)(`./hot/${name}.cjs`);
    return undefined;
  }
  process.title = `sheepdog ${name}`;
  applyClockStep();
  const command = HOT.has(name) ? await loadHot(name, load) : await load();
  return command.run(rest);
}

finish(main(process.argv.slice(2)));
