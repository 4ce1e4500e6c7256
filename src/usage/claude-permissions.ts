// Whether a manager's Claude Code may run `sheepdog …` with no person at the keyboard (issue
// 33). Measured on the real CLI, 2.1.328 and 2.1.332, API key and OAuth, against a scripted
// model on 127.0.0.1 (the two versions behave the same):
// - With no rule, every mode leaves the call to a person or refuses it: auto mode (the default of
//   an interactive session) asks "Auto mode can't check actions in this session" behind a
//   gateway; `default`/`manual`, `acceptEdits` and `plan` ask "Do you want to proceed?"; `dontAsk`
//   and print mode (`-p`) refuse it ("…running in don't ask mode", "This command requires
//   approval").
// - An allow rule `Bash(sheepdog:*)` (or `Bash(sheepdog *)`) in any settings file the session
//   reads (the seat's settings.json, the folder's .claude/settings.json or settings.local.json)
//   runs it in every mode, auto mode and print mode included.
// - Auto mode sets aside an allow rule for the whole tool (`Bash`, `Bash(*)`): it asks all the
//   same. `default` mode and print mode honour it.
// `--dangerously-skip-permissions` would run it too, but Claude Code refuses it as root.
import { readFileSync } from "node:fs";
import { join } from "node:path";

/** The allow rule `init` writes into the program's `.claude/settings.json`. */
export const SHEEPDOG_ALLOW_RULE = "Bash(sheepdog:*)";

/** What a manager runs by name (init's prompt placeholder): each must run unasked. */
export const MANAGER_COMMANDS = [
  "sheepdog claim acquire",
  "sheepdog save",
  "sheepdog wait",
  'sheepdog hand-over --note "context full"',
] as const;

/** One settings file Claude Code reads, in precedence order (the first wins a `defaultMode`). */
export interface SettingsLayer {
  /** Its path, for messages. */
  path: string;
  /** Its parsed content; null when absent. */
  settings: unknown;
  /** Why it could not be read (it exists but is no JSON object). */
  error?: string;
}

export interface PermissionInput {
  /** The manager's argv after the executable (`--permission-mode …`, `-p`, `{prompt}`, …). */
  args: readonly string[];
  /** Managed, local, project, then user (the seat): Claude Code's order of precedence. */
  layers: readonly SettingsLayer[];
  /** sheepdog runs as root, where Claude Code refuses `--dangerously-skip-permissions`. */
  root: boolean;
}

export type PermissionVerdict =
  | { ok: true; how: string }
  | { ok: false; command: string; why: string };

const MODES = ["auto", "default", "manual", "acceptEdits", "plan", "dontAsk", "bypassPermissions"];

/** The value of `--flag X` or `--flag=X` in an argv, the last one given. */
function flagValues(args: readonly string[], names: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    for (const n of names) {
      if (a === n && i + 1 < args.length) out.push(args[i + 1] as string);
      else if (a.startsWith(`${n}=`)) out.push(a.slice(n.length + 1));
    }
  }
  return out;
}

/** Rules given on the command line (`--allowedTools "Bash(git:*) Read"`, comma or space lists). */
function cliRules(args: readonly string[], names: readonly string[]): string[] {
  return flagValues(args, names).flatMap((v) => v.split(/,\s*|\s+(?![^(]*\))/).filter(Boolean));
}

function permissionsOf(layer: SettingsLayer): Record<string, unknown> {
  const p = (layer.settings as { permissions?: unknown } | null)?.permissions;
  return p && typeof p === "object" && !Array.isArray(p) ? (p as Record<string, unknown>) : {};
}

function rulesOf(layer: SettingsLayer, kind: "allow" | "deny" | "ask"): string[] {
  const list = permissionsOf(layer)[kind];
  return Array.isArray(list) ? list.filter((r): r is string => typeof r === "string") : [];
}

/** The mode the session starts in, and where it came from. */
export function permissionMode(
  args: readonly string[],
  layers: readonly SettingsLayer[],
): { mode: string; from: string } {
  if (args.includes("--dangerously-skip-permissions"))
    return { mode: "bypassPermissions", from: "--dangerously-skip-permissions" };
  const flag = flagValues(args, ["--permission-mode"]).at(-1);
  if (flag) return { mode: flag, from: `--permission-mode ${flag}` };
  for (const layer of layers) {
    const m = permissionsOf(layer).defaultMode;
    if (typeof m === "string" && MODES.includes(m))
      return { mode: m, from: `permissions.defaultMode in ${layer.path}` };
  }
  // Print mode is no auto mode: it honours a rule for the whole tool (measured, 2.1.328/332).
  if (args.includes("-p") || args.includes("--print"))
    return { mode: "default", from: "print mode's default" };
  return { mode: "auto", from: "Claude Code's default for an interactive session (auto mode)" };
}

/** A Bash rule's content: null for the whole tool, else what is in the parentheses. */
function bashContent(rule: string): string | null | undefined {
  const r = rule.trim();
  if (r === "Bash") return null;
  const m = /^Bash\((.*)\)$/s.exec(r);
  return m ? (m[1] as string) : undefined;
}

