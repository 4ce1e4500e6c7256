import { join } from "node:path";
import { type Target, type TmuxVar, tickArgs, tmuxVarsIn } from "./target.js";

/** The first line of every unit sheepdog writes (uninstall removes only files carrying it). */
export const SYSTEMD_MARKER =
  '# sheepdog-managed: made by "sheepdog install systemd"; "sheepdog uninstall systemd" removes it';

/** The service keys sheepdog sets; see docs/install.md ("The service's keys") for why each one. */
export interface ServiceUnit {
  Unit: { Description: string };
  Service: {
    Type: "oneshot";
    ExecStart: string[];
    Environment: Record<string, string>;
    TimeoutStartSec: string;
    KillMode: "process";
  };
}

export interface TimerUnit {
  Unit: { Description: string };
  Timer: { OnCalendar: string; Persistent: true; AccuracySec: string; Unit: string };
  Install: { WantedBy: "timers.target" };
}

export function unitBaseOf(target: Target): string {
  return target.kind === "all" ? "sheepdog" : `sheepdog-${target.name}`;
}

/** Units ticking a program or all of them: `sheepdog.timer`, `sheepdog-<name>.service`. */
export const OUR_UNIT_NAME = /^sheepdog(-[a-z0-9][a-z0-9-]{0,62})?\.(service|timer)$/;

/** `$XDG_CONFIG_HOME/systemd/user` (default `~/.config`): where the user manager looks. */
export function userUnitDir(home: string, env = process.env): string {
  const xdg = env.XDG_CONFIG_HOME;
  return join(xdg?.startsWith("/") ? xdg : join(home, ".config"), "systemd", "user");
}

/** A `Persistent=` timer's last-trigger stamp: `$XDG_DATA_HOME/systemd/timers/stamp-<timer>`. */
export function timerStampPath(home: string, base: string, env = process.env): string {
  const xdg = env.XDG_DATA_HOME;
  const data = xdg?.startsWith("/") ? xdg : join(home, ".local", "share");
  return join(data, "systemd", "timers", `stamp-${base}.timer`);
}

/**
 * A hung tick must not hold the timer forever, but the tick's own deadline (4 min, the tick
 * lock's) must fire first: that path journals `tick_failed` and pages, while systemd's
 * timeout only sends SIGTERM (which the tick also journals, but later than it could have).
 * So: one program's deadline plus a minute.
 */
export const TICK_TIMEOUT = "5min";

/**
 * `tick --all` runs its programs one after another, each pass with its own 4-min deadline
 * (a herdr start alone can take ~165 s), so one program's timeout would cut a healthy run of
 * several slow starts short. Not `infinity`: a hung run must not block every later tick (a
 * oneshot that is still running swallows the timer's next activations). 30 min covers seven
 * programs that each use their whole deadline, and is still only six missed 5-min slots when
 * something hangs for good; then SIGTERM reaches the tick, which journals `tick_failed` for
 * the program in progress, releases its lock and pages.
 */
export const TICK_TIMEOUT_ALL = "30min";

