import { accessSync, constants, existsSync, realpathSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { delimiter, dirname, isAbsolute, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { hostStateDir } from "../usage/host-state.js";
import { isPositiveDuration, parseDuration } from "../util/duration.js";
import { expandHome } from "../util/fs.js";

/** How often an `--all` timer ticks unless `--interval` says otherwise (one program's is its own). */
export const ALL_INTERVAL_MS = 5 * 60_000;

/** What one installed timer ticks: one program (by its root) or every program (`--all`). */
export type Target = { kind: "program"; name: string; root: string } | { kind: "all" };

export function homeDir(env = process.env): string {
  return env.HOME || homedir();
}

/**
 * The tick's arguments after the CLI path. `--every` tells the tick how often it really runs
 * (DESIGN §6): a timer slower than the program's interval must not read as a sleep.
 */
export function tickArgs(target: Target, every: string): string[] {
  const which = target.kind === "all" ? ["--all"] : ["--program", target.root];
  return ["tick", ...which, "--every", every];
}

/** The target a tick's argv names, or null when it is not a sheepdog tick. */
export function targetOfArgs(
  args: readonly string[],
): Target | { kind: "program"; root: string } | null {
  return targetAfter(args, "tick");
}

/** The `--every` an installed tick passes, in ms; undefined for units from before it existed. */
export function everyOfArgs(args: readonly string[]): number | undefined {
  const i = args.indexOf("--every");
  const text = i >= 0 ? args[i + 1] : undefined;
  return text && isPositiveDuration(text) ? parseDuration(text) : undefined;
}

/**
 * What `<verb> --all` or `<verb> --program ROOT` (then, for a tick, `--every D`) in an installed
 * unit's argv names, or null.
 */
export function targetAfter(
  args: readonly string[],
  verb: string,
): { kind: "all" } | { kind: "program"; root: string } | null {
  const i = args.indexOf(verb);
  if (i < 0) return null;
  let rest = args.slice(i + 1);
  if (rest.length >= 2 && rest.at(-2) === "--every") rest = rest.slice(0, -2);
  if (rest.length === 1 && rest[0] === "--all") return { kind: "all" };
  if (rest.length === 2 && rest[0] === "--program" && rest[1])
    return { kind: "program", root: rest[1] };
  return null;
}

export function sameTarget(a: { kind: string; root?: string }, b: { kind: string; root?: string }) {
  return a.kind === b.kind && (a.kind === "all" || a.root === b.root);
}

/**
 * The absolute, real path of the CLI the scheduler should run: the bundle's `cli.cjs`, found
 * from this module's own location (a command's file sits one folder below it). Falls back to
 * the script node is running. Never a bare `sheepdog`: the scheduler's PATH may not have it.
 */
export function cliPath(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let up = 0; up < 3; up++) {
    const candidate = join(dir, "cli.cjs");
    if (existsSync(candidate)) return realpathSync(candidate);
    dir = dirname(dir);
  }
  return realpathSync(process.argv[1] ?? "");
}

function isExecutableFile(path: string): boolean {
  try {
    if (!statSync(path).isFile()) return false;
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The absolute directories of a PATH string (relative and `~` entries dropped: a unit has no cwd or shell). */
export function pathDirs(path: string | undefined): string[] {
  return (path ?? "").split(delimiter).filter((d) => d && isAbsolute(d));
}

/** Where `name` is found on a PATH (the first executable file), or null. */
export function which(name: string, path: string | undefined): string | null {
  if (name.includes("/")) return isExecutableFile(name) ? resolve(name) : null;
  for (const dir of pathDirs(path)) {
    const candidate = join(dir, name);
    if (isExecutableFile(candidate)) return candidate;
  }
  return null;
}

/** The package folder a CLI file belongs to (`<root>/dist/cli.cjs`, `<root>/bin/sheepdog.cjs`). */
function packageRootOf(file: string): string | null {
  try {
    return dirname(dirname(realpathSync(file)));
  } catch {
    return null;
  }
}

/** What the scheduler's PATH needs for `sheepdog` to be the CLI that ran install. */
export interface SheepdogBin {
  /** The folder to put on the unit's PATH. */
  dir: string;
  /** A two-line launcher to write there first, when no folder on this PATH has the right one. */
  shim: { path: string; content: string } | null;
}

/**
 * Where `sheepdog` resolves for what the scheduler starts (DESIGN §16): a manager runs
 * `sheepdog claim`/`save` by name, and a unit's bare PATH lacks an npm prefix's `bin/`. The
 * folder it was found in on the installing shell's PATH when that is this very CLI; else a
 * folder under the host state dir holding a launcher of this CLI (a clone run as `node
 * dist/cli.cjs`, or another sheepdog found first).
 */
export function sheepdogBin(env: NodeJS.ProcessEnv = process.env): SheepdogBin {
  const cli = cliPath();
  const found = which("sheepdog", env.PATH);
  if (found && packageRootOf(found) === packageRootOf(cli))
    return { dir: dirname(found), shim: null };
  const dir = join(hostStateDir(env), "bin");
  const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  return {
    dir,
    shim: {
      path: join(dir, "sheepdog"),
      content: `#!/bin/sh\n# sheepdog-managed: made by "sheepdog install" so that what the scheduler starts finds this CLI\nexec ${q(process.execPath)} ${q(cli)} "$@"\n`,
    },
  };
}

/** The tools a tick (or the manager it starts) may run. */
export const TOOLS = ["node", "git", "tmux", "herdr", "claude"] as const;

export const SYSTEM_PATH = ["/usr/local/bin", "/usr/bin", "/bin", "/usr/sbin", "/sbin"];
export const HOMEBREW_PATH = ["/opt/homebrew/bin"];

/**
 * A literal PATH for the scheduled tick: launchd and systemd start it with a bare PATH, so the
 * directories where the tools are found now are written out (node's own first), then the
 * system ones. Deduplicated; never `$PATH` or `~`, which neither scheduler expands.
 */
export function unitPath(
  opts: { homebrew: boolean; env?: NodeJS.ProcessEnv } = { homebrew: true },
): string {
  const env = opts.env ?? process.env;
  const dirs = [dirname(process.execPath), sheepdogBin(env).dir];
  for (const tool of TOOLS) {
    const found = which(tool, env.PATH);
    if (found) dirs.push(dirname(found));
  }
  dirs.push(...(opts.homebrew ? HOMEBREW_PATH : []), ...SYSTEM_PATH);
  return [...new Set(dirs.filter((d) => !d.includes(delimiter)))].join(delimiter);
}

/** `$SHEEPDOG_HOME` as an absolute path when set (the scheduled tick must see the same one). */
export function sheepdogHomeEnv(env = process.env): string | undefined {
  const value = env.SHEEPDOG_HOME;
  return value ? resolve(expandHome(value, homeDir(env))) : undefined;
}

/**
 * The tmux server this shell's launcher talks to (`$SHEEPDOG_TMUX_SOCKET`, `-L NAME`, in
 * `$TMUX_TMPDIR`), when set: a scheduled tick without them starts its managers on another tmux
 * server than the one `tmux attach` from here reaches (issue 33).
 */
export const TMUX_VARS = ["SHEEPDOG_TMUX_SOCKET", "TMUX_TMPDIR"] as const;
export type TmuxVar = (typeof TMUX_VARS)[number];

/** This shell's tmux variables (TMUX_TMPDIR as an absolute path), the set ones only. */
export function tmuxEnvOf(env = process.env): Partial<Record<TmuxVar, string>> {
  const out: Partial<Record<TmuxVar, string>> = {};
  if (env.SHEEPDOG_TMUX_SOCKET) out.SHEEPDOG_TMUX_SOCKET = env.SHEEPDOG_TMUX_SOCKET;
  if (env.TMUX_TMPDIR) out.TMUX_TMPDIR = resolve(expandHome(env.TMUX_TMPDIR, homeDir(env)));
  return out;
}

/** The tmux variables of a unit's or plist's environment. */
export function tmuxVarsIn(env: Record<string, unknown>): Partial<Record<TmuxVar, string>> {
  const out: Partial<Record<TmuxVar, string>> = {};
  for (const v of TMUX_VARS) if (typeof env[v] === "string") out[v] = env[v] as string;
  return out;
}

/**
 * `$SHEEPDOG_STATE_DIR` as an absolute path when set: statuslines write usage readings there,
 * so the scheduled tick must read the same folder or it never sees a limit.
 */
export function sheepdogStateDirEnv(env = process.env): string | undefined {
  const value = env.SHEEPDOG_STATE_DIR;
  return value ? resolve(expandHome(value, homeDir(env))) : undefined;
}
