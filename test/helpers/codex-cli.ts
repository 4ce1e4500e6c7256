import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { HOOK_EVENT_LABELS, hookTrustHash } from "../../src/agent/codex/profile.js";
import { ClaudeWindow } from "./claude-code.js";
import type { FakeOpenAI } from "./fake-openai.js";
import { cacheRoot, installOnce } from "./npm-cache.js";

// The real Codex CLI for tests: the pinned npm package and its platform binary in a cache
// folder (installed on first use), and CODEX_HOMEs that run it offline against the fake
// Responses API (test/helpers/fake-openai.ts). Shapes as 0.171.0 has them.

/** The version the tests pin; `CODEX_VERSION` overrides it (the capture script). */
export const CODEX_VERSION = process.env.CODEX_VERSION || "0.171.0";

export const CODEX_INSTALL = `npm install --prefix ~/.cache/sheepdog/codex-${CODEX_VERSION} @openai/codex@${CODEX_VERSION}`;

/** The platform package `@openai/codex` takes as an optional dependency, and its target. */
const PLATFORMS: Record<string, { pkg: string; triple: string }> = {
  "linux-x64": { pkg: "@openai/codex-linux-x64", triple: "x86_64-unknown-linux-musl" },
  "linux-arm64": { pkg: "@openai/codex-linux-arm64", triple: "aarch64-unknown-linux-musl" },
  "darwin-x64": { pkg: "@openai/codex-darwin-x64", triple: "x86_64-apple-darwin" },
  "darwin-arm64": { pkg: "@openai/codex-darwin-arm64", triple: "aarch64-apple-darwin" },
};

function runs(bin: string): boolean {
  try {
    const out = execFileSync(bin, ["--version"], {
      encoding: "utf8",
      timeout: 30_000,
      env: { PATH: process.env.PATH ?? "" },
    });
    return out.trim() === `codex-cli ${CODEX_VERSION}`;
  } catch {
    return false;
  }
}

/**
 * The path of the pinned native `codex`, installing the package on first use; `why` says what
 * failed (null when it is there). It is the platform package's `vendor/<triple>/bin/codex`,
 * run directly: `bin/codex.js` is a node launcher that, on node 20 (no `process.execve`),
 * stays alive as a 40 MB parent and forwards signals; a test wants the pid of codex itself.
 */
export async function codexBinary(): Promise<{ path: string | null; why: string | null }> {
  const platform = PLATFORMS[`${process.platform}-${process.arch}`];
  if (!platform)
    return { path: null, why: `no Codex package for ${process.platform}-${process.arch}` };
  const folder = join(cacheRoot(), `codex-${CODEX_VERSION}`);
  const bin = join(
    folder,
    "node_modules",
    ...platform.pkg.split("/"),
    "vendor",
    platform.triple,
    "bin",
    "codex",
  );
  const { why } = await installOnce({
    folder,
    spec: `@openai/codex@${CODEX_VERSION}`,
    ready: () => existsSync(bin) && runs(bin),
  });
  return why ? { path: null, why } : { path: bin, why: null };
}

/** Hook events as hooks.json names them, and the label Codex keys their trust by. */
export const HOOK_EVENTS = HOOK_EVENT_LABELS;
export type HookEvent = keyof typeof HOOK_EVENTS;

/** One command hook as hooks.json holds it. */
export interface CommandHook {
  type: "command";
  command: string;
  /** Seconds (Codex's default: 600). */
  timeout?: number;
}

// The `trusted_hash` "Trust all" writes: src/agent/codex/profile.ts (init writes the same).
export { hookTrustHash };

/** A TOML basic string (JSON's escapes are TOML's). */
const q = (s: string) => JSON.stringify(s);
type TomlScalar = string | number | boolean | string[];
const tomlValue = (v: TomlScalar): string =>
  Array.isArray(v) ? `[${v.map(q).join(", ")}]` : typeof v === "string" ? q(v) : String(v);