export function buildUnits(opts: {
  target: Target;
  node: string;
  cli: string;
  onCalendar: string;
  /** The interval it ticks at, passed as `tick --every`. */
  every: string;
  path: string;
  sheepdogHome?: string;
  stateDir?: string;
  tmux?: Partial<Record<TmuxVar, string>>;
}): { service: ServiceUnit; timer: TimerUnit; base: string } {
  const base = unitBaseOf(opts.target);
  const what =
    opts.target.kind === "all" ? "every sheepdog program" : `sheepdog program ${opts.target.name}`;
  const env: Record<string, string> = { PATH: opts.path };
  if (opts.sheepdogHome) env.SHEEPDOG_HOME = opts.sheepdogHome;
  if (opts.stateDir) env.SHEEPDOG_STATE_DIR = opts.stateDir;
  Object.assign(env, opts.tmux ?? {});
  return {
    base,
    service: {
      Unit: { Description: `sheepdog watchdog tick for ${what}` },
      Service: {
        Type: "oneshot",
        ExecStart: [opts.node, opts.cli, ...tickArgs(opts.target, opts.every)],
        Environment: env,
        TimeoutStartSec: opts.target.kind === "all" ? TICK_TIMEOUT_ALL : TICK_TIMEOUT,
        KillMode: "process",
      },
    },
    timer: {
      Unit: { Description: `Run the sheepdog watchdog tick for ${what}` },
      Timer: {
        OnCalendar: opts.onCalendar,
        Persistent: true,
        AccuracySec: "15s",
        Unit: `${base}.service`,
      },
      Install: { WantedBy: "timers.target" },
    },
  };
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: a unit line cannot carry them
const CONTROL = /[\u0000-\u001f\u007f]/;

/** `%` starts a specifier everywhere in a unit file; `%%` is a literal percent sign. */
function escapeSpecifiers(text: string): string {
  return text.replace(/%/g, "%%");
}

function quoted(text: string): string {
  return `"${text.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
}

/**
 * One word of a command line (systemd.service(5) "Command lines"): words split on whitespace,
 * so a word with a space, quote or backslash is double-quoted with C escapes; `%` starts a
 * specifier (`%%` is literal) and, in arguments but not in the executable's path (as
 * systemd-analyze 252 shows), `$` a variable (`$$`).
 */
export function quoteExecWord(word: string, position = 1): string {
  if (CONTROL.test(word)) throw new Error(`unit: control character in ${JSON.stringify(word)}`);
  const specifiersEscaped = escapeSpecifiers(word);
  const escaped = position === 0 ? specifiersEscaped : specifiersEscaped.replace(/\$/g, "$$$$");
  return /^[A-Za-z0-9_@%+=:,./$-]+$/.test(escaped) && word !== ";" ? escaped : quoted(escaped);
}

/** One `Environment=` assignment, quoted when it has a space, quote or backslash. */
export function quoteAssignment(name: string, value: string): string {
  if (CONTROL.test(value)) throw new Error(`unit: control character in ${name}`);
  const text = escapeSpecifiers(`${name}=${value}`);
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(text) ? text : quoted(text);
}

type Section = Record<string, string | boolean | string[] | Record<string, string>>;

function renderUnit(unit: Record<string, Section>): string {
  const lines = [SYSTEMD_MARKER];
  for (const [section, keys] of Object.entries(unit)) {
    lines.push("", `[${section}]`);
    for (const [key, value] of Object.entries(keys)) {
      if (key === "ExecStart" && Array.isArray(value))
        lines.push(`ExecStart=${value.map((w, i) => quoteExecWord(w, i)).join(" ")}`);
      else if (typeof value === "object" && !Array.isArray(value))
        for (const [name, v] of Object.entries(value))
          lines.push(`${key}=${quoteAssignment(name, v)}`);
      else if (typeof value === "boolean") lines.push(`${key}=${value ? "true" : "false"}`);
      else if (typeof value === "string") {
        if (CONTROL.test(value)) throw new Error(`unit: control character in ${key}`);
        lines.push(`${key}=${escapeSpecifiers(value)}`);
      }
    }
  }
  return `${lines.join("\n")}\n`;
}

export const renderService = (u: ServiceUnit) =>
  renderUnit(u as unknown as Record<string, Section>);
export const renderTimer = (u: TimerUnit) => renderUnit(u as unknown as Record<string, Section>);

/** Splits a unit value into words as systemd does (quotes, C escapes, `%%`, `$$`). */
export function splitWords(value: string, opts: { dollar: boolean } = { dollar: true }): string[] {
  const words: string[] = [];
  let i = 0;
  while (i < value.length) {
    while (i < value.length && /\s/.test(value[i] as string)) i++;
    if (i >= value.length) break;
    let word = "";
    const quote = value[i] === '"' || value[i] === "'" ? value[i++] : null;
    for (; i < value.length; i++) {
      const c = value[i] as string;
      if (quote ? c === quote : /\s/.test(c)) {
        if (quote) i++;
        break;
      }
      if (c === "\\" && i + 1 < value.length) {
        const n = value[++i] as string;
        word += n === "n" ? "\n" : n === "t" ? "\t" : n;
      } else word += c;
    }
    const literal = word.replace(/%%/g, "%");
    // `$$` is an escape in arguments only, never in the executable's path (the first word)
    words.push(opts.dollar && words.length > 0 ? literal.replace(/\$\$/g, "$") : literal);
  }
  return words;
}

/** A unit file as `section → key → values` (a key may repeat, as `Environment=` does). */
export function parseUnit(text: string): Map<string, Map<string, string[]>> {
  const sections = new Map<string, Map<string, string[]>>();
  let current: Map<string, string[]> | undefined;
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (!line || line.startsWith("#") || line.startsWith(";")) continue;
    const header = /^\[(.+)\]$/.exec(line);
    if (header) {
      current = new Map();
      sections.set(header[1] as string, current);
      continue;
    }
    const eq = line.indexOf("=");
    if (eq < 0 || !current) continue;
    const key = line.slice(0, eq).trim();
    current.set(key, [...(current.get(key) ?? []), line.slice(eq + 1).trim()]);
  }
  return sections;
}

export interface InstalledService {
  args: string[];
  path: string | undefined;
  sheepdogHome: string | undefined;
  stateDir: string | undefined;
  tmux: Partial<Record<TmuxVar, string>>;
}

export function isOurUnit(text: string): boolean {
  return text.startsWith(`${SYSTEMD_MARKER}\n`);
}

/** Reads a service unit sheepdog wrote: its command and environment; null if not ours. */
export function readOurService(text: string): InstalledService | null {
  if (!isOurUnit(text)) return null;
  const service = parseUnit(text).get("Service");
  const exec = service?.get("ExecStart")?.at(-1);
  if (!exec) return null;
  const env: Record<string, string> = {};
  for (const line of service?.get("Environment") ?? []) {
    // `$` is literal in Environment= (no variable expansion there)
    for (const assignment of splitWords(line, { dollar: false })) {
      const eq = assignment.indexOf("=");
      if (eq > 0) env[assignment.slice(0, eq)] = assignment.slice(eq + 1);
    }
  }
  return {
    args: splitWords(exec),
    path: env.PATH,
    sheepdogHome: env.SHEEPDOG_HOME,
    stateDir: env.SHEEPDOG_STATE_DIR,
    tmux: tmuxVarsIn(env),
  };
}
