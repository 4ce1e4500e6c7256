// The real Codex CLI (0.171.0) as a tmux manager at its limits, end to end: a usage limit
// pauses the program until the exact reset the backend named (the window at 100 % in the
// rollout's rate_limits), and when the pause ends the launcher types the resume line into the
// TUI (Codex does not go on by itself); a plain 429 does not pause; a Codex stuck in a call
// past its yield time is wedged and replaced. The clock past the reset is the clock-step hook
// (SHEEPDOG_CLOCK_FILE), so nothing waits for a real reset. Its own file, beside the rest.
import { execFileSync } from "node:child_process";
import { readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { DEFAULT_RESUME_LINE } from "../src/agent/kinds.js";
import { sheepdog, tempDir } from "./helpers/cli.js";
import { CODEX_INSTALL, CODEX_VERSION, codexBinary, rollouts } from "./helpers/codex-cli.js";
import {
  afterClaim,
  codexProgram,
  managerModel,
  prompted,
  saveAnswers,
  usageOf,
} from "./helpers/codex-manager.js";
import { exec, usageLimitReply, useFreshFakeOpenAI } from "./helpers/fake-openai.js";
import { skipWithout } from "./helpers/tools.js";
import { isAlive, ofType, tickAsync, waitFor, waitForClaimBy } from "./helpers/watchdog.js";

const codex = await codexBinary();

const starts = (stateDir: string) =>
  ofType(stateDir, "manager_started") as unknown as { pid: number; start_time: string }[];
/** The newest rollout's text once it holds `what`. */
const rolloutHas = (p: { home: Parameters<typeof rollouts>[0] }, what: RegExp) =>
  waitFor(`a rollout with ${what}`, () => {
    const f = rollouts(p.home).at(-1);
    return f && what.test(readFileSync(f, "utf8")) ? f : null;
  });

/** The descendants of `pid` (pid and args), from ps. */
function descendants(pid: number): { pid: number; args: string }[] {
  const rows = execFileSync("ps", ["-eo", "pid=,ppid=,args="], { encoding: "utf8" })
    .split("\n")
    .map((l) => /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(l))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ pid: Number(m[1]), ppid: Number(m[2]), args: m[3] as string }));
  const out: { pid: number; args: string }[] = [];
  const walk = (p: number) => {
    for (const r of rows.filter((x) => x.ppid === p)) {
      out.push({ pid: r.pid, args: r.args });
      walk(r.pid);
    }
  };
  walk(pid);
  return out;
}