export interface CodexHomeOptions {
  /** A fresh folder: the home (`home/`) and `CODEX_HOME` (`home/.codex`) go inside it. */
  dir: string;
  api: FakeOpenAI;
  /** Folders whose "Trust this folder?" counts as answered (`[projects."…"] trust_level`). */
  trusted?: string[];
  /** A catalog model (0.171.0 warns "Model metadata … not found" for others). */
  model?: string;
  /** Default "never": the manager runs `sheepdog` with no person to approve it; null: unset. */
  approvalPolicy?: "never" | "on-request" | "untrusted" | null;
  /** Default "danger-full-access"; null: unset (a profile sets it). */
  sandboxMode?: "danger-full-access" | "workspace-write" | "read-only" | null;
  /** hooks.json entries, one command per event. */
  hooks?: Partial<Record<HookEvent, CommandHook>>;
  /** Default true: each hook's `trusted_hash` pre-seeded, so Codex runs it without asking. */
  trustHooks?: boolean;
  /** The `notify` argv (Codex appends one JSON argument). */
  notify?: string[];
  /** More top-level keys: `model_context_window`, `model_auto_compact_token_limit`… */
  top?: Record<string, TomlScalar>;
  /** More `[model_providers.fake]` keys: `stream_idle_timeout_ms` (a hung stream's wait)… */
  provider?: Record<string, TomlScalar>;
  /** Default true: the "Switch to …?" modal after a limit is not shown; null: unset (a profile sets it). */
  hideRateLimitNudge?: boolean | null;
}

export interface CodexHome {
  home: string;
  codexHome: string;
  configPath: string;
  hooksPath: string;
}

/** Writes config.toml (the fake as the provider, permissions, trust) and hooks.json. */
export function makeCodexHome(o: CodexHomeOptions): CodexHome {
  const home = join(o.dir, "home");
  const codexHome = join(home, ".codex");
  mkdirSync(codexHome, { recursive: true });
  const configPath = join(codexHome, "config.toml");
  const hooksPath = join(codexHome, "hooks.json");
  // Top-level keys must come before the first [table].
  const lines: string[] = [];
  if (o.notify) lines.push(`notify = ${tomlValue(o.notify)}`);
  const top: Record<string, TomlScalar> = {
    model: o.model ?? "gpt-6.2-sol",
    model_provider: "fake",
    ...(o.approvalPolicy === null ? {} : { approval_policy: o.approvalPolicy ?? "never" }),
    ...(o.sandboxMode === null ? {} : { sandbox_mode: o.sandboxMode ?? "danger-full-access" }),
    check_for_update_on_startup: false,
    ...(o.top ?? {}),
  };
  for (const [k, v] of Object.entries(top)) lines.push(`${k} = ${tomlValue(v)}`);
  lines.push(
    "",
    "[model_providers.fake]",
    'name = "fake"',
    `base_url = ${q(`${o.api.url}/v1`)}`,
    'env_key = "OPENAI_API_KEY"',
    'wire_api = "responses"',
    "request_max_retries = 0",
    "stream_max_retries = 0",
  );
  for (const [k, v] of Object.entries(o.provider ?? {})) lines.push(`${k} = ${tomlValue(v)}`);
  for (const f of o.trusted ?? []) lines.push("", `[projects.${q(f)}]`, 'trust_level = "trusted"');
  if (o.hideRateLimitNudge !== null)
    lines.push("", "[notice]", `hide_rate_limit_model_nudge = ${o.hideRateLimitNudge !== false}`);
  const hooks: Record<string, unknown> = {};
  for (const [event, hook] of Object.entries(o.hooks ?? {}) as [HookEvent, CommandHook][]) {
    hooks[event] = [{ hooks: [hook] }];
    if (o.trustHooks === false) continue;
    lines.push(
      "",
      `[hooks.state.${q(`${hooksPath}:${HOOK_EVENTS[event]}:0:0`)}]`,
      `trusted_hash = ${q(hookTrustHash(event, hook))}`,
    );
  }
  writeFileSync(configPath, `${lines.join("\n")}\n`);
  if (o.hooks) writeFileSync(hooksPath, `${JSON.stringify({ hooks }, null, 2)}\n`);
  return { home, codexHome, configPath, hooksPath };
}

