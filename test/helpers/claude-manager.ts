// A program whose manager is the real Claude Code under the tmux launcher, driven by the fake
// model: the model makes it run `sheepdog claim acquire`, `sheepdog save` and, when told,
// `sheepdog hand-over` through its Bash tool. Shared by the real-CLI manager tests.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { onTestFinished } from "vitest";
import { claudeSettings } from "../../src/usage/claude-settings.js";
import { claudeEnv, makeSeat, type Seat } from "./claude-code.js";
import { tempDir, tempProgram } from "./cli.js";
import { bash, type FakeAnthropic, type Rule, type Turn, type Usage } from "./fake-anthropic.js";
import { standIns } from "./standins.js";
import { events, isAlive, waitFor } from "./watchdog.js";

export interface ClaudeProgram {
  root: string;
  stateDir: string;
  seat: Seat;
  env: Record<string, string>;
  tmux(...args: string[]): { code: number | null; out: string; err: string };
}

/** Tmux sockets made by this process, numbered: a name is never given twice. */
let sockets = 0;

/** The fake model's usage for a context of `tokens` (input 4 + cache writes 200 + reads). */
export const usageOf = (tokens: number): Partial<Usage> => ({
  input_tokens: 4,
  cache_creation_input_tokens: 200,
  cache_read_input_tokens: tokens - 204,
  output_tokens: 30,
});

/**
 * A program (`catalog`) with the tmux launcher running the real `claude` with
 * `--permission-mode default` (auto mode under OAuth asks before a `sheepdog` command, and
 * `--dangerously-skip-permissions` refuses to run as root) and `permissions.allow` for
 * `Bash(sheepdog:*)`; the seat's settings.json holds `sheepdog init`'s statusline and hooks
 * hook. Its tmux server is private (`SHEEPDOG_TMUX_SOCKET`, its own `TMUX_TMPDIR`).
 */
export function claudeProgram(
  claude: string,
  api: FakeAnthropic,
  o: {
    auth?: "api-key" | "oauth";
    trusted?: boolean;
    accept?: boolean;
    watchdog?: Record<string, unknown>;
    page?: Record<string, unknown>;
    env?: Record<string, string>;
    /** More `permissions.allow` rules than `Bash(sheepdog:*)`. */
    allow?: string[];
    /**
     * As `sheepdog init --launcher tmux` sets a program up (issue 33): its tmux command
     * (`claude {prompt}`, auto mode) and its `.claude/settings.json` (absent: `null`), and no
     * permission rule in the seat.
     */
    init?: { command: string[]; projectSettings: string | null };
    /**
     * Where the program's clean-up goes (default: vitest's onTestFinished, for the test that is
     * running); a concurrent test passes its context's own.
     */
    onFinished?: (cleanup: () => void) => void;
  } = {},
): ClaudeProgram {
  const p = tempProgram("catalog");
  const seat = makeSeat({
    dir: join(p.home, "seat"),
    auth: o.auth ?? "api-key",
    trusted: o.trusted === false ? [] : [p.root],
    settings: o.init
      ? claudeSettings()
      : {
          ...claudeSettings(),
          permissions: { allow: ["Bash(sheepdog:*)", ...(o.allow ?? [])] },
        },
  });
  if (o.init?.projectSettings) {
    mkdirSync(join(p.root, ".claude"), { recursive: true });
    writeFileSync(join(p.root, ".claude", "settings.json"), o.init.projectSettings);
  }
  const bin = standIns([]).bin; // `sheepdog` on PATH, for the model's Bash calls and the hooks
  const tmpdir = tempDir("sd-tmux-");
  const socket = `sd-claude-${process.pid}-${sockets++}`;
  const tmux = (...args: string[]) => {
    const r = spawnSync("tmux", ["-L", socket, ...args], {
      encoding: "utf8",
      env: { ...process.env, TMUX_TMPDIR: tmpdir },
    });
    return { code: r.status, out: r.stdout, err: r.stderr };
  };
  const state = {
    SHEEPDOG_HOME: p.env.SHEEPDOG_HOME,
    SHEEPDOG_STATE_DIR: p.env.SHEEPDOG_STATE_DIR,
  };
  const managerEnv = {
    ...claudeEnv(seat, api, o.env),
    PATH: `${bin}:${process.env.PATH ?? "/usr/bin:/bin"}`,
    ...state,
  };
  const config = {
    name: "catalog",
    manager: {
      launcher: "tmux",
      env: managerEnv,
      tmux: {
        session: "catalog",
        command: o.init
          ? o.init.command.map((a) => (a === "claude" ? claude : a))
          : [claude, "--permission-mode", "default", "{prompt}"],
        accept_trust_dialog: o.accept === true,
      },
    },
    watchdog: o.watchdog ?? {},
    usage: { seat: seat.configDir },
    ...(o.page ? { page: o.page } : {}),
  };
  writeFileSync(join(p.root, "program.json"), `${JSON.stringify(config, null, 2)}\n`);
  writeFileSync(join(p.root, "MANAGER-PROMPT.md"), "Claim, save, and hand over when told.\n");
  const env = {
    ...p.env,
    // The activity verdict's CPU sample (DESIGN §14), shorter than a second in tests.
    SHEEPDOG_ACTIVITY_SAMPLE_MS: "500",
    SHEEPDOG_TMUX_SOCKET: socket,
    TMUX_TMPDIR: tmpdir,
    PATH: `${bin}:${process.env.PATH ?? ""}`,
  };
  // At the end of the test that made it, whatever file: a hook at this module's top would be
  // registered for the first file of a worker only (files share a worker, isolate: false), and
  // the later files' real Claude Codes and tmux servers outlived the suite.
  (o.onFinished ?? onTestFinished)(() => {
    // Every claude the program started, by exact pid and start time, then the server.
    for (const e of events(p.stateDir))
      if (
        e.type === "manager_started" &&
        typeof e.pid === "number" &&
        typeof e.start_time === "string"
      )
        if (isAlive(e.pid, e.start_time)) {
          try {
            process.kill(e.pid, "SIGKILL");
          } catch {}
        }
    tmux("kill-server");
    rmSync(tmpdir, { recursive: true, force: true });
  });
  return { root: p.root, stateDir: p.stateDir, seat, env, tmux };
}

