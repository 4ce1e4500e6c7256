import {
  existsSync,
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
import { NEWEST_TESTED_VERSION, PINNED_VERSION } from "../../src/usage/claude-versions.js";
import {
  type Auth,
  acceptTrustDialog,
  CLAUDE_CODE_VERSION,
  ClaudeWindow,
  captured,
  captureSettings,
  claudeBinary,
  claudeEnv,
  claudePrint,
  makeSeat,
  projectFolder,
  type Seat,
  waitFor,
} from "../helpers/claude-code.js";
import {
  allowedHeaders,
  bash,
  FakeAnthropic,
  fiveHourLimitHeaders,
} from "../helpers/fake-anthropic.js";
import { LIMIT_CASES, type LimitCase, limitCase, resetIn } from "../helpers/limit-cases.js";
import { diffCaptures } from "./diff.js";

// Captures test/fixtures/claude-<version>/ from the real CLI (not part of `npm test`):
//   npm run capture:claude -- --version 2.1.400
// Each scenario is one interactive session in its own tmux server and fake API (the limit
// texts: one `claude -p` a case); what it writes has its paths replaced by placeholders. The
// fixtures' README says what each is. At the end it prints what differs from the newest tested
// version's captures (src/usage/claude-versions.ts; the pin's, when this is the newest).

const OUT = join(
  dirname(fileURLToPath(import.meta.url)),
  "..",
  "fixtures",
  `claude-${CLAUDE_CODE_VERSION}`,
);
const claude = await claudeBinary();
if (!claude.path) throw new Error(`no claude ${CLAUDE_CODE_VERSION}: ${claude.why}`);
const BIN = claude.path;
const EVENTS = ["Stop", "StopFailure", "Notification", "SessionStart", "PreCompact", "PostCompact"];
const READY = /manual mode on/;
const cleanups: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  // Every session is ended even if one cleanup fails.
  const results = await Promise.allSettled(cleanups.splice(0).map((c) => c()));
  const failed = results.find((r) => r.status === "rejected");
  if (failed) throw (failed as PromiseRejectedResult).reason;
  const against =
    CLAUDE_CODE_VERSION === NEWEST_TESTED_VERSION ? PINNED_VERSION : NEWEST_TESTED_VERSION;
  process.stderr.write(diffCaptures(OUT, join(OUT, "..", `claude-${against}`)));
});

interface Session {
  dir: string;
  cwd: string;
  cap: string;
  seat: Seat;
  api: FakeAnthropic;
  w: ClaudeWindow;
  scrub(text: string): string;
  transcript(): string;
  /** The claude process's descendants, one `comm args` line each. */
  tree(): string[];
}

async function session(
  name: string,
  auth: Auth,
  o: {
    trusted?: boolean;
    config?: Record<string, unknown>;
    env?: Record<string, string>;
    allow?: string[];
    /** More hooks for settings.json (an event the CLI does not know). */
    hooks?: Record<string, unknown>;
  } = {},
): Promise<Session> {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), `claude-capture-${name}-`)));
  const cwd = join(dir, "work");
  const cap = join(dir, "cap");
  mkdirSync(cwd);
  mkdirSync(cap);
  const seat = makeSeat({
    dir,
    auth,
    trusted: o.trusted === false ? [] : [cwd],
    config: o.config,
    settings: (() => {
      const captures = captureSettings(cap, EVENTS) as { hooks: Record<string, unknown> };
      return {
        permissions: { allow: o.allow ?? ["Bash"] },
        ...captures,
        hooks: { ...captures.hooks, ...o.hooks },
      };
    })(),
  });
  const api = await new FakeAnthropic().start();
  const w = ClaudeWindow.start({
    socket: `claude-capture-${name}-${process.pid}`,
    bin: BIN,
    cwd,
    env: claudeEnv(seat, api, o.env),
    args: ["--permission-mode", "default"],
  });
  cleanups.push(async () => {
    w.kill();
    await api.stop();
    rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
  });
  const folder = projectFolder(seat, cwd);
  const pairs: [string, string][] = [
    [folder.slice(folder.lastIndexOf("/") + 1), "{CWD_FOLDER}"],
    [cwd, "{CWD}"],
    [seat.configDir, "{CONFIG_DIR}"],
    [seat.home, "{HOME}"],
    [cap, "{CAPTURE_DIR}"],
    [dir, "{DIR}"],
    [api.url, "{API_URL}"],
    [`127.0.0.1:${api.port}`, "{API_HOST}"],
  ];
  const scrub = (t: string) => pairs.reduce((s, [from, to]) => s.split(from).join(to), t);
  const transcript = () => {
    if (!existsSync(folder)) return "";
    const files = readdirSync(folder).filter((f) => f.endsWith(".jsonl"));
    return files.map((f) => readFileSync(join(folder, f), "utf8")).join("");
  };
  const tree = () => processTree(w.pid()).map((p) => scrub(p));
  return { dir, cwd, cap, seat, api, w, scrub, transcript, tree };
}

