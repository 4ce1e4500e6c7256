// sheepdog's Codex profile (DESIGN §19): `$CODEX_HOME/sheepdog.config.toml`, which `codex
// --profile sheepdog` layers over config.toml (0.171.0). Everything a manager needs to run with
// no person lives there, so a person's own Codex sessions are untouched: approval_policy never,
// sandbox danger-full-access (sheepdog writes outside the workspace: its state under
// ~/.local/state/sheepdog, the ledger's push), each program root trusted, the Stop hook
// `sheepdog hook stop` with its trusted hash (Codex skips an untrusted hook silently), and the
// rate-limit model nudge hidden (its modal would take the resume line's keys).
import { createHash } from "node:crypto";
import { join } from "node:path";
import { tomlEntries, tomlGet, tomlPath, tomlString } from "./toml.js";

export const PROFILE = "sheepdog";
export const STOP_HOOK_COMMAND = "sheepdog hook stop";
/** Seconds: the settings snippet's bound for every hook (DESIGN §18). */
export const STOP_HOOK_TIMEOUT = 10;

export function profilePath(seat: string, profile = PROFILE): string {
  return join(seat, `${profile}.config.toml`);
}

/** Hook events as hooks.json names them, and the label Codex keys their trust by. */
export const HOOK_EVENT_LABELS = {
  SessionStart: "session_start",
  UserPromptSubmit: "user_prompt_submit",
  PreToolUse: "pre_tool_use",
  PostToolUse: "post_tool_use",
  PermissionRequest: "permission_request",
  PreCompact: "pre_compact",
  PostCompact: "post_compact",
  Stop: "stop",
  SessionEnd: "session_end",
  SubagentStart: "subagent_start",
  SubagentStop: "subagent_stop",
} as const;
export type CodexHookEvent = keyof typeof HOOK_EVENT_LABELS;

/** JSON with every object's keys sorted, compact, absent fields dropped: the form Codex hashes. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(",")}]`;
  if (v && typeof v === "object") {
    const o = v as Record<string, unknown>;
    const keys = Object.keys(o)
      .filter((k) => o[k] !== undefined)
      .sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical(o[k])}`).join(",")}}`;
  }
  return JSON.stringify(v);
}

/**
 * The `trusted_hash` Codex 0.171.0 records for a hook when a person trusts it: the sha256 of
 * the canonical JSON of `{event_name, matcher?, hooks: [the handler]}`, the handler with its
 * timeout filled in (600 s by default; SessionEnd's clamped to 3 s) and `async: false`
 * (codex-rs/hooks discovery.rs `command_hook_hash`). Checked against what "Trust all" writes
 * (test/fixtures/codex-0.171.0/config-after-trust-all.toml).
 */
export function hookTrustHash(
  event: CodexHookEvent,
  hook: { command: string; timeout?: number },
  matcher?: string,
): string {
  const timeout = Math.max(1, hook.timeout ?? 600);
  const identity = {
    event_name: HOOK_EVENT_LABELS[event],
    matcher,
    hooks: [
      {
        type: "command",
        command: hook.command,
        timeout: event === "SessionEnd" ? Math.min(timeout, 3) : timeout,
        async: false,
      },
    ],
  };
  return `sha256:${createHash("sha256").update(canonical(identity)).digest("hex")}`;
}

/** The `[hooks.state."…"]` key of a hook: its file, event, group and handler. */
export function hookStateKey(file: string, event: CodexHookEvent, group: number, handler = 0) {
  return `${file}:${HOOK_EVENT_LABELS[event]}:${group}:${handler}`;
}

const HEADER = `# sheepdog's Codex profile (codex --profile ${PROFILE}), written by sheepdog init --agent codex.
# A manager started with it runs sheepdog with no person to approve it; your own codex
# sessions (without --profile) are not affected. sheepdog init adds a [projects] entry per program.
`;

/** The Stop groups a profile's text already has (`[[hooks.Stop]]`), and whether one is ours. */
function stopGroups(text: string): { count: number; ours: number | null } {
  const entries = tomlEntries(text);
  let count = 0;
  let ours: number | null = null;
  for (;;) {
    const cmd = tomlGet(entries, ["hooks", "Stop", String(count), "hooks", "0"], "command");
    const any = entries.some(
      (e) => e.table[0] === "hooks" && e.table[1] === "Stop" && e.table[2] === String(count),
    );
    if (!any) break;
    if (cmd === STOP_HOOK_COMMAND && ours === null) ours = count;
    count++;
  }
  return { count, ours };
}

/**
 * `key = value` set in the table `path` of `text`: the line replaced where the table has the
 * key, added under its header where it has not, the table appended where there is none (TOML
 * forbids a table twice, so an existing one is never added again).
 */
export function setInTable(text: string, path: string[], key: string, value: string): string {
  const lines = text.split("\n");
  const want = path.join("\u0000");
  const start = lines.findIndex((l) => {
    const m = /^\s*\[([^[\]]+|"[^"]*")+\]\s*(?:#.*)?$/.exec(l);
    if (!m || /^\s*\[\[/.test(l)) return false;
    return (
      tomlPath(
        l
          .trim()
          .replace(/^\[/, "")
          .replace(/\]\s*(?:#.*)?$/, ""),
      )?.join("\u0000") === want
    );
  });
  const line = `${key} = ${value}`;
  if (start < 0) {
    const header = `[${path.map((p) => (/^[A-Za-z0-9_-]+$/.test(p) ? p : tomlString(p))).join(".")}]`;
    return `${text.replace(/\n*$/, "\n")}\n${header}\n${line}\n`;
  }
  let end = lines.findIndex((l, i) => i > start && /^\s*\[/.test(l));
  if (end < 0) end = lines.length;
  const keyRe = new RegExp(`^\\s*${key.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\s*=`);
  const at = lines.findIndex((l, i) => i > start && i < end && keyRe.test(l));
  if (at >= 0) lines[at] = line;
  else lines.splice(start + 1, 0, line);
  return lines.join("\n");
}

/**
 * The profile's text with `root` trusted and sheepdog's Stop hook present and trusted:
 * `existing` (null: a new file) kept as it is, with what is missing appended.
 */
export function profileText(existing: string | null, file: string, root: string): string {
  let text = existing ?? HEADER;
  const entries = tomlEntries(text);
  const add = (lines: string[]) => {
    text = `${text.replace(/\n*$/, "\n")}\n${lines.join("\n")}\n`;
  };
  if (existing === null) {
    add([
      'approval_policy = "never"',
      'sandbox_mode = "danger-full-access"',
      "",
      "[notice]",
      "hide_rate_limit_model_nudge = true",
    ]);
  }
  if (tomlGet(entries, ["projects", root], "trust_level") !== "trusted")
    text = setInTable(text, ["projects", root], "trust_level", '"trusted"');
  const { count, ours } = stopGroups(text);
  const group = ours ?? count;
  if (ours === null)
    add([
      "[[hooks.Stop]]",
      "[[hooks.Stop.hooks]]",
      'type = "command"',
      `command = ${tomlString(STOP_HOOK_COMMAND)}`,
      `timeout = ${STOP_HOOK_TIMEOUT}`,
    ]);
  const key = hookStateKey(file, "Stop", group);
  const hash = hookTrustHash("Stop", { command: STOP_HOOK_COMMAND, timeout: STOP_HOOK_TIMEOUT });
  if (tomlGet(tomlEntries(text), ["hooks", "state", key], "trusted_hash") !== hash)
    text = setInTable(text, ["hooks", "state", key], "trusted_hash", tomlString(hash));
  return text;
}