const said = (t: Turn, re: RegExp) => t.toolResults.some((r) => re.test(r));
/** The first turn of a manager: its prompt, no tool result yet. */
const prompted = (t: Turn) =>
  t.main && t.toolResults.length === 0 && /MANAGER-PROMPT\.md/.test(t.lastUser);

/**
 * The fake model as a manager: claim (at `tokens` − 1,000 of context), then save (at `tokens`:
 * Claude Code 2.1.328 has written the answer that calls save before save runs), then wait or
 * (the first `handOvers` managers) hand over. Every answer carries `headers` when given.
 */
export function managerModel(
  o: { tokens?: number; handOvers?: number; headers?: Record<string, string> } = {},
): Rule[] {
  const usage = usageOf(o.tokens ?? 14_404);
  const headers = o.headers ?? {};
  return [
    {
      name: "claim",
      when: prompted,
      times: Number.POSITIVE_INFINITY,
      // A smaller context than the save's: save must read the answer that called it.
      reply: bash("sheepdog claim acquire", {
        usage: usageOf((o.tokens ?? 14_404) - 1_000),
        headers,
      }),
    },
    {
      name: "save",
      when: (t) => t.main && said(t, /claimed by pid|already held by this manager/),
      times: Number.POSITIVE_INFINITY,
      reply: bash("sheepdog save", { usage, headers }),
    },
    {
      name: "hand-over",
      when: (t) => t.main && said(t, /"saved_at"/),
      times: o.handOvers ?? 0,
      reply: bash('sheepdog hand-over --note "context full"', { usage, headers }),
    },
    {
      name: "wait",
      when: (t) => t.main && (said(t, /"saved_at"/) || said(t, /hand|released/i)),
      times: Number.POSITIVE_INFINITY,
      reply: { text: "Saved. Waiting for the next item.", usage, headers },
    },
  ];
}

/** What `sheepdog save` answered the manager, from the tool results the model was sent. */
export function saveAnswers(api: FakeAnthropic): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const r of api.requests) {
    if (r.path !== "/v1/messages") continue;
    const last = r.body?.messages?.filter((m: { role: string }) => m.role === "user").at(-1);
    for (const block of Array.isArray(last?.content) ? last.content : []) {
      if (block?.type !== "tool_result") continue;
      const text =
        typeof block.content === "string"
          ? block.content
          : (block.content ?? []).map((c: { text?: string }) => c.text ?? "").join("");
      const m = /\{"program".*\}/s.exec(text);
      if (m && /"saved_at"/.test(m[0]))
        try {
          out.push(JSON.parse(m[0]));
        } catch {}
    }
  }
  return out;
}

/** The user prompts written in the transcripts of the seat's project folder for `root`. */
export function transcriptPrompts(folder: string): string[] {
  if (!existsSync(folder)) return [];
  const out: string[] = [];
  for (const f of readdirSync(folder).filter((n) => n.endsWith(".jsonl")))
    for (const line of readFileSync(join(folder, f), "utf8").split("\n")) {
      if (!line.includes('"type":"user"')) continue;
      try {
        const e = JSON.parse(line);
        const c = e.message?.content;
        const text =
          typeof c === "string"
            ? c
            : Array.isArray(c)
              ? c.map((b: { text?: string }) => b.text ?? "").join("\n")
              : "";
        if (text.includes("MANAGER-PROMPT.md")) out.push(`${f}: ${text}`);
      } catch {}
    }
  return out;
}

/**
 * Types a line into a Claude pane as a person would: once the input box is drawn, the text
 * literally, then Enter once the text shows in the box (2.1.328 loses keys sent too early).
 */
export async function typeInto(p: ClaudeProgram, pane: string, text: string): Promise<void> {
  const screen = () => p.tmux("capture-pane", "-p", "-t", pane).out;
  await waitFor("the input box", () => /manual mode on/.test(screen()), 30_000);
  p.tmux("send-keys", "-t", pane, "-l", text);
  await waitFor(
    `"${text}" in the input box`,
    () => screen().includes(`❯ ${text}`) || screen().includes(`❯\u00a0${text}`),
    10_000,
  );
  p.tmux("send-keys", "-t", pane, "Enter");
}
