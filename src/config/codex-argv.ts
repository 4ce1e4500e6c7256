// How an argv runs the Codex CLI (0.171.0's `codex --help`), for the loader and the launchers
// (DESIGN §19): whether `--no-daemon` comes before any subcommand, and whether it starts the
// interactive TUI (no `exec`) or runs once (`codex exec`).
import { basename } from "node:path";
import { executableOf } from "./claude-argv.js";

/** Top-level options that take a value (`-c key=value`, `--profile NAME`…). */
const VALUED = new Set([
  "-c",
  "--config",
  "--enable",
  "--disable",
  "--remote",
  "--remote-auth-token-env",
  "-i",
  "--image",
  "-m",
  "--model",
  "--local-provider",
  "-p",
  "--profile",
  "-s",
  "--sandbox",
  "-C",
  "--cd",
  "--add-dir",
  "-a",
  "--ask-for-approval",
]);

/** Subcommands that run once and exit (no terminal needed). */
const ONE_SHOT = new Set(["exec", "e", "review"]);

/** Whether the argv runs `codex` (bare or a path ending in `/codex`). */
export function runsCodex(argv: readonly string[]): boolean {
  return basename(executableOf(argv)) === "codex";
}

export interface CodexArgv {
  /** `--no-daemon` among the top-level options (after a subcommand, 0.171.0 refuses it). */
  noDaemon: boolean;
  /** The subcommand (`exec`, `resume`…), or null for the TUI with an optional prompt. */
  subcommand: string | null;
  /** `--profile NAME` / `-p NAME`, when given. */
  profile: string | null;
  /** `-c key=value` overrides, in order. */
  overrides: string[];
  /** `-a`/`--ask-for-approval`, `-s`/`--sandbox`, `--dangerously-bypass-approvals-and-sandbox`. */
  approval: string | null;
  sandbox: string | null;
  bypass: boolean;
}

const SUBCOMMANDS = new Set([
  "exec",
  "e",
  "review",
  "resume",
  "fork",
  "agents",
  "login",
  "logout",
  "mcp",
  "plugin",
  "app-server",
  "remote-control",
  "completion",
  "update",
  "doctor",
  "sandbox",
  "debug",
  "apply",
  "a",
  "queue",
  "archive",
  "delete",
  "unarchive",
  "cloud",
  "exec-server",
  "features",
  "help",
]);

/** Reads a codex argv's top-level options, up to its subcommand or prompt. */
export function codexArgv(argv: readonly string[]): CodexArgv {
  const out: CodexArgv = {
    noDaemon: false,
    subcommand: null,
    profile: null,
    overrides: [],
    approval: null,
    sandbox: null,
    bypass: false,
  };
  const exe = argv.indexOf(executableOf(argv));
  for (let i = exe + 1; i < argv.length; i++) {
    const a = argv[i] as string;
    const [flag, inline] = a.startsWith("--") && a.includes("=") ? a.split(/=(.*)/s) : [a, null];
    if (flag === "--no-daemon") out.noDaemon = true;
    else if (flag === "--dangerously-bypass-approvals-and-sandbox") out.bypass = true;
    else if (flag && VALUED.has(flag)) {
      const value = inline ?? argv[++i] ?? "";
      if (flag === "-p" || flag === "--profile") out.profile = value;
      else if (flag === "-c" || flag === "--config") out.overrides.push(value);
      else if (flag === "-a" || flag === "--ask-for-approval") out.approval = value;
      else if (flag === "-s" || flag === "--sandbox") out.sandbox = value;
    } else if (a === "--") break;
    else if (!a.startsWith("-")) {
      if (SUBCOMMANDS.has(a)) out.subcommand = a;
      break; // the subcommand, or the prompt
    }
  }
  return out;
}

/** Codex runs once (`exec`) rather than as the TUI, which needs a terminal. */
export function isOneShotCodex(argv: readonly string[]): boolean {
  const sub = codexArgv(argv).subcommand;
  return sub !== null && ONE_SHOT.has(sub);
}
