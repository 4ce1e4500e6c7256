import { execFileSync } from "node:child_process";
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { captured, waitFor } from "../helpers/claude-code.js";
import {
  CODEX_VERSION,
  type CodexHome,
  type CommandHook,
  codexBinary,
  codexEnv,
  codexExec,
  type HookEvent,
  hookTrustHash,
  lastRollout,
  makeCodexHome,
  rollouts,
  startCodexWindow,
  startExec,
  submit,
} from "../helpers/codex-cli.js";
import { allowedHeaders, exec, FakeOpenAI, usageLimitReply } from "../helpers/fake-openai.js";

// Re-captures test/fixtures/codex-<version>/ from the real Codex CLI (not part of `npm test`):
//   CODEX_VERSION=0.172.0 npm run capture:codex
// Each scenario has its own CODEX_HOME and fake Responses API; the TUI ones their own tmux
// server. What it writes has its paths replaced by placeholders; the fixtures' README says what
// each file is.

const OUT = join(
  dirname(fileURLToPath(import.meta.url)),
  "..",
  "fixtures",
  `codex-${CODEX_VERSION}`,
);
const codex = await codexBinary();
if (!codex.path) throw new Error(`no codex ${CODEX_VERSION}: ${codex.why}`);
const BIN = codex.path;
const EVENTS: HookEvent[] = [
  "SessionStart",
  "UserPromptSubmit",
  "PreToolUse",
  "PostToolUse",
  "PreCompact",
  "PostCompact",
  "Stop",
  "SessionEnd",
];
const READY = /Ask Codex to do anything/;
const cleanups: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  const results = await Promise.allSettled(cleanups.splice(0).map((c) => c()));
  const failed = results.find((r) => r.status === "rejected");
  if (failed) throw (failed as PromiseRejectedResult).reason;
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const nowS = () => Math.floor(Date.now() / 1000);

interface Session {
  dir: string;
  cwd: string;
  cap: string;
  h: CodexHome;
  api: FakeOpenAI;
  env: Record<string, string>;
  scrub(text: string): string;
}

/**
 * A hook that copies its stdin to `<cap>/<event>-<ns>.json`. SessionEnd's timeout is 3 s: Codex
 * clamps a longer one and says so ("warning: clamping SessionEnd hook timeout to 3s").
 */
const captureHook = (cap: string, event: string): CommandHook => ({
  type: "command",
  command: `sh -c 'cat > "$0/${event}-$(date +%s%N).json"' ${cap}`,
  timeout: event === "SessionEnd" ? 3 : 10,
});

async function session(
  name: string,
  o: { trusted?: boolean; trustHooks?: boolean; top?: Record<string, number> } = {},
): Promise<Session> {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), `codex-capture-${name}-`)));
  const cwd = join(dir, "work");
  const cap = join(dir, "cap");
  mkdirSync(cwd);
  mkdirSync(cap);
  execFileSync("git", ["init", "-q"], { cwd });
  const api = await new FakeOpenAI().start();
  const hooks: Partial<Record<HookEvent, CommandHook>> = {};
  for (const e of EVENTS) hooks[e] = captureHook(cap, e);
  const h = makeCodexHome({
    dir,
    api,
    trusted: o.trusted === false ? [] : [cwd],
    hooks,
    trustHooks: o.trustHooks,
    // Codex appends the payload as the last argument: $1 here ($0 is the folder).
    notify: ["sh", "-c", `printf '%s' "$1" > "$0/notify-$(date +%s%N).json"`, cap],
    top: o.top,
  });
  cleanups.push(async () => {
    await api.stop();
    rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
  });
  const pairs: [string, string][] = [
    [h.codexHome, "{CODEX_HOME}"],
    [h.home, "{HOME}"],
    [cwd, "{CWD}"],
    [cap, "{CAPTURE_DIR}"],
    [dir, "{DIR}"],
    [api.url, "{API_URL}"],
    [`127.0.0.1:${api.port}`, "{API_HOST}"],
  ];
  const scrub = (t: string) => pairs.reduce((s, [from, to]) => s.split(from).join(to), t);
  return { dir, cwd, cap, h, api, env: codexEnv(h, api), scrub };
}

function write(file: string, text: string): void {
  mkdirSync(OUT, { recursive: true });
  writeFileSync(join(OUT, file), text.endsWith("\n") ? text : `${text}\n`);
}

function writeJson(s: Session, file: string, data: unknown): void {
  write(file, s.scrub(JSON.stringify(data, null, 2)));
}

function log(line: string): void {
  process.stderr.write(`capture: ${line}\n`);
}

