import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { NEWEST_TESTED_VERSION, PINNED_VERSION } from "../../src/usage/claude-versions.js";
import type { FakeAnthropic } from "./fake-anthropic.js";
import { cacheRoot, installOnce } from "./npm-cache.js";
import { waitFor } from "./poll.js";

// The real Claude Code CLI for tests: any named version's npm package in a cache folder
// (installed on first use, one folder and one lock per version, so two versions install side by
// side), and seats (config folders) that run it offline against the fake API.

/** The version the tests pin; `CLAUDE_CODE_VERSION` overrides it (the capture script). */
export const CLAUDE_CODE_VERSION = process.env.CLAUDE_CODE_VERSION || PINNED_VERSION;
/** The newest tested version (src/usage/claude-versions.ts), which its own test files run. */
export const CLAUDE_CODE_NEWEST = NEWEST_TESTED_VERSION;

/** The command that installs `version` where the tests look for it. */
export function claudeInstall(version = CLAUDE_CODE_VERSION): string {
  return `npm install --prefix ~/.cache/sheepdog/claude-code-${version} @anthropic-ai/claude-code@${version}`;
}
export const CLAUDE_INSTALL = claudeInstall();

function runs(bin: string, version: string): boolean {
  try {
    const out = execFileSync(bin, ["--version"], {
      encoding: "utf8",
      timeout: 30_000,
      env: { PATH: process.env.PATH ?? "" },
    });
    return out.includes(version);
  } catch {
    return false;
  }
}

const installs = new Map<string, Promise<{ path: string | null; why: string | null }>>();

/**
 * The path of `claude` at `version` (default: the pin, or `CLAUDE_CODE_VERSION`), installing it
 * on first use; `why` says what failed (null when it is there). Parallel test files share one
 * install per version: the first takes that version's `install.lock/` (naming its pid), the
 * others wait for it; a lock whose maker is dead is taken over.
 */
export function claudeBinary(
  version = CLAUDE_CODE_VERSION,
): Promise<{ path: string | null; why: string | null }> {
  let p = installs.get(version);
  if (!p) {
    p = installClaude(version);
    installs.set(version, p);
  }
  return p;
}

async function installClaude(
  version: string,
): Promise<{ path: string | null; why: string | null }> {
  const folder = join(cacheRoot(), `claude-code-${version}`);
  const bin = join(folder, "node_modules", ".bin", "claude");
  const { why } = await installOnce({
    folder,
    spec: `@anthropic-ai/claude-code@${version}`,
    ready: () => existsSync(bin) && runs(bin, version),
  });
  return why ? { path: null, why } : { path: bin, why: null };
}

export type Auth = "api-key" | "oauth";

export interface SeatOptions {
  /** A fresh folder: the seat's home and config folder go inside it. */
  dir: string;
  auth: Auth;
  /** Folders whose trust dialog counts as accepted (absent: the dialog shows). */
  trusted?: string[];
  /** settings.json of the seat: statusLine, hooks, permissions… */
  settings?: Record<string, unknown>;
  /** More keys for `.claude.json`. */
  config?: Record<string, unknown>;
}

export interface Seat {
  home: string;
  configDir: string;
  auth: Auth;
  /** The secret the seat runs with (an API key or an OAuth token; any string does offline). */
  secret: string;
}

/** The API key every seat uses; its last 20 characters are pre-approved in `.claude.json`. */
const API_KEY = "sk-ant-api03-sheepdog-test-0000000000000000000000";

