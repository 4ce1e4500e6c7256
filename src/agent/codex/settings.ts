// What a Codex manager's own settings are, as its command would see them (0.171.0): config.toml
// in the seat, the profile its argv names (`--profile X`: `$CODEX_HOME/X.config.toml` on top),
// then `-c key=value` overrides, then `-a`, `-s` and
// `--dangerously-bypass-approvals-and-sandbox`. Read only: for doctor (DESIGN §19).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { codexArgv } from "../../config/codex-argv.js";
import { hookStateKey, hookTrustHash, profilePath, STOP_HOOK_COMMAND } from "./profile.js";
import { type TomlEntry, tomlEntries, tomlGet } from "./toml.js";

export interface CodexSettings {
  /** The files read, in order, and why one could not be. */
  files: { path: string; problem: string | null }[];
  approval: { value: string | null; from: string };
  sandbox: { value: string | null; from: string };
  /** The folders whose trust_level is "trusted". */
  trusted: string[];
  /** sheepdog's Stop hook: where it is defined and whether its trusted hash is recorded. */
  stopHook: { file: string; trusted: boolean } | null;
}

interface Layer {
  path: string;
  entries: TomlEntry[];
}

function readLayer(path: string, files: CodexSettings["files"]): Layer | null {
  try {
    const layer = { path, entries: tomlEntries(readFileSync(path, "utf8")) };
    files.push({ path, problem: null });
    return layer;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    files.push({ path, problem: code === "ENOENT" ? "does not exist" : (err as Error).message });
    return null;
  }
}

/** The hooks.json groups of an event holding sheepdog's Stop command. */
function hooksJsonStop(path: string): { group: number; handler: number; timeout?: number } | null {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, "utf8"));
  } catch {
    return null;
  }
  const groups = (raw as { hooks?: { Stop?: unknown } })?.hooks?.Stop;
  if (!Array.isArray(groups)) return null;
  for (const [g, group] of groups.entries()) {
    const hooks = (group as { hooks?: unknown })?.hooks;
    if (!Array.isArray(hooks)) continue;
    for (const [h, hook] of hooks.entries()) {
      const o = hook as { command?: unknown; timeout?: unknown };
      if (o?.command === STOP_HOOK_COMMAND)
        return {
          group: g,
          handler: h,
          ...(typeof o.timeout === "number" ? { timeout: o.timeout } : {}),
        };
    }
  }
  return null;
}

/** The settings a Codex manager run by `argv` gets in `seat`. */
export function codexSettings(seat: string, argv: readonly string[]): CodexSettings {
  const a = codexArgv(argv);
  const files: CodexSettings["files"] = [];
  const layers: Layer[] = [];
  const base = readLayer(join(seat, "config.toml"), files);
  if (base) layers.push(base);
  if (a.profile) {
    const p = readLayer(profilePath(seat, a.profile), files);
    if (p) layers.push(p);
  }
  const pick = (key: string) => {
    let out: { value: string | null; from: string } = { value: null, from: "Codex's default" };
    for (const l of layers) {
      const v = tomlGet(l.entries, [], key);
      if (typeof v === "string") out = { value: v, from: l.path };
    }
    for (const o of a.overrides) {
      const m = /^([A-Za-z0-9_.-]+)\s*=\s*(.*)$/s.exec(o);
      if (m?.[1] !== key) continue;
      const raw = (m[2] ?? "").trim();
      const v = tomlEntries(`x = ${raw}`)[0]?.value;
      out = { value: typeof v === "string" ? v : raw, from: `-c ${o}` };
    }
    return out;
  };
  const approval = pick("approval_policy");
  const sandbox = pick("sandbox_mode");
  if (a.approval) Object.assign(approval, { value: a.approval, from: `-a ${a.approval}` });
  if (a.sandbox) Object.assign(sandbox, { value: a.sandbox, from: `-s ${a.sandbox}` });
  if (a.bypass) {
    const from = "--dangerously-bypass-approvals-and-sandbox";
    Object.assign(approval, { value: "never", from });
    Object.assign(sandbox, { value: "danger-full-access", from });
  }
  const trusted = layers.flatMap((l) =>
    l.entries
      .filter((e) => e.table[0] === "projects" && e.table.length === 2 && e.key === "trust_level")
      .filter((e) => e.value === "trusted")
      .map((e) => e.table[1] as string),
  );
  return { files, approval, sandbox, trusted, stopHook: stopHookOf(seat, layers) };
}

/** sheepdog's Stop hook (a profile's inline `[[hooks.Stop]]`, or hooks.json) and its trust. */
function stopHookOf(seat: string, layers: Layer[]): CodexSettings["stopHook"] {
  // The trusted hashes recorded for a hook's key, in any layer (Codex reads them all).
  const recorded = (key: string) =>
    layers.map((l) => tomlGet(l.entries, ["hooks", "state", key], "trusted_hash"));
  for (const l of layers)
    for (let g = 0; ; g++) {
      const inGroup = l.entries.filter(
        (e) => e.table[0] === "hooks" && e.table[1] === "Stop" && e.table[2] === String(g),
      );
      if (inGroup.length === 0) break;
      for (let h = 0; ; h++) {
        const table = ["hooks", "Stop", String(g), "hooks", String(h)];
        const command = tomlGet(l.entries, table, "command");
        if (command === undefined) break;
        if (command !== STOP_HOOK_COMMAND) continue;
        const timeout = tomlGet(l.entries, table, "timeout");
        const hash = hookTrustHash("Stop", {
          command,
          ...(typeof timeout === "number" ? { timeout } : {}),
        });
        return {
          file: l.path,
          trusted: recorded(hookStateKey(l.path, "Stop", g, h)).includes(hash),
        };
      }
    }
  const json = join(seat, "hooks.json");
  const found = hooksJsonStop(json);
  if (!found) return null;
  const hash = hookTrustHash("Stop", {
    command: STOP_HOOK_COMMAND,
    ...(found.timeout !== undefined ? { timeout: found.timeout } : {}),
  });
  const key = hookStateKey(json, "Stop", found.group, found.handler);
  return { file: json, trusted: recorded(key).includes(hash) };
}