/** The first capture of a hook event, or fails naming it. */
function hook(s: Session, event: string, n = 0) {
  const c = captured(s.cap, event)[n];
  if (!c) throw new Error(`no ${event} hook #${n} in ${s.cap}`);
  return c.data;
}

/** The descendants of `pid` from /proc, as `comm: args` lines indented by depth. */
function processTree(root: number): string[] {
  const parent = new Map<number, number>();
  const line = new Map<number, string>();
  for (const d of readdirSync("/proc").filter((x) => /^\d+$/.test(x))) {
    try {
      const stat = readFileSync(`/proc/${d}/stat`, "utf8");
      const comm = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      const args = readFileSync(`/proc/${d}/cmdline`, "utf8").split("\0").join(" ").trim();
      parent.set(Number(d), ppid);
      line.set(Number(d), `${comm}: ${args}`);
    } catch {}
  }
  const out: string[] = [];
  const walk = (pid: number, depth: number) => {
    for (const [child, pp] of parent)
      if (pp === pid) {
        out.push(`${"  ".repeat(depth)}${line.get(child)}`);
        walk(child, depth + 1);
      }
  };
  walk(root, 0);
  return out;
}

/** VmRSS / VmHWM of a live pid, in MB. */
function memory(pid: number): string {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const kb = (k: string) => Number(new RegExp(`${k}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
    return `rss ${(kb("VmRSS") / 1024).toFixed(0)} MB, peak ${(kb("VmHWM") / 1024).toFixed(0)} MB`;
  } catch {
    return "gone";
  }
}

const usage = (input: number) => ({
  input_tokens: input,
  cached_tokens: input - 500,
  output_tokens: 40,
});

describe.concurrent(`capture from the real Codex CLI ${CODEX_VERSION}`, () => {
  it("exec: a tool turn, its hooks and notify, then `exec resume`", async () => {
    const s = await session("turn");
    const headers = allowedHeaders(42.5, 12);
    s.api.script(
      {
        name: "call",
        when: (t) => t.main && t.lastUser.includes("run echo") && t.toolOutputs.length === 0,
        reply: exec("echo hi", { usage: usage(2500), headers }),
      },
      {
        name: "done",
        when: (t) => t.main && t.toolOutputs.length > 0,
        reply: { text: "Done: the command printed hi.", usage: usage(2600), headers },
      },
      {
        name: "again",
        when: (t) => t.main && t.lastUser.includes("again"),
        reply: { text: "Again: fine.", usage: usage(2700), headers },
      },
    );
    const r = await codexExec(BIN, ["run echo hi"], { cwd: s.cwd, env: s.env });
    expect(r.code).toBe(0);
    log(`exec tool turn: ${r.ms.toFixed(0)} ms, exit ${r.code}`);
    write("rollout-tool-turn.jsonl", s.scrub(lastRollout(s.h)));
    write(
      "exec-tool-turn.txt",
      s.scrub(`exit ${r.code}\n--- stdout\n${r.stdout}--- stderr\n${r.stderr}`),
    );
    for (const e of [
      "SessionStart",
      "UserPromptSubmit",
      "PreToolUse",
      "PostToolUse",
      "Stop",
      "SessionEnd",
    ])
      writeJson(
        s,
        `hook-${e.replace(/[A-Z]/g, (c, i) => `${i ? "-" : ""}${c.toLowerCase()}`)}.json`,
        hook(s, e),
      );
    writeJson(s, "notify-turn-complete.json", captured(s.cap, "notify")[0]?.data);
    const id = /session id: ([0-9a-f-]+)/.exec(r.stderr)?.[1];
    expect(id).toBeDefined();
    const again = await codexExec(BIN, ["resume", id ?? "", "again"], { cwd: s.cwd, env: s.env });
    expect(again.code).toBe(0);
    log(`exec resume: ${again.ms.toFixed(0)} ms; rollouts: ${rollouts(s.h).length}`);
    write("rollout-resumed.jsonl", s.scrub(lastRollout(s.h)));
    writeJson(s, "hook-session-start-resume.json", hook(s, "SessionStart", 1));
  });

  it("exec --json: a tool turn's events", async () => {
    const s = await session("json");
    s.api.script(
      { when: (t) => t.main && t.toolOutputs.length === 0, reply: exec("echo hi") },
      { when: (t) => t.main && t.toolOutputs.length > 0, reply: { text: "Done." } },
    );
    const r = await codexExec(BIN, ["--json", "run echo hi"], { cwd: s.cwd, env: s.env });
    expect(r.code).toBe(0);
    write("exec-json-tool-turn.jsonl", s.scrub(r.stdout));
  });

  it("exec: auto-compaction in the middle of a turn", async () => {
    const s = await session("compact", {
      top: { model_context_window: 12000, model_auto_compact_token_limit: 5000 },
    });
    s.api.script(
      {
        name: "call",
        when: (t) => t.main && t.toolOutputs.length === 0,
        reply: exec("echo hi", { usage: usage(6000) }),
      },
      {
        name: "summary",
        when: (t) => t.kind === "compaction",
        reply: {
          text: "Summary: ran echo hi, it printed hi.",
          usage: { input_tokens: 6100, cached_tokens: 0, output_tokens: 200 },
        },
      },
      {
        name: "done",
        when: (t) => t.main,
        times: 3,
        reply: { text: "Done after compaction.", usage: usage(1500) },
      },
    );
    const r = await codexExec(BIN, ["run echo hi"], { cwd: s.cwd, env: s.env });
    log(
      `compaction: exit ${r.code}; answered ${s.api.requests.map((q) => q.answeredBy).join(", ")}`,
    );
    const text = lastRollout(s.h);
    expect(text).toContain('"type":"compacted"');
    write("rollout-after-compaction.jsonl", s.scrub(text));
    writeJson(s, "hook-pre-compact.json", hook(s, "PreCompact"));
    writeJson(s, "hook-post-compact.json", hook(s, "PostCompact"));
    const compaction = s.api.turns(true).find((t) => t.kind === "compaction");
    write(
      "request-compaction-metadata.json",
      s.scrub(
        JSON.stringify(
          {
            "x-codex-turn-metadata": JSON.parse(
              String(compaction?.req.headers["x-codex-turn-metadata"]),
            ),
            body_keys: Object.keys(compaction?.req.body ?? {}),
            tools: compaction?.req.body?.tools ?? null,
          },
          null,
          2,
        ),
      ),
    );
  });

  it("exec: usage limit, reset in 40 minutes (plus)", async () => {
    const s = await session("limit-near");
    const reset = nowS() + 40 * 60;
    s.api.script({
      when: (t) => t.main,
      times: Number.POSITIVE_INFINITY,
      reply: usageLimitReply(reset),
    });
    const r = await codexExec(BIN, ["run echo hi"], { cwd: s.cwd, env: s.env });
    log(
      `limit near: exit ${r.code}, ${s.api.turns().length} main requests; reset ${new Date(reset * 1000).toISOString()}`,
    );
    write("rollout-usage-limit-near.jsonl", s.scrub(lastRollout(s.h)));
    write(
      "exec-usage-limit-near.txt",
      s.scrub(`exit ${r.code}\n--- stdout\n${r.stdout}--- stderr\n${r.stderr}`),
    );
    write(
      "hooks-fired-usage-limit.txt",
      readdirSync(s.cap)
        .map((f) => f.replace(/-\d+\.json$/, ""))
        .sort()
        .join("\n"),
    );
    const j = await session("limit-json");
    j.api.script({
      when: (t) => t.main,
      times: Number.POSITIVE_INFINITY,
      reply: usageLimitReply(reset),
    });
    const rj = await codexExec(BIN, ["--json", "run echo hi"], { cwd: j.cwd, env: j.env });
    write("exec-json-usage-limit.jsonl", j.scrub(rj.stdout));
  });

  it("exec: usage limit, the week at 100 % until 3.5 days on (pro)", async () => {
    const s = await session("limit-far");
    const s0 = nowS();
    const reset = s0 + Math.round(3.5 * 86_400);
    s.api.script({
      when: (t) => t.main,
      times: Number.POSITIVE_INFINITY,
      reply: usageLimitReply(reset, {
        plan: "pro",
        windows: {
          primary: { used: 30, minutes: 300, resetAt: s0 + 2 * 3600 },
          secondary: { used: 100, minutes: 10080, resetAt: reset },
        },
      }),
    });
    const r = await codexExec(BIN, ["run echo hi"], { cwd: s.cwd, env: s.env });
    log(`limit far: exit ${r.code}; reset ${new Date(reset * 1000).toISOString()}`);
    write("rollout-usage-limit-far.jsonl", s.scrub(lastRollout(s.h)));
  });

  it("exec: usage limit without a reset (team)", async () => {
    const s = await session("limit-none");
    s.api.script({
      when: (t) => t.main,
      times: Number.POSITIVE_INFINITY,
      reply: usageLimitReply(null, { plan: "team" }),
    });
    const r = await codexExec(BIN, ["run echo hi"], { cwd: s.cwd, env: s.env });
    log(`limit none: exit ${r.code}`);
    write("rollout-usage-limit-no-reset.jsonl", s.scrub(lastRollout(s.h)));
  });

  it("exec: a plain 429 (no usage limit)", async () => {
    const s = await session("429");
    s.api.script({ when: (t) => t.main, times: Number.POSITIVE_INFINITY, reply: { status: 429 } });
    const r = await codexExec(BIN, ["run echo hi"], { cwd: s.cwd, env: s.env });
    log(`plain 429: exit ${r.code}, ${s.api.turns().length} main requests`);
    write("rollout-rate-limit-429.jsonl", s.scrub(lastRollout(s.h)));
    write(
      "exec-rate-limit-429.txt",
      s.scrub(`exit ${r.code}\n--- stdout\n${r.stdout}--- stderr\n${r.stderr}`),
    );
  });

  it("exec: a long call, open; then what the model gets when its yield time passes", async () => {
    const s = await session("call-open");
    s.api.script(
      {
        name: "call",
        when: (t) => t.main && t.toolOutputs.length === 0,
        reply: { call: { cmd: "sleep 600", yield_time_ms: 30000 }, usage: usage(2500) },
      },
      {
        name: "after",
        when: (t) => t.main && t.toolOutputs.length > 0,
        times: 5,
        reply: { text: "It is still running.", usage: usage(2600) },
      },
    );
    const run = startExec(BIN, ["run sleep 600"], { cwd: s.cwd, env: s.env, timeoutMs: 120_000 });
    cleanups.push(() => run.kill());
    const started = Date.now();
    await waitFor(
      "the sleep",
      () => processTree(run.pid).some((l) => l.includes("sleep 600")),
      30_000,
    );
    await sleep(3000);
    write("rollout-call-open.jsonl", s.scrub(lastRollout(s.h)));
    write("tree-call-open.txt", s.scrub(processTree(run.pid).join("\n")));
    log(`open call: codex ${memory(run.pid)}`);
    await waitFor(
      "the call's output",
      () => lastRollout(s.h).includes('"function_call_output"'),
      60_000,
    );
    log(`open call: its output came ${Date.now() - started} ms after the start`);
    const r = await run.done;
    log(
      `open call: exec ended ${Date.now() - started} ms in, exit ${r.code}; tree after: ${processTree(run.pid).length}`,
    );
    write("rollout-call-yielded.jsonl", s.scrub(lastRollout(s.h)));
  });

  it("exec: the API accepts the request and never answers", async () => {
    const s = await session("hang");
    s.api.script({ when: (t) => t.main, times: Number.POSITIVE_INFINITY, reply: { hang: true } });
    const run = startExec(BIN, ["run echo hi"], { cwd: s.cwd, env: s.env, timeoutMs: 60_000 });
    cleanups.push(() => run.kill());
    await waitFor("the request", () => s.api.turns().length > 0, 30_000);
    await sleep(3000);
    write("rollout-request-hung.jsonl", s.scrub(lastRollout(s.h)));
    run.kill();
    await run.done;
  });

  it("tui: the trust dialog, Hooks need review, Trust all, the ready prompt, a turn", async () => {
    const s = await session("tui", { trusted: false, trustHooks: false });
    s.api.script(
      {
        when: (t) => t.main && t.toolOutputs.length === 0,
        reply: exec("echo hi", { headers: allowedHeaders(42.5, 12) }),
      },
      {
        when: (t) => t.main && t.toolOutputs.length > 0,
        reply: { text: "Done: hi.", headers: allowedHeaders(43, 12) },
      },
      {
        name: "title",
        when: (t) => t.kind === "title",
        times: Number.POSITIVE_INFINITY,
        reply: { text: "Run echo hi" },
      },
    );
    const t0 = Date.now();
    const w = startCodexWindow({
      socket: `codex-capture-tui-${process.pid}`,
      bin: BIN,
      cwd: s.cwd,
      env: s.env,
    });
    cleanups.push(() => w.kill());
    await w.waitForScreen(/Trust this folder\?/);
    const tTrust = Date.now() - t0;
    await sleep(1000);
    write("screen-trust-dialog.txt", s.scrub(w.screen().trimEnd()));
    w.keys("Enter");
    await w.waitForScreen(/Hooks need review/);
    await sleep(1000);
    write("screen-hooks-review.txt", s.scrub(w.screen().trimEnd()));
    w.keys("2");
    await w.waitForScreen(/› 2\. Trust all and continue/);
    w.keys("Enter");
    await w.waitForScreen(READY);
    const tReady = Date.now() - t0;
    await sleep(1000);
    write("screen-ready.txt", s.scrub(w.screen().trimEnd()));
    if (/f2 to view/.test(w.screen())) {
      w.keys("F2");
      await sleep(1000);
      write("screen-warnings.txt", s.scrub(w.screen().trimEnd()));
      w.keys("Escape");
      await w.waitForScreen(READY);
    }
    const config = readFileSync(s.h.configPath, "utf8");
    write("config-after-trust-all.toml", s.scrub(config));
    // The hashes "Trust all" wrote are the ones makeCodexHome pre-seeds.
    for (const e of EVENTS) {
      const want = hookTrustHash(e, captureHook(s.cap, e));
      expect(config).toContain(want);
    }
    log(
      `tui: trust dialog at ${tTrust} ms, ready at ${tReady} ms (after two keypresses); ${memory(w.pid())}`,
    );
    const tPrompt = Date.now();
    await submit(w, "run echo hi");
    await w.waitForScreen(/Done: hi\./);
    log(
      `tui: a tool turn ${Date.now() - tPrompt} ms from Enter to its answer drawn; ${memory(w.pid())}`,
    );
    await waitFor("notify", () => captured(s.cap, "notify").length >= 2, 10_000).catch(() => null);
    await sleep(1000);
    write("screen-turn-done.txt", s.scrub(w.screen().trimEnd()));
    const notes = captured(s.cap, "notify").map((c) => c.data);
    writeJson(s, "notify-tui.json", notes);
    writeJson(s, "hook-session-start-tui.json", hook(s, "SessionStart"));
    write("rollout-tui-turn.jsonl", s.scrub(lastRollout(s.h)));
    log(
      `tui: ${rollouts(s.h).length} rollout file(s); requests ${s.api.requests.map((q) => q.answeredBy).join(", ")}`,
    );
    await submit(w, "/quit");
    await waitFor(
      "exit",
      () => processTree(w.pid()).length === 0 && !/Ask Codex/.test(w.screen()),
      10_000,
    ).catch(() => null);
    write("screen-after-quit.txt", s.scrub(w.screen().trimEnd()));
  });

  it("tui: a request that never answers, then Esc", async () => {
    const s = await session("tui-esc");
    s.api.script(
      {
        name: "title",
        when: (t) => t.kind === "title",
        times: Number.POSITIVE_INFINITY,
        reply: { text: "Run echo hi" },
      },
      { when: (t) => t.main, times: Number.POSITIVE_INFINITY, reply: { hang: true } },
    );
    const w = startCodexWindow({
      socket: `codex-capture-tuiesc-${process.pid}`,
      bin: BIN,
      cwd: s.cwd,
      env: s.env,
    });
    cleanups.push(() => w.kill());
    await w.waitForScreen(READY);
    await submit(w, "run echo hi");
    await waitFor("the request", () => s.api.turns().length > 0, 30_000);
    await sleep(3000);
    write("screen-request-hung.txt", s.scrub(w.screen().trimEnd()));
    w.keys("Escape");
    await w.waitForScreen(READY);
    await sleep(1500);
    write("screen-interrupted.txt", s.scrub(w.screen().trimEnd()));
    write("rollout-tui-interrupted.jsonl", s.scrub(lastRollout(s.h)));
    log(
      `tui esc: hooks fired: ${readdirSync(s.cap)
        .map((f) => f.replace(/-\d+\.json$/, ""))
        .join(", ")}`,
    );
  });

  it("tui: a usage limit (reset in 40 minutes) on screen", async () => {
    const s = await session("tui-limit");
    const reset = nowS() + 40 * 60;
    s.api.script(
      {
        name: "title",
        when: (t) => t.kind === "title",
        times: Number.POSITIVE_INFINITY,
        reply: { text: "Run echo hi" },
      },
      { when: (t) => t.main, times: Number.POSITIVE_INFINITY, reply: usageLimitReply(reset) },
    );
    const w = startCodexWindow({
      socket: `codex-capture-tuilimit-${process.pid}`,
      bin: BIN,
      cwd: s.cwd,
      env: s.env,
    });
    cleanups.push(() => w.kill());
    await w.waitForScreen(READY);
    await submit(w, "run echo hi");
    await w.waitForScreen(/usage limit/);
    await sleep(2000);
    write("screen-usage-limit.txt", s.scrub(w.screen().trimEnd()));
    write("rollout-tui-usage-limit.jsonl", s.scrub(lastRollout(s.h)));
    log(
      `tui limit: hooks fired: ${readdirSync(s.cap)
        .map((f) => f.replace(/-\d+\.json$/, ""))
        .join(", ")}`,
    );
    log(
      `tui limit: reset ${new Date(reset * 1000).toISOString()}; requests ${s.api.requests.map((q) => q.answeredBy).join(", ")}`,
    );
  });
});