/** Builds a seat: `.claude.json` past onboarding (and the custom-key dialog), settings.json. */
export function makeSeat(o: SeatOptions): Seat {
  const home = join(o.dir, "home");
  const configDir = join(o.dir, "claude-config");
  mkdirSync(home, { recursive: true });
  mkdirSync(configDir, { recursive: true });
  const projects: Record<string, unknown> = {};
  for (const f of o.trusted ?? []) projects[f] = { hasTrustDialogAccepted: true, allowedTools: [] };
  const config = {
    hasCompletedOnboarding: true,
    numStartups: 1,
    customApiKeyResponses: { approved: [API_KEY.slice(-20)], rejected: [] },
    projects,
    ...(o.config ?? {}),
  };
  writeFileSync(join(configDir, ".claude.json"), `${JSON.stringify(config, null, 2)}\n`);
  writeFileSync(join(configDir, "settings.json"), `${JSON.stringify(o.settings ?? {}, null, 2)}\n`);
  const secret = o.auth === "api-key" ? API_KEY : "sk-ant-oat01-sheepdog-test-token";
  return { home, configDir, auth: o.auth, secret };
}

/**
 * The whole environment for the seat (use it as the child's env, like `env -i`): the fake API
 * as base URL and as proxy (every CONNECT refused), no telemetry, no updater.
 */
export function claudeEnv(
  seat: Seat,
  api: FakeAnthropic,
  extra: Record<string, string> = {},
): Record<string, string> {
  return {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: seat.home,
    TERM: "xterm-256color",
    LANG: "C.UTF-8",
    CLAUDE_CONFIG_DIR: seat.configDir,
    ANTHROPIC_BASE_URL: api.url,
    DISABLE_TELEMETRY: "1",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    DISABLE_AUTOUPDATER: "1",
    HTTPS_PROXY: api.url,
    HTTP_PROXY: api.url,
    https_proxy: api.url,
    http_proxy: api.url,
    NO_PROXY: "127.0.0.1,localhost",
    no_proxy: "127.0.0.1,localhost",
    ...(seat.auth === "api-key"
      ? { ANTHROPIC_API_KEY: seat.secret }
      : { CLAUDE_CODE_OAUTH_TOKEN: seat.secret }),
    ...extra,
  };
}

/** Where Claude Code keeps the transcripts of sessions started in `cwd` (its real path). */
export function projectFolder(seat: Seat, realCwd: string): string {
  return join(seat.configDir, "projects", realCwd.replace(/[^a-zA-Z0-9]/g, "-"));
}

export { waitFor } from "./poll.js";

/**
 * A real interactive `claude` in a tmux window on a private socket (`tmux -L`), started with
 * exactly `env` (like `env -i`). The pane is 200×50 so lines are not wrapped.
 */
export class ClaudeWindow {
  private constructor(
    readonly socket: string,
    readonly target: string,
  ) {}

  static start(o: {
    socket: string;
    bin: string;
    cwd: string;
    env: Record<string, string>;
    args?: string[];
  }): ClaudeWindow {
    const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
    const envArgs = Object.entries(o.env).map(([k, v]) => q(`${k}=${v}`));
    const cmd = `exec env -i ${envArgs.join(" ")} ${q(o.bin)} ${(o.args ?? []).map(q).join(" ")}`;
    execFileSync("tmux", [
      "-L",
      o.socket,
      "-f",
      "/dev/null",
      "new-session",
      "-d",
      "-s",
      "claude",
      "-x",
      "200",
      "-y",
      "50",
      "-c",
      o.cwd,
      cmd,
    ]);
    // Keep the pane after claude exits, so a test can read why it ended.
    execFileSync("tmux", ["-L", o.socket, "set-option", "-g", "remain-on-exit", "on"]);
    return new ClaudeWindow(o.socket, "claude:0.0");
  }

  tmux(...args: string[]): string {
    return execFileSync("tmux", ["-L", this.socket, ...args], { encoding: "utf8" });
  }

  /** The pane's text as `capture-pane -p` shows it. */
  screen(): string {
    try {
      return this.tmux("capture-pane", "-p", "-t", this.target);
    } catch {
      return "";
    }
  }

  /** Waits until the screen matches `re`; the error shows the last screen. */
  async waitForScreen(re: RegExp, timeoutMs = 30_000): Promise<string> {
    try {
      return await waitFor(
        `screen ${re}`,
        () => {
          const s = this.screen();
          return re.test(s) ? s : null;
        },
        timeoutMs,
      );
    } catch (e) {
      throw new Error(`${(e as Error).message}; the screen:\n${this.screen()}`);
    }
  }

