import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { alwaysJson, COMMAND_SPECS, type CommandSpec } from "./cli-spec.js";
import { EXIT } from "./errors.js";
import { finish } from "./run-command.js";
import { applyClockStep } from "./util/clock-step.js";
import { requireCached } from "./util/code-cache.js";
import { nearest } from "./util/nearest.js";
import { guardStream, shownJson, shownText } from "./util/sanitize.js";

/** A command module: runs with its own argv and resolves to an exit code. */
export interface CommandModule {
  run(argv: string[]): Promise<number>;
}

const here = createRequire(import.meta.url);

/** Every command with a module of its own (`version` is answered here). */
const COMMANDS = Object.keys(COMMAND_SPECS).filter((c) => c !== "version");

/**
 * A command's own CommonJS file, built whole (scripts/build.mjs): it loads nothing else, and is
 * compiled from V8's code cache where there is one (util/code-cache.ts).
 */
function loadCommand(name: string): CommandModule {
  return requireCached(here.resolve(`./commands/${name}.cjs`)) as CommandModule;
}

const FOOTER = `Every command that concerns a program takes --program NAME|PATH.
Exit codes: 0 done, 1 failed, 2 bad usage/config/input, 3 refused.
sheepdog COMMAND --help explains each of its options.`;

/** The whole help: every command's synopsis. */
function overview(): string {
  const lines = (Object.values(COMMAND_SPECS) as CommandSpec[]).flatMap((spec) =>
    spec.usage.map((u) => `  sheepdog ${u}`),
  );
  return `sheepdog — keeps unattended AI coding loops alive\n\n${lines.join("\n")}\n\n${FOOTER}`;
}

/** Words of `text` in lines of at most `width` characters (a longer word stands alone). */
function wrap(text: string, width: number): string[] {
  const out: string[] = [];
  let line = "";
  for (const word of text.split(" ")) {
    if (line && line.length + 1 + word.length > width) {
      out.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  return [...out, line];
}

/** Two columns, the first padded to its widest cell, the second wrapped to the terminal. */
function columns(rows: [string, string][], indent: string): string {
  const first = Math.max(...rows.map(([a]) => a.length));
  const total = Math.max(60, Math.min(process.stdout.columns || 100, 120));
  const rest = Math.max(30, total - indent.length - first - 2);
  const pad = " ".repeat(indent.length + first + 2);
  return rows
    .map(([a, b]) => {
      const [head, ...more] = wrap(b, rest);
      return [`${indent}${a.padEnd(first)}  ${head}`, ...more.map((m) => `${pad}${m}`)].join("\n");
    })
    .join("\n");
}

/** One command's help: its synopsis, what it is for, and a line per option. */
function commandUsage(spec: CommandSpec): string {
  const usage = spec.usage.map((u) => `  sheepdog ${u}`).join("\n");
  const options = Object.entries(spec.options).map(([flag, o]): [string, string] => [
    `--${flag}${o.type !== "boolean" ? ` ${o.arg ?? "VALUE"}` : ""}`,
    o.help,
  ]);
  options.push(["--help", "this help"]);
  return `usage:\n${usage}\n\n${spec.about}\n\noptions:\n${columns(options, "  ")}\n`;
}

/** sheepdog's version, from the package.json that ships beside dist/. */
function version(): string {
  try {
    const url = new URL("../package.json", import.meta.url);
    return (JSON.parse(readFileSync(url, "utf8")) as { version: string }).version;
  } catch {
    return "unknown";
  }
}

/** An unknown command: exit 2, with the nearest command when it looks like a typo. */
function unknownCommand(name: string): number {
  const near = nearest(name, [...COMMANDS, "version"]);
  process.stderr.write(
    `sheepdog: unknown command ${JSON.stringify(name)}${near ? ` (did you mean ${near}?)` : ""}; sheepdog --help lists them\n`,
  );
  return EXIT.usage;
}

/** `sheepdog help COMMAND`, `sheepdog COMMAND --help`: that command's synopsis and options. */
function commandHelp(name: string): number {
  const spec = (COMMAND_SPECS as Record<string, CommandSpec>)[name];
  if (!spec) return unknownCommand(name);
  process.stdout.write(commandUsage(spec));
  return EXIT.ok;
}

async function main(argv: string[]): Promise<number | undefined> {
  const [name, ...rest] = argv;
  if (name === "help" && rest[0] !== undefined) return commandHelp(rest[0]);
  if (name === undefined || name === "help" || name === "--help" || name === "-h") {
    (name === undefined ? process.stderr : process.stdout).write(`${overview()}\n`);
    return name === undefined ? EXIT.usage : EXIT.ok;
  }
  const asksHelp = rest.includes("--help") || rest.includes("-h");
  if (name === "--version" || name === "-v" || name === "-V" || (name === "version" && !asksHelp)) {
    process.stdout.write(`sheepdog ${version()}\n`);
    return EXIT.ok;
  }
  if (name === "version") return commandHelp(name);
  if (!COMMANDS.includes(name)) return unknownCommand(name);
  // Before `--`, a --help anywhere asks for help, whatever else is on the line.
  const options = rest.indexOf("--") < 0 ? rest : rest.slice(0, rest.indexOf("--"));
  if (options.includes("--help") || options.includes("-h")) return commandHelp(name);
  if (name === "statusline" || name === "hook") {
    // The same CommonJS bundle bin/sheepdog.cjs runs; it sets its own exit code.
    here(`./hot/${name}.cjs`);
    return undefined;
  }
  process.title = `sheepdog ${name}`;
  guardOutput(name, options);
  applyClockStep();
  return loadCommand(name).run(rest);
}

/**
 * Nothing an agent wrote reaches a terminal raw (DESIGN §18): every command's output goes
 * through the one sanitiser. A JSON answer keeps its value (what JSON.stringify leaves raw is
 * written as `\uXXXX`); lines for people show each control character as `\xNN`.
 */
function guardOutput(name: string, options: string[]): void {
  const spec = (COMMAND_SPECS as Record<string, CommandSpec>)[name];
  const json = spec?.options.json === alwaysJson || options.includes("--json");
  guardStream(process.stdout, json ? shownJson : shownText);
  guardStream(process.stderr, shownText);
}

/**
 * A reader that went away (`sheepdog journal | head -1`) ends output quietly. A command that
 * only reads ends there; one that acts (a tick, a save) goes on to its end with nothing more
 * printed, since stopping half-way through an act would be worse than a lost line.
 */
const READ_ONLY = new Set(["journal", "status", "usage", "doctor", "check", "help", "report"]);
function quietOnClosedPipe(command: string | undefined): void {
  let closed = false;
  process.stdout.on("error", (err: NodeJS.ErrnoException) => {
    if (err.code !== "EPIPE" && !closed) throw err;
    closed = true;
    if (command === undefined || READ_ONLY.has(command) || command.startsWith("-"))
      process.exit(process.exitCode ?? 0);
  });
}

quietOnClosedPipe(process.argv[2]);
finish(main(process.argv.slice(2)));