/**
 * The whole environment for a Codex run (use it as the child's env, like `env -i`): the API key
 * the provider reads, and the fake as proxy (every CONNECT refused: github.com, chatgpt.com…).
 */
export function codexEnv(
  h: CodexHome,
  api: FakeOpenAI,
  extra: Record<string, string> = {},
): Record<string, string> {
  return {
    PATH: process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin",
    HOME: h.home,
    CODEX_HOME: h.codexHome,
    TERM: "xterm-256color",
    LANG: "C.UTF-8",
    OPENAI_API_KEY: "sk-fake-sheepdog-test",
    HTTPS_PROXY: api.url,
    HTTP_PROXY: api.url,
    https_proxy: api.url,
    http_proxy: api.url,
    NO_PROXY: "127.0.0.1,localhost",
    no_proxy: "127.0.0.1,localhost",
    ...extra,
  };
}

/** The rollout files under `$CODEX_HOME/sessions/YYYY/MM/DD/`, oldest first by name. */
export function rollouts(h: CodexHome): string[] {
  const root = join(h.codexHome, "sessions");
  const out: string[] = [];
  const walk = (d: string) => {
    if (!existsSync(d)) return;
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (e.isDirectory()) walk(join(d, e.name));
      else if (/^rollout-.*\.jsonl$/.test(e.name)) out.push(join(d, e.name));
    }
  };
  walk(root);
  return out.sort((a, b) => (a.split("/").at(-1) ?? "").localeCompare(b.split("/").at(-1) ?? ""));
}

/** The newest rollout's text ("" when there is none). */
export function lastRollout(h: CodexHome): string {
  const f = rollouts(h).at(-1);
  return f ? readFileSync(f, "utf8") : "";
}

export interface ExecResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** From spawn to exit. */
  ms: number;
}

/**
 * Starts `codex --no-daemon exec …` with stdin closed (an open stdin is read as more prompt) and
 * exactly `env`; `done` resolves when it exits (it is SIGKILLed after `timeoutMs`).
 */
export function startExec(
  bin: string,
  args: string[],
  o: { cwd: string; env: Record<string, string>; timeoutMs?: number },
): { pid: number; kill: () => void; done: Promise<ExecResult> } {
  const started = performance.now();
  const child = spawn(bin, ["--no-daemon", "exec", ...args], {
    cwd: o.cwd,
    env: o.env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d) => {
    stdout += d;
  });
  child.stderr.on("data", (d) => {
    stderr += d;
  });
  const kill = () => {
    try {
      child.kill("SIGKILL");
    } catch {}
  };
  const timer = setTimeout(kill, o.timeoutMs ?? 50_000);
  const done = new Promise<ExecResult>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, ms: performance.now() - started });
    });
  });
  return { pid: child.pid ?? 0, kill, done };
}

/** Runs `codex --no-daemon exec …` to its end (see `startExec`). */
export function codexExec(
  bin: string,
  args: string[],
  o: { cwd: string; env: Record<string, string>; timeoutMs?: number },
): Promise<ExecResult> {
  return startExec(bin, args, o).done;
}

/**
 * The real interactive `codex --no-daemon` in a tmux window on a private socket (200×50), started
 * with exactly `env`. Without `--no-daemon` the TUI starts an app-server daemon that outlives it.
 */
export function startCodexWindow(o: {
  socket: string;
  bin: string;
  cwd: string;
  env: Record<string, string>;
  args?: string[];
}): ClaudeWindow {
  return ClaudeWindow.start({ ...o, args: ["--no-daemon", ...(o.args ?? [])] });
}

/**
 * Types `text` into Codex's composer, then Enter once the text is drawn: an Enter that arrives
 * with the typed burst is taken as part of a paste (a newline), and the prompt is not sent.
 */
export async function submit(w: ClaudeWindow, text: string): Promise<void> {
  w.tmux("send-keys", "-t", w.target, "-l", text);
  await w.waitForScreen(new RegExp(`› ${text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}`));
  w.keys("Enter");
}
