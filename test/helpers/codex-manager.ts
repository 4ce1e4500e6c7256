// A program whose manager is the real Codex CLI, as `sheepdog init --agent codex` writes it
// (its program.json and its profile in CODEX_HOME), driven by the fake Responses API: the
// model makes it run `sheepdog claim acquire`, `sheepdog save` and, when told,
// `sheepdog hand-over` through its exec_command tool. Shared by the Codex manager tests.
import { spawnSync } from "node:child_process";
import { readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { onTestFinished } from "vitest";
import { sheepdog, tempDir } from "./cli.js";
import { type CodexHome, codexEnv, makeCodexHome, rollouts } from "./codex-cli.js";
import { exec, type FakeOpenAI, type Reply, type Rule, type Turn } from "./fake-openai.js";
import { standIns } from "./standins.js";
import { events, isAlive } from "./watchdog.js";

export interface CodexProgram {
  root: string;
  stateDir: string;
  home: CodexHome;
  /** The tick's environment. */
  env: Record<string, string>;
  config: Record<string, unknown>;
  tmux(...args: string[]): { code: number | null; out: string; err: string };
}

let made = 0;

/** A response's usage for a context of `tokens` input tokens. */
export const usageOf = (tokens: number) => ({
  input_tokens: tokens,
  cached_tokens: tokens - 500,
  output_tokens: 40,
});

/**
 * `sheepdog init DIR --agent codex --launcher L` in a fresh home whose CODEX_HOME has only the
 * fake provider (no permissions, no trust, no hooks: init's profile brings them), then the
 * manager's environment (the fake as proxy, `codex` and `sheepdog` on PATH) and `watchdog`
 * settings added to program.json. `codex` on PATH is the pinned native binary.
 */
export function codexProgram(
  bin: string,
  api: FakeOpenAI,
  o: {
    launcher?: "tmux" | "command";
    watchdog?: Record<string, unknown>;
    page?: Record<string, unknown>;
    /** More settings for program.json's manager section. */
    manager?: Record<string, unknown>;
    tickEnv?: Record<string, string>;
    /** The test's own `onTestFinished` (its context's, for tests that run at once). */
    onFinished?: (fn: () => void) => void;
  } = {},
): CodexProgram {
  const home = tempDir("sd-codex-");
  const root = join(home, "catalog");
  const h = makeCodexHome({
    dir: join(home, "seat"),
    api,
    approvalPolicy: null,
    sandboxMode: null,
    hideRateLimitNudge: null,
  });
  const tools = standIns([]).bin; // `sheepdog` on PATH, for the model's calls and the hook
  symlinkSync(bin, join(tools, "codex"));
  const state = { SHEEPDOG_HOME: home, SHEEPDOG_STATE_DIR: join(home, ".state") };
  const init = sheepdog(["init", root, "--agent", "codex", "--launcher", o.launcher ?? "tmux"], {
    env: { ...state, CODEX_HOME: h.codexHome },
  });
  if (init.code !== 0) throw new Error(`init failed: ${init.stderr}`);
  const configPath = join(root, "program.json");
  const config = JSON.parse(readFileSync(configPath, "utf8"));
  const path = `${tools}:${process.env.PATH ?? "/usr/bin:/bin"}`;
  // Codex runs exec_command in a login shell (`bash -lc`): /etc/profile resets PATH, and the
  // user's own profile is what puts `sheepdog` on it, as on a real host.
  writeFileSync(join(h.home, ".profile"), `export PATH='${tools}':"$PATH"\n`);
  config.manager.env = {
    ...config.manager.env,
    ...codexEnv(h, api),
    PATH: path,
    ...state,
  };
  Object.assign(config.manager, o.manager ?? {});
  config.watchdog = { ...config.watchdog, ...(o.watchdog ?? {}) };
  if (o.page) config.page = o.page;
  writeFileSync(configPath, `${JSON.stringify(config, null, 2)}\n`);
  writeFileSync(join(root, "MANAGER-PROMPT.md"), "Claim, save, and hand over when told.\n");
  const tmpdir = tempDir("sd-tmux-");
  const socket = `sd-codex-${process.pid}-${made++}`;
  const tmux = (...args: string[]) => {
    const r = spawnSync("tmux", ["-L", socket, ...args], {
      encoding: "utf8",
      env: { ...process.env, TMUX_TMPDIR: tmpdir },
    });
    return { code: r.status, out: r.stdout, err: r.stderr };
  };
  const stateDir = join(root, ".sheepdog");
  const env = {
    ...state,
    SHEEPDOG_PROGRAM: root,
    SHEEPDOG_ACTIVITY_SAMPLE_MS: "500",
    SHEEPDOG_TMUX_SOCKET: socket,
    TMUX_TMPDIR: tmpdir,
    PATH: path,
    ...(o.tickEnv ?? {}),
  };
  // Per test (the tests of a file may run at once): only this program's managers and server.
  (o.onFinished ?? onTestFinished)(() => {
    // Every codex the program started, by exact pid and start time, then the server.
    for (const e of events(stateDir))
      if (e.type === "manager_started" && typeof e.pid === "number")
        if (typeof e.start_time === "string" && isAlive(e.pid, e.start_time)) {
          try {
            process.kill(e.pid, "SIGKILL");
          } catch {}
        }
    tmux("kill-server");
    rmSync(tmpdir, { recursive: true, force: true });
  });
  return { root, stateDir, home: h, env, config, tmux };
}

/** The output of the newest exec_command call in the turn (what the model was just told). */
const lastOutput = (t: Turn) => t.toolOutputs.at(-1) ?? "";
/** A manager's first request: its prompt, no call answered yet. */
export const prompted = (t: Turn) =>
  t.main && t.toolOutputs.length === 0 && /MANAGER-PROMPT\.md/.test(t.lastUser);
/** The request after `sheepdog claim acquire` answered. */
export const afterClaim = (t: Turn) =>
  t.main && /claimed by pid|already held by this manager/.test(lastOutput(t));
/** The request after a save (or hand-over) answered. */
export const afterSave = (t: Turn) => t.main && /"saved_at"/.test(lastOutput(t));

/**
 * The fake model as a Codex manager: claim (at `tokens` − 1,000 of context), then save (at
 * `tokens`), then (the first `handOvers` managers) hand over when save says so, else end the
 * turn. `afterSave` answers the (first) request after a save instead of the plain text.
 */
export function managerModel(
  o: {
    tokens?: number;
    handOvers?: number;
    headers?: Record<string, string>;
    afterSave?: Reply;
  } = {},
): Rule[] {
  const tokens = o.tokens ?? 14_404;
  const headers = o.headers ?? {};
  return [
    {
      name: "claim",
      when: prompted,
      times: Number.POSITIVE_INFINITY,
      reply: exec("sheepdog claim acquire", { usage: usageOf(tokens - 1_000), headers }),
    },
    {
      name: "save",
      when: afterClaim,
      times: Number.POSITIVE_INFINITY,
      reply: exec("sheepdog save", { usage: usageOf(tokens), headers }),
    },
    {
      name: "hand-over",
      when: (t) => afterSave(t) && /"hand_over":true/.test(lastOutput(t)),
      times: o.handOvers ?? 0,
      reply: exec('sheepdog hand-over --note "context full"', { usage: usageOf(tokens), headers }),
    },
    ...(o.afterSave
      ? [{ name: "after save", when: afterSave, reply: o.afterSave } satisfies Rule]
      : []),
    {
      name: "wait",
      when: (t) => afterSave(t) || (t.main && /released/.test(lastOutput(t))),
      times: Number.POSITIVE_INFINITY,
      reply: { text: "Saved. Waiting for the next item.", usage: usageOf(tokens), headers },
    },
  ];
}

/** What `sheepdog save` (or hand-over) answered the manager, from the outputs sent to the model. */
export function saveAnswers(api: FakeOpenAI): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  const seen = new Set<string>();
  for (const t of api.turns())
    for (const o of t.toolOutputs) {
      const m = /\{"program".*\}/s.exec(o);
      if (!m || !/"saved_at"/.test(m[0]) || seen.has(m[0])) continue;
      seen.add(m[0]);
      try {
        out.push(JSON.parse(m[0]));
      } catch {}
    }
  return out;
}

/** The user prompts naming MANAGER-PROMPT.md in the seat's rollouts. */
export function rolloutPrompts(h: CodexHome): string[] {
  const out: string[] = [];
  for (const f of rollouts(h))
    for (const line of readFileSync(f, "utf8").split("\n")) {
      if (!line.includes('"role":"user"')) continue;
      try {
        const p = JSON.parse(line).payload;
        const text = (p?.content ?? []).map((b: { text?: string }) => b.text ?? "").join("\n");
        if (text.includes("MANAGER-PROMPT.md")) out.push(text);
      } catch {}
    }
  return out;
}