/** Whether a rule covers every command (auto mode sets such rules aside). */
function coversAll(content: string | null): boolean {
  return content === null || content.trim() === "" || content.trim() === "*" || content === ":*";
}

/** Whether a Bash rule's content matches a command, as Claude Code matches them. */
export function bashRuleMatches(rule: string, command: string): boolean {
  const content = bashContent(rule);
  if (content === undefined) return false;
  if (coversAll(content)) return true;
  const c = content as string;
  // The older prefix form: `sheepdog:*` is `sheepdog` alone or followed by arguments.
  if (c.endsWith(":*")) {
    const prefix = c.slice(0, -2);
    return command === prefix || command.startsWith(`${prefix} `);
  }
  if (!c.includes("*")) return command === c;
  // Wildcards: `*` is any run of characters; `sheepdog *` also matches `sheepdog` alone.
  const parts = c.split("*").map((p) => p.replace(/[.+?^${}()|[\]\\]/g, "\\$&"));
  const re = new RegExp(`^${parts.join(".*")}$`, "s");
  return re.test(command) || (c.endsWith(" *") && command === c.slice(0, -2));
}

/**
 * Whether every command a manager runs would run with no person, under the mode and rules the
 * session would have (pure: the caller reads the files).
 */
export function sheepdogPermission(input: PermissionInput): PermissionVerdict {
  const { args, layers } = input;
  const { mode, from } = permissionMode(args, layers);
  const print = args.includes("-p") || args.includes("--print");
  if (mode === "bypassPermissions") {
    if (input.root)
      return {
        ok: false,
        command: MANAGER_COMMANDS[0],
        why: `${from}: Claude Code refuses to run as root with bypassPermissions`,
      };
    return { ok: true, how: `${from}: every call runs unasked` };
  }
  const deny = [...cliRules(args, ["--disallowedTools", "--disallowed-tools"])];
  const ask: string[] = [];
  const allow = [...cliRules(args, ["--allowedTools", "--allowed-tools"])];
  const where = new Map<string, string>();
  for (const r of allow) where.set(r, "the command line");
  for (const layer of layers) {
    deny.push(...rulesOf(layer, "deny"));
    ask.push(...rulesOf(layer, "ask"));
    for (const r of rulesOf(layer, "allow")) {
      allow.push(r);
      if (!where.has(r)) where.set(r, layer.path);
    }
  }
  let how = "";
  for (const command of MANAGER_COMMANDS) {
    const denied = deny.find((r) => bashRuleMatches(r, command));
    if (denied) return { ok: false, command, why: `the deny rule ${denied} refuses it` };
    const asked = ask.find((r) => bashRuleMatches(r, command));
    if (asked) return { ok: false, command, why: `the ask rule ${asked} asks a person first` };
    const matching = allow.filter((r) => bashRuleMatches(r, command));
    const usable =
      mode === "auto" ? matching.filter((r) => !coversAll(bashContent(r) ?? "")) : matching;
    if (usable.length === 0) {
      const setAside =
        matching.length > 0
          ? `; auto mode sets aside ${matching[0]} (a rule for every command)`
          : "; no allow rule covers it";
      const outcome =
        mode === "dontAsk"
          ? "Claude Code refuses it (dontAsk mode)"
          : print
            ? "Claude Code refuses it (print mode asks nobody)"
            : mode === "auto"
              ? "auto mode asks a person (its safety check cannot run behind a gateway, and nothing allows it)"
              : "Claude Code asks a person (Do you want to proceed?)";
      return { ok: false, command, why: `${outcome}: mode ${mode} (${from})${setAside}` };
    }
    how ||= `mode ${mode} (${from}); ${usable[0]} in ${where.get(usable[0] as string) ?? "settings"} allows it`;
  }
  return { ok: true, how };
}

/** A settings file as a layer (absent: no settings; unreadable: said, and read as none). */
export function readLayer(path: string): SettingsLayer {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return { path, settings: null };
    return { path, settings: null, error: (err as Error).message };
  }
  try {
    const v = JSON.parse(text);
    return v && typeof v === "object" && !Array.isArray(v)
      ? { path, settings: v }
      : { path, settings: null, error: "not a JSON object" };
  } catch (err) {
    return { path, settings: null, error: `invalid JSON: ${(err as Error).message}` };
  }
}

/** Where managed settings live (they win over every other file). */
export function managedSettingsPath(platform = process.platform): string {
  return platform === "darwin"
    ? "/Library/Application Support/ClaudeCode/managed-settings.json"
    : "/etc/claude-code/managed-settings.json";
}

/** The settings files a session in `cwd` reads with `seat` as its config folder, in precedence order. */
export function settingsLayers(cwd: string, seat: string): SettingsLayer[] {
  return [
    readLayer(managedSettingsPath()),
    readLayer(join(cwd, ".claude", "settings.local.json")),
    readLayer(join(cwd, ".claude", "settings.json")),
    readLayer(join(seat, "settings.json")),
  ];
}