describe.skipIf(skipWithout("codex", codex.why, CODEX_INSTALL))(
  `the real Codex CLI ${CODEX_VERSION} as the manager, at its limits`,
  { concurrent: true },
  () => {
    const fresh = useFreshFakeOpenAI();
    const bin = codex.path as string;
    const leftovers: number[] = [];
    afterAll(() => {
      for (const pid of leftovers)
        try {
          process.kill(pid, "SIGKILL");
        } catch {}
    });

    it("a usage limit: paused until the exact reset, then the resume line is typed into the TUI and it goes on", async ({
      onTestFinished,
    }) => {
      const api = await fresh();
      const now = Date.now();
      const reset = Math.floor(now / 1000) + 40 * 60;
      api.script(
        {
          name: "resumed",
          when: (t) => t.main && t.lastUser.includes(DEFAULT_RESUME_LINE),
          reply: exec("sheepdog save", { usage: usageOf(16_000) }),
        },
        ...managerModel({ tokens: 15_000, afterSave: usageLimitReply(reset, { now }) }),
      );
      const clock = join(tempDir("sd-clock-"), "offset");
      const p = codexProgram(bin, api, {
        watchdog: { stale_after: "2h" },
        tickEnv: { SHEEPDOG_CLOCK_FILE: clock },
        onFinished: onTestFinished,
      });
      expect((await tickAsync(p.env)).report.decision).toBe("start");
      const [a] = starts(p.stateDir);
      await waitForClaimBy(p.stateDir, a?.pid as number);
      await rolloutHas(p, /"codex_error_info":"usage_limit_exceeded"/);

      const paused = await tickAsync(p.env);
      expect(paused.report.decision, paused.report.reason).toBe("pause");
      const [pause] = ofType(p.stateDir, "paused");
      // Exact: the reset of the window at 100 %, not the minute the text prints.
      expect(pause).toMatchObject({
        until: new Date(reset * 1000).toISOString(),
        window: "five_hour",
      });
      // The rollout's rate limits are the seat's readings now, shown by sheepdog usage.
      const usage = JSON.parse(
        sheepdog(["usage", "--seat", p.home.codexHome, "--json"], { env: p.env }).stdout,
      );
      expect(usage.seats[0]).toMatchObject({
        limited: true,
        windows: { five_hour: { used_percentage: 100 } },
      });
      expect(isAlive(a?.pid as number, a?.start_time as string)).toBe(true);
      expect((await tickAsync(p.env)).report.decision).toBe("wait_pause");

      // The clock past the reset: the pause ends, and Codex, at its prompt, is told to go on.
      writeFileSync(clock, String(reset * 1000 + 30_000 - Date.now()));
      const over = await tickAsync(p.env);
      expect(over.report.decision, over.report.reason).toBe("ok");
      expect(ofType(p.stateDir, "unpaused")).toHaveLength(1);
      const [typed] = ofType(p.stateDir, "resume_typed");
      expect(typed).toMatchObject({ pid: a?.pid, text: DEFAULT_RESUME_LINE });
      expect(String(typed?.via)).toMatch(/tmux send-keys/);
      const again = await waitFor("the save after the resume line", () =>
        saveAnswers(api).find((s) => s.context_tokens === 16_000),
      );
      expect(again).toMatchObject({ pause: null, hand_over: false });
      // Typed once: one request carries it as its prompt (the next ones answer its calls).
      const sent = api.turns().filter((t) => t.lastUser === DEFAULT_RESUME_LINE);
      expect(sent.filter((t) => t.toolOutputs.length === 0)).toHaveLength(1);
      // One manager all along: nothing was restarted.
      expect(starts(p.stateDir)).toHaveLength(1);
    });

    it("a plain 429 does not pause: the turn that ended on it is api_retry, paged once", async ({
      onTestFinished,
    }) => {
      const api = await fresh();
      api.script(...managerModel({ tokens: 15_000, afterSave: { status: 429 } }));
      const p = codexProgram(bin, api, {
        watchdog: { quiet_after: "1s" },
        onFinished: onTestFinished,
      });
      expect((await tickAsync(p.env)).report.decision).toBe("start");
      const [a] = starts(p.stateDir);
      await waitForClaimBy(p.stateDir, a?.pid as number);
      await rolloutHas(p, /"response_too_many_failed_attempts"/);
      const saved = ofType(p.stateDir, "saved")[0];
      await waitFor(
        "quiet_after since the save",
        () => Date.now() - Date.parse(String(saved?.at)) > 1_200,
      );
      const t = await tickAsync(p.env);
      expect(t.report.decision, t.report.reason).toBe("api_retry");
      expect(ofType(p.stateDir, "paused")).toEqual([]);
      expect(ofType(p.stateDir, "api_errors")[0]).toMatchObject({
        pid: a?.pid,
        verdict: "api_retry",
      });
      expect(String(ofType(p.stateDir, "api_errors")[0]?.reason)).toMatch(/429/);
      expect(isAlive(a?.pid as number, a?.start_time as string)).toBe(true);
    });

    it("an idle Codex (its turn ended, nothing to wake it) is nudged: the line reaches it and it saves", async ({
      onTestFinished,
    }) => {
      const api = await fresh();
      api.script(
        {
          name: "nudged",
          when: (t) => t.main && t.lastUser.startsWith("sheepdog: this session has been idle"),
          reply: exec("sheepdog save", { usage: usageOf(15_500) }),
        },
        ...managerModel({ tokens: 15_000 }),
      );
      const p = codexProgram(bin, api, {
        watchdog: { quiet_after: "1s" },
        onFinished: onTestFinished,
      });
      expect((await tickAsync(p.env)).report.decision).toBe("start");
      const [a] = starts(p.stateDir);
      await waitForClaimBy(p.stateDir, a?.pid as number);
      const rollout = await rolloutHas(p, /"type":"task_complete"/);
      // quiet_after (1 s) since the rollout last grew (Codex writes bookkeeping after the turn).
      await waitFor(
        "the rollout quiet",
        () => Date.now() - statSync(rollout).mtimeMs > 1_500,
        15_000,
      );
      const t = await tickAsync(p.env);
      expect(t.report.decision, t.report.reason).toBe("nudge");
      expect(ofType(p.stateDir, "nudged")[0]).toMatchObject({
        pid: a?.pid,
        via: expect.stringMatching(/tmux send-keys/),
      });
      const again = await waitFor("the save after the nudge", () =>
        saveAnswers(api).find((s) => s.context_tokens === 15_500),
      );
      expect(again).toMatchObject({ hand_over: false });
    });

    it("a Codex stuck in a call past its yield time is wedged: stopped by exact pid and replaced", async ({
      onTestFinished,
    }) => {
      const api = await fresh();
      api.script(
        {
          name: "claim",
          when: prompted,
          times: Number.POSITIVE_INFINITY,
          reply: exec("sheepdog claim acquire", { usage: usageOf(14_000) }),
        },
        {
          name: "sleep",
          when: afterClaim,
          reply: { call: { cmd: "sleep 600", yield_time_ms: 2000 }, usage: usageOf(14_500) },
        },
      );
      // Codex under a shell in its pane: tmux continues a pane's own process when it stops, and
      // this Codex is to stay stopped (hung) with its call open.
      const p = codexProgram(bin, api, {
        watchdog: { quiet_after: "1s" },
        manager: {
          tmux: {
            session: "catalog",
            command: ["sh", "-c", 'codex --no-daemon --profile sheepdog "$0"', "{prompt}"],
          },
        },
        onFinished: onTestFinished,
      });
      expect((await tickAsync(p.env)).report.decision).toBe("start");
      const pane = starts(p.stateDir)[0];
      const pid = await waitFor("the claim", () => ofType(p.stateDir, "claimed")[0]?.pid as number);
      const a = { pid, start_time: String(ofType(p.stateDir, "claimed")[0]?.start_time) };
      expect(pid).not.toBe(pane?.pid); // codex, the shell's child
      // Codex runs the command, then hangs (SIGSTOP) before its yield: the call stays open.
      const sleep = await waitFor(
        "the sleep",
        () => descendants(pid).find((d) => /^sleep 600/.test(d.args)),
        15_000,
      );
      process.kill(pid, "SIGSTOP");
      leftovers.push(sleep.pid);
      await rolloutHas(p, /sleep 600/);
      // Past its yield time (2 s) and quiet_after (1 s), with nothing growing.
      await new Promise((r) => setTimeout(r, 3_500));
      const t = await tickAsync(p.env);
      expect(t.report.decision, t.report.reason).toBe("restart_wedged");
      expect(t.report.reason).toMatch(
        /exec_command call has been open since .* past its own limit of 2s/,
      );
      expect(ofType(p.stateDir, "restart_wedged")[0]).toMatchObject({ pid, verdict: "wedged" });
      expect(ofType(p.stateDir, "manager_stopped")[0]).toMatchObject({
        pid,
        decision: "restart_wedged",
      });
      expect(isAlive(pid, a.start_time)).toBe(false);
      expect(starts(p.stateDir)).toHaveLength(2);
      await waitFor("the successor's claim", () => ofType(p.stateDir, "claimed").length === 2);
    });
  },
);
