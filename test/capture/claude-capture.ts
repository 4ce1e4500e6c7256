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
import {
  type Auth,
  acceptTrustDialog,
  CLAUDE_CODE_VERSION,
  ClaudeWindow,
  captured,
  captureSettings,
  claudeBinary,
  claudeEnv,
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

// Re-captures test/fixtures/claude-<version>/ from the real CLI (not part of `npm test`):
//   CLAUDE_CODE_VERSION=2.1.400 npm run capture:claude
// Each scenario is one interactive session in its own tmux server and fake API; what it
// writes has its paths replaced by placeholders. The fixtures' README says what each is.

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
}

async function session(
  name: string,
  auth: Auth,
  o: { trusted?: boolean; config?: Record<string, unknown>; env?: Record<string, string> } = {},
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
    settings: { permissions: { allow: ["Bash"] }, ...captureSettings(cap, EVENTS) },
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
    const files = readdirSync(folder).filter((f) => f.endsWith(".jsonl"));
    return files.map((f) => readFileSync(join(folder, f), "utf8")).join("");
  };
  return { dir, cwd, cap, seat, api, w, scrub, transcript };
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
});