/** The descendants of `pid` from /proc, as `pid ppid comm: args` without the pids. */
function processTree(root: number): string[] {
  const procs = readdirSync("/proc").filter((d) => /^\d+$/.test(d));
  const parent = new Map<number, number>();
  const line = new Map<number, string>();
  for (const d of procs) {
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

function write(file: string, text: string): void {
  mkdirSync(OUT, { recursive: true });
  writeFileSync(join(OUT, file), text.endsWith("\n") ? text : `${text}\n`);
}

function writeJson(s: Session, file: string, data: unknown): void {
  write(file, s.scrub(JSON.stringify(data, null, 2)));
}

/** Types a prompt once the input box is drawn, then Enter once the text is seen in it. */
async function prompt(s: Session, text: string): Promise<void> {
  await s.w.waitForScreen(READY);
  s.w.tmux("send-keys", "-t", s.w.target, "-l", text);
  await s.w.waitForScreen(new RegExp(`❯\\s+${text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}`));
  s.w.keys("Enter");
}

function log(line: string): void {
  process.stderr.write(`capture: ${line}\n`);
}

const usage = (input: number) => ({
  input_tokens: 4,
  cache_creation_input_tokens: 200,
  cache_read_input_tokens: input,
  output_tokens: 30,
});

describe.concurrent(`capture from the real Claude Code ${CLAUDE_CODE_VERSION}`, () => {
  it("api key: a plain tool turn, the statusline, Stop, SessionStart, an idle Notification", async () => {
    const s = await session("plain", "api-key", { config: { messageIdleNotifThresholdMs: 3000 } });
    s.api.script(
      {
        when: (t) => t.main && t.lastUser.includes("write hi"),
        reply: bash("echo hi > out.txt", { usage: usage(14_000) }),
      },
      {
        when: (t) => t.main && t.toolResults.length > 0,
        reply: { text: "Done.", usage: usage(14_200) },
      },
    );
    await prompt(s, "write hi");
    await s.w.waitForScreen(/Done\./);
    const stop = await waitFor("Stop", () => captured(s.cap, "Stop")[0], 20_000);
    const idle = await waitFor(
      "idle Notification",
      () => captured(s.cap, "Notification")[0],
      30_000,
    );
    log(
      `idle Notification ${(Number(idle.ns - stop.ns) / 1e6).toFixed(0)} ms after Stop (threshold 3000)`,
    );
    // How often the statusline command runs while the session sits idle.
    const before = captured(s.cap, "statusline").length;
    await new Promise((r) => setTimeout(r, 10_000));
    const lines = captured(s.cap, "statusline");
    log(`statusline: ${lines.length} calls in the session, ${lines.length - before} in 10 s idle`);
    const after = lines.filter(
      (c) => c.data?.context_window?.current_usage?.cache_read_input_tokens === 14_200,
    );
    expect(after.length).toBeGreaterThan(0);
    writeJson(s, "statusline-api-key.json", after.at(-1)?.data);
    writeJson(s, "hook-stop.json", stop.data);
    writeJson(s, "hook-notification-idle.json", idle.data);
    writeJson(s, "hook-session-start.json", captured(s.cap, "SessionStart")[0]?.data);
    write("transcript-tool-turn.jsonl", s.scrub(s.transcript()));
  });

  it("subscriber: the trust dialog, rate_limits in the statusline, /compact", async () => {
    const s = await session("compact", "oauth", { trusted: false });
    const headers = allowedHeaders(0.3, 0.81);
    s.api.script(
      {
        when: (t) => t.main && t.lastUser.includes("write hi"),
        reply: bash("echo hi > out.txt", { usage: usage(14_000), headers }),
      },
      {
        when: (t) => t.main && t.toolResults.length > 0,
        reply: { text: "Done.", usage: usage(14_200), headers },
      },
      {
        name: "summary",
        when: (t) => /summary/i.test(t.lastUser),
        reply: {
          text: "<summary>Wrote hi to out.txt.</summary>",
          usage: { ...usage(14_300), output_tokens: 120 },
          headers,
        },
      },
      { when: () => true, times: Number.POSITIVE_INFINITY, reply: { text: "OK.", headers } },
    );
    const dialog = await s.w.waitForScreen(/Yes, I trust this folder/);
    // Let it finish drawing: the capture is of the settled screen.
    await new Promise((r) => setTimeout(r, 1000));
    write("screen-trust-dialog.txt", s.scrub(s.w.screen().trimEnd()));
    expect(dialog).toMatch(/No, exit/);
    await acceptTrustDialog(s.w);
    await prompt(s, "write hi");
    await s.w.waitForScreen(/Done\./);
    const limited = await waitFor(
      "a statusline with rate_limits",
      () =>
        captured(s.cap, "statusline")
          .filter((c) => c.data?.rate_limits?.five_hour)
          .at(-1),
      20_000,
    );
    writeJson(s, "statusline-subscriber.json", limited.data);
    await prompt(s, "/compact");
    await waitFor("compact_boundary", () => s.transcript().includes('"compact_boundary"'), 60_000);
    const zero = await waitFor(
      "a statusline after /compact",
      () =>
        captured(s.cap, "statusline")
          .filter(
            (c) =>
              c.ns > limited.ns &&
              c.data?.context_window?.current_usage?.cache_read_input_tokens === 0,
          )
          .at(-1),
      30_000,
    );
    writeJson(s, "statusline-after-compact.json", zero.data);
    writeJson(s, "hook-pre-compact.json", captured(s.cap, "PreCompact")[0]?.data);
    writeJson(s, "hook-post-compact.json", captured(s.cap, "PostCompact")[0]?.data);
    write("transcript-after-compact.jsonl", s.scrub(s.transcript()));
  });

  it("subscriber at a five-hour limit: the wait on screen, the transcript, StopFailure", async () => {
    const s = await session("limit", "oauth");
    const reset = Math.floor(Date.now() / 1000) + 2 * 3600;
    s.api.script({
      when: (t) => t.main,
      times: Number.POSITIVE_INFINITY,
      reply: {
        status: 429,
        headers: { ...fiveHourLimitHeaders(reset), "retry-after": String(2 * 3600) },
      },
    });
    await prompt(s, "write hi");
    const fail = await waitFor("StopFailure", () => captured(s.cap, "StopFailure")[0], 60_000);
    writeJson(s, "hook-stop-failure-rate-limit.json", fail.data);
    const wait = await s.w
      .waitForScreen(/Usage limit reached|continuing automatically/, 30_000)
      .catch(() => null);
    if (wait) write("screen-usage-limit-wait.txt", s.scrub(wait.trimEnd()));
    else log(`no "Usage limit reached" screen; the screen:\n${s.w.screen()}`);
    // Claude Code writes its transcript in batches: wait for the refusal line itself.
    await waitFor(
      "the refusal in the transcript",
      () => /usage_limit_reached/.test(s.transcript()),
      30_000,
    ).catch(() => log("no usage_limit_reached line in the transcript after 30 s"));
    write("transcript-usage-limit.jsonl", s.scrub(s.transcript()));
    log(
      `limit: ${s.api.mainTurns().length} main requests; reset ${new Date(reset * 1000).toISOString()}`,
    );
  });

  it("api key: a 529 and a 429 without unified headers, StopFailure", async () => {
    const s = await session("errors", "api-key", { env: { CLAUDE_CODE_MAX_RETRIES: "0" } });
    s.api.script(
      // The 429 rule first: after a failed turn the next prompt joins the same user message.
      {
        when: (t) => t.main && t.allUser.includes("prompt-two"),
        times: Number.POSITIVE_INFINITY,
        reply: { status: 429 },
      },
      {
        when: (t) => t.main && t.allUser.includes("prompt-one"),
        times: Number.POSITIVE_INFINITY,
        reply: { status: 529 },
      },
    );
    await prompt(s, "prompt-one");
    const a = await waitFor("StopFailure 529", () => captured(s.cap, "StopFailure")[0], 60_000);
    writeJson(s, "hook-stop-failure-529.json", a.data);
    await prompt(s, "prompt-two");
    const b = await waitFor("StopFailure 429", () => captured(s.cap, "StopFailure")[1], 60_000);
    writeJson(s, "hook-stop-failure-429-api-key.json", b.data);
    write("transcript-errors-api-key.jsonl", s.scrub(s.transcript()));
  });

  it("subscriber: a 429 without unified headers (not the usage limit), StopFailure", async () => {
    const s = await session("serverlimit", "oauth", { env: { CLAUDE_CODE_MAX_RETRIES: "0" } });
    s.api.script({ when: (t) => t.main, times: Number.POSITIVE_INFINITY, reply: { status: 429 } });
    await prompt(s, "write hi");
    const a = await waitFor("StopFailure", () => captured(s.cap, "StopFailure")[0], 60_000);
    writeJson(s, "hook-stop-failure-429-no-unified.json", a.data);
  });

  it("api key: a long foreground Bash call, open in the transcript, and the process tree", async () => {
    const s = await session("longbash", "api-key");
    s.api.script(
      {
        when: (t) => t.main && t.lastUser.includes("sleep long"),
        reply: {
          tool: {
            name: "Bash",
            // 2.1.328 blocks a standalone `sleep N` ("use run_in_background"): a node timer instead.
            input: {
              command: 'node -e "setTimeout(() => {}, 25000)"',
              description: "wait",
              timeout: 600000,
            },
          },
          usage: usage(14_000),
        },
      },
      { when: (t) => t.main && t.toolResults.length > 0, reply: { text: "Slept." } },
    );
    await prompt(s, "sleep long");
    await waitFor("the open call", () => s.tree().some((l) => l.includes("25000")), 30_000).catch(
      (err) => {
        log(`long bash: ${s.transcript().slice(-2000)}`);
        throw err;
      },
    );
    await new Promise((r) => setTimeout(r, 3000));
    write("transcript-bash-open.jsonl", s.scrub(s.transcript()));
    write("tree-bash-open.txt", s.tree().join("\n"));
    await s.w.waitForScreen(/Slept\./, 60_000);
    await waitFor("Stop", () => captured(s.cap, "Stop")[0], 20_000);
    await new Promise((r) => setTimeout(r, 2000));
    write("tree-idle.txt", s.tree().join("\n") || "(no children)");
  });

  it("api key: a background Bash call, the Stop that lists it, its notification", async () => {
    const s = await session("background", "api-key");
    s.api.script(
      {
        when: (t) => t.main && t.lastUser.includes("start it"),
        reply: {
          tool: {
            name: "Bash",
            input: {
              command: "sleep 12",
              description: "wait in the background",
              run_in_background: true,
            },
          },
          usage: usage(14_000),
        },
      },
      {
        when: (t) =>
          t.main && t.toolResults.length > 0 && !t.lastUser.includes("task-notification"),
        reply: { text: "Waiting for it." },
      },
      {
        when: (t) => t.main && t.lastUser.includes("task-notification"),
        reply: { text: "It ended." },
      },
    );
    await prompt(s, "start it");
    const stop = await waitFor("Stop", () => captured(s.cap, "Stop")[0], 30_000);
    writeJson(s, "hook-stop-background.json", stop.data);
    write("tree-background.txt", s.tree().join("\n"));
    await s.w.waitForScreen(/It ended\./, 60_000);
    const again = await waitFor("second Stop", () => captured(s.cap, "Stop")[1], 30_000);
    writeJson(s, "hook-stop-after-background.json", again.data);
    write("transcript-background.jsonl", s.scrub(s.transcript()));
  });

  it("api key: a permission prompt, its Notification and screen", async () => {
    const s = await session("permission", "api-key", { allow: ["Bash(echo:*)"] });
    s.api.script({
      when: (t) => t.main && t.lastUser.includes("touch it"),
      reply: bash("touch made.txt", { usage: usage(14_000) }),
    });
    await prompt(s, "touch it");
    const note = await waitFor(
      "permission Notification",
      () =>
        captured(s.cap, "Notification").find((c) => c.data?.notification_type !== "idle_prompt"),
      60_000,
    );
    writeJson(s, "hook-notification-permission.json", note.data);
    write("screen-permission-prompt.txt", s.scrub(s.w.screen().trimEnd()));
    write("transcript-permission-prompt.jsonl", s.scrub(s.transcript()));
  });

  it("api key: 500s retried, the api_error entries while it retries", async () => {
    const s = await session("retries", "api-key", { env: { CLAUDE_CODE_MAX_RETRIES: "6" } });
    s.api.script({
      when: (t) => t.main,
      times: Number.POSITIVE_INFINITY,
      reply: { status: 500, error: { type: "api_error", message: "Internal server error" } },
    });
    await prompt(s, "retry me");
    // 2.1.328 writes each try as an `api-request` entry; nothing else until the turn ends.
    await waitFor(
      "three tries",
      () => (s.transcript().match(/"type":"api-request"/g) ?? []).length >= 3,
      60_000,
    );
    write("screen-retrying.txt", s.scrub(s.w.screen().trimEnd()));
    write("transcript-retrying.jsonl", s.scrub(s.transcript()));
    const fail = await waitFor("StopFailure", () => captured(s.cap, "StopFailure")[0], 120_000);
    writeJson(s, "hook-stop-failure-500.json", fail.data);
    // Claude Code writes its transcript in batches: wait for the turn's synthetic error entry.
    await waitFor(
      "the error entry",
      () => s.transcript().includes('"isApiErrorMessage":true'),
      30_000,
    );
    write("transcript-retries-ended.jsonl", s.scrub(s.transcript()));
    log(`retries: ${s.api.mainTurns().length} main requests`);
  });

  it("api key: a sub-agent working while the main transcript is still", async () => {
    const s = await session("subagent", "api-key");
    s.api.script(
      {
        when: (t) => t.main && t.lastUser.includes("delegate") && t.toolResults.length === 0,
        reply: {
          tool: {
            name: "Agent",
            input: {
              description: "sleep a while",
              prompt: "run sleep 15",
              subagent_type: "general-purpose",
            },
          },
        },
      },
      {
        when: (t) => t.main && t.lastUser.includes("run sleep 15") && t.toolResults.length === 0,
        reply: bash("sleep 15"),
      },
      {
        when: (t) =>
          t.main &&
          t.allUser.includes("run sleep 15") &&
          t.toolResults.length > 0 &&
          !t.allUser.includes("delegate"),
        reply: { text: "Sub-agent done." },
      },
      { when: (t) => t.main && t.toolResults.length > 0, times: 3, reply: { text: "All done." } },
    );
    await prompt(s, "delegate");
    await waitFor(
      "the sub-agent's sleep",
      () => s.tree().some((l) => l.includes("sleep 15")),
      60_000,
    ).catch(() =>
      log(
        `no sub-agent sleep; requests: ${s.api
          .mainTurns()
          .map((t) => t.lastUser.slice(0, 60))
          .join(" | ")}`,
      ),
    );
    write("transcript-subagent-main.jsonl", s.scrub(s.transcript()));
    const folder = projectFolder(s.seat, s.cwd);
    const subs: string[] = [];
    const walk = (d: string) => {
      for (const e of readdirSync(d, { withFileTypes: true })) {
        if (e.isDirectory()) walk(join(d, e.name));
        else subs.push(join(d, e.name).slice(folder.length + 1));
      }
    };
    walk(folder);
    log(`subagent files: ${subs.join(", ")}`);
    write("subagent-layout.txt", subs.map((f) => s.scrub(f)).join("\n"));
    await s.w.waitForScreen(/All done\./, 60_000).catch(() => log(s.w.screen()));
  });

  it("subscriber -p at every usage limit of the shared list: the text, the refused turn's entry, StopFailure", async () => {
    const api = await new FakeAnthropic().start();
    cleanups.push(() => api.stop());
    const dirs: string[] = [];
    cleanups.push(() => {
      for (const d of dirs) rmSync(d, { recursive: true, force: true });
    });
    // Four at a time: the other sessions of the capture run meanwhile.
    let next = 0;
    const rows: Awaited<ReturnType<typeof one>>[] = [];
    await Promise.all(
      [0, 1, 2, 3].map(async () => {
        while (next < LIMIT_CASES.length) {
          const i = next++;
          rows[i] = await one(LIMIT_CASES[i] as LimitCase);
        }
      }),
    );
    async function one(c: LimitCase) {
      const dir = realpathSync(mkdtempSync(join(tmpdir(), `claude-capture-${c.id}-`)));
      dirs.push(dir);
      const cwd = join(dir, "work");
      const cap = join(dir, "cap");
      mkdirSync(cwd);
      mkdirSync(cap);
      const seat = makeSeat({
        dir,
        auth: "oauth",
        trusted: [cwd],
        settings: captureSettings(cap, ["StopFailure"]),
      });
      const reset = resetIn(c.resetIn);
      api.script({
        when: (t) => t.main && t.lastUser.includes(`case ${c.id}`),
        times: Number.POSITIVE_INFINITY,
        reply: { status: 429, headers: c.headers(reset) },
      });
      const r = await claudePrint(BIN, ["-p", `case ${c.id}`], {
        cwd,
        env: claudeEnv(seat, api, { CLAUDE_CODE_MAX_RETRIES: "0", TZ: "UTC" }),
        timeoutMs: 120_000,
      });
      const folder = projectFolder(seat, cwd);
      const entry = readdirSync(folder)
        .filter((f) => f.endsWith(".jsonl"))
        .flatMap((f) => readFileSync(join(folder, f), "utf8").split("\n"))
        .filter(Boolean)
        .map((l) => JSON.parse(l))
        .filter((e) => e.type === "assistant" && e.isApiErrorMessage === true)
        .at(-1);
      const keep = [
        "isApiErrorMessage",
        "error",
        "apiError",
        "apiErrorStatus",
        "apiErrorType",
        "apiErrorIsTransient",
        "apiErrorParams",
        "quotaLimits",
        "version",
      ];
      const stop = captured(cap, "StopFailure")[0]?.data ?? null;
      return {
        case: c.id,
        headers: c.what,
        header_values: c.headers(reset),
        reset,
        text: r.stdout.trim(),
        entry: entry
          ? {
              text: entry.message?.content?.[0]?.text ?? null,
              ...Object.fromEntries(keep.filter((k) => k in entry).map((k) => [k, entry[k]])),
            }
          : null,
        stop_failure: stop
          ? { error: stop.error, last_assistant_message: stop.last_assistant_message }
          : null,
      };
    }
    for (const row of rows) expect(row.entry, row.case).not.toBeNull();
    write("limits.json", JSON.stringify(rows, null, 2));
  });

  it("subscriber, interactive: a limit within the day, one days away (the dialog), and Esc during a Bash call", async () => {
    const s = await session("limits", "oauth", {
      env: { CLAUDE_CODE_MAX_RETRIES: "1", TZ: "UTC" },
    });
    let current: LimitCase | null = null;
    s.api.script(
      {
        when: (t) => t.main && current !== null,
        times: Number.POSITIVE_INFINITY,
        reply: () => ({
          status: 429,
          headers: (current as LimitCase).headers(resetIn((current as LimitCase).resetIn)),
        }),
      },
      {
        when: (t) =>
          t.main && /run the long command/.test(t.lastUser) && t.toolResults.length === 0,
        reply: bash('node -e "setTimeout(() => {}, 120000)"', { usage: usage(14_000) }),
      },
    );
    current = limitCase("c01");
    await prompt(s, "go on with c01");
    const waiting = await s.w.waitForScreen(/Esc to cancel/, 30_000);
    write("screen-limit-auto-continue.txt", s.scrub(waiting.trimEnd()));
    s.w.keys("Escape");
    await s.w.waitForScreen(/Automatic continue cancelled/, 10_000);
    current = limitCase("c03");
    await prompt(s, "go on with c03");
    const dialog = await s.w.waitForScreen(/Stop and wait for limit to reset/, 30_000);
    await new Promise((r) => setTimeout(r, 1000));
    write("screen-limit-dialog.txt", s.scrub(s.w.screen().trimEnd()));
    expect(dialog).toMatch(/What do you want to do\?/);
    s.w.keys("1");
    current = null;
    await prompt(s, "run the long command");
    await s.w.waitForScreen(/esc to interrupt/, 30_000);
    await waitFor("the call running", () => s.tree().some((l) => l.includes("120000")), 30_000);
    s.w.keys("Escape");
    await waitFor(
      "the interrupt in the transcript",
      () => s.transcript().includes("[Request interrupted by user for tool use]"),
      20_000,
    );
    await new Promise((r) => setTimeout(r, 1000));
    write("screen-interrupted.txt", s.scrub(s.w.screen().trimEnd()));
    write("transcript-limits-interrupted.jsonl", s.scrub(s.transcript()));
    write(
      "hooks-after-interrupt.txt",
      readdirSync(s.cap)
        .filter((f) => !f.startsWith("statusline-"))
        .map((f) => f.replace(/-\d+\.json$/, ""))
        .join("\n"),
    );
  });

  it("a hook event it does not know: the Settings Warning at start, and its list of valid events", async () => {
    const s = await session("unknownhook", "api-key", {
      hooks: { Interrupt: [{ hooks: [{ type: "command", command: "true" }] }] },
    });
    const screen = await s.w.waitForScreen(/Settings Warning[\s\S]*Enter to confirm/, 30_000);
    await new Promise((r) => setTimeout(r, 1000));
    write("screen-settings-warning.txt", s.scrub(s.w.screen().trimEnd()));
    const list = /Valid events:([\s\S]*?)Learn more/.exec(screen)?.[1] ?? "";
    const events = list
      .split(/[,\s]+/)
      .map((e) => e.trim())
      .filter((e) => /^[A-Z]\w+$/.test(e));
    expect(events.length).toBeGreaterThan(10);
    write("hook-events.json", JSON.stringify(events, null, 2));
  });
});