  /** Types `text` literally, then presses Enter. */
  type(text: string): void {
    this.tmux("send-keys", "-t", this.target, "-l", text);
    this.tmux("send-keys", "-t", this.target, "Enter");
  }

  keys(...keys: string[]): void {
    this.tmux("send-keys", "-t", this.target, ...keys);
  }

  /** The pid of the process in the pane (claude itself: the pane runs `exec env -i … claude`). */
  pid(): number {
    return Number(this.tmux("display-message", "-p", "-t", this.target, "#{pane_pid}").trim());
  }

  /** SIGKILLs claude (on SIGHUP it goes on writing its files for a while), then the server. */
  kill(): void {
    try {
      process.kill(this.pid(), "SIGKILL");
    } catch {}
    try {
      this.tmux("kill-server");
    } catch {}
  }
}

/** Runs `claude -p <prompt>` with stdin closed (an open stdin costs a 3 s wait for data). */
export function claudePrint(
  bin: string,
  args: string[],
  o: { cwd: string; env: Record<string, string>; timeoutMs?: number },
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { cwd: o.cwd, env: o.env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => {
      stdout += d;
    });
    child.stderr.on("data", (d) => {
      stderr += d;
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), o.timeoutMs ?? 50_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/**
 * Accepts the folder-trust dialog: Down (its default is "No, exit"), then Enter once the
 * selection is seen on "Yes" and holds. Down is pressed again only if the first was lost (keys
 * sent as the dialog draws are), never twice in a row unseen: a second Down could move past Yes.
 */
export async function acceptTrustDialog(w: ClaudeWindow): Promise<void> {
  await w.waitForScreen(/Yes, I trust this folder/);
  let pressed = 0;
  let onYesSince = 0;
  await waitFor(
    "the selection on Yes, held",
    () => {
      if (/❯\s+Yes, I trust this folder/.test(w.screen())) {
        // Held for 400 ms: a Down sent late (a loaded machine) would move the menu on again,
        // and Enter on "No, exit" ends Claude Code.
        onYesSince ||= Date.now();
        return Date.now() - onYesSince >= 400;
      }
      onYesSince = 0;
      if (Date.now() - pressed > 3000) {
        w.keys("Down");
        pressed = Date.now();
      }
      return false;
    },
    20_000,
  );
  w.keys("Enter");
}

/**
 * settings.json entries that record what Claude Code hands its statusline command and its
 * hooks: each call writes its stdin to `<capDir>/<name>-<ns>.json` (the statusline prints
 * "SL-OK", so a test can see it drawn).
 */
export function captureSettings(capDir: string, events: string[]): Record<string, unknown> {
  const cmd = (name: string, then = "") =>
    `sh -c 'cat > "$0/${name}-$(date +%s%N).json"${then}' ${capDir}`;
  const hooks: Record<string, unknown> = {};
  for (const e of events) hooks[e] = [{ hooks: [{ type: "command", command: cmd(e) }] }];
  return { statusLine: { type: "command", command: cmd("statusline", "; echo SL-OK") }, hooks };
}

/**
 * The captures in `capDir` named `name`, oldest first, parsed; one still being written (its
 * file made, its JSON not whole yet) is left for the next look.
 */
// biome-ignore lint/suspicious/noExplicitAny: hook payloads as written
export function captured(capDir: string, name: string): { file: string; ns: bigint; data: any }[] {
  return readdirSync(capDir)
    .filter((f) => f.startsWith(`${name}-`) && f.endsWith(".json"))
    .map((f) => ({ file: join(capDir, f), ns: BigInt(f.slice(name.length + 1, -5)) }))
    .sort((a, b) => (a.ns < b.ns ? -1 : a.ns > b.ns ? 1 : 0))
    .map((c) => {
      const text = readFileSync(c.file, "utf8");
      let data: unknown = null;
      try {
        data = JSON.parse(text);
      } catch {}
      return { ...c, data };
    })
    .filter((c) => c.data !== null);
}
