// Stuck, idle or busy (DESIGN §14), judged by real ticks from what the real Claude Code
// (2.1.328) really wrote: its transcript, its hooks' records and its process tree. The fake
// model stages each situation after the manager's first save; quiet_after is seconds here.
// Each test has its own fake API and tmux server, so they run side by side.
import { readFileSync } from "node:fs";
import { basename, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { descendants } from "../src/process/tree.js";
import { readHookRecords } from "../src/usage/hook-records.js";
import { transcriptTail } from "../src/usage/transcript-tail.js";
import { CLAUDE_CODE_VERSION, CLAUDE_INSTALL, claudeBinary } from "./helpers/claude-code.js";
import {
  type ClaudeProgram,
  claudeProgram,
  managerModel,
  saveAnswers,
  usageOf,
} from "./helpers/claude-manager.js";
import { sheepdogAsync } from "./helpers/cli.js";
import {
  type FakeAnthropic,
  type Rule,
  type Turn,
  useFreshFakeAnthropic,
} from "./helpers/fake-anthropic.js";
import { type Freezer, freezerMissing, makeFreezer } from "./helpers/freezer.js";
import { useNtfyServer } from "./helpers/ntfy-server.js";
import { skipWithout } from "./helpers/tools.js";
import { isAlive, ofType, tickAsync, waitFor, waitForClaimBy } from "./helpers/watchdog.js";

const claude = await claudeBinary();
const QUIET = { stale_after: "10m", quiet_after: "6s", nudge_wait: "5s" };
const savedBefore = (t: Turn) => t.toolResults.some((r) => /"saved_at"/.test(r));
const ms = (iso: unknown) => Date.parse(String(iso));
const timing = (what: string, fromIso: unknown, toIso: unknown) =>
  process.stderr.write(`claude-activity timing: ${what}: ${ms(toIso) - ms(fromIso)} ms\n`);

const freshApi = useFreshFakeAnthropic();
const freezers: Freezer[] = [];
afterAll(() => {
  for (const f of freezers) f.remove();
});

interface Running {
  p: ClaudeProgram;
  api: FakeAnthropic;
  pid: number;
  start_time: string;
  transcript: string;
  savedAt: string;
}

/** A manager that claims and saves once, then does what `after` (the answer to its save) says. */
async function managerThen(
  after: Rule[],
  o: { page?: string; allow?: string[] } = {},
  ntfyUrl?: string,
): Promise<Running> {
  const api = await freshApi();
  api.script(...after, ...managerModel({ tokens: 15_404 }));
  const p = claudeProgram(claude.path as string, api, {
    watchdog: QUIET,
    ...(o.allow ? { allow: o.allow } : {}),
    ...(o.page && ntfyUrl ? { page: { ntfy: { server: ntfyUrl, topic: o.page } } } : {}),
  });
  const t = await tickAsync(p.env);
  expect(t.report.decision, t.stderr).toBe("start");
  const [s] = ofType(p.stateDir, "manager_started");
  const pid = s?.pid as number;
  await waitForClaimBy(p.stateDir, pid);
  const [saved] = await waitFor("the save", () => {
    const a = saveAnswers(api);
    return a.length > 0 ? a : null;
  });
  return {
    p,
    api,
    pid,
    start_time: s?.start_time as string,
    transcript: String(saved?.transcript),
    savedAt: String(ofType(p.stateDir, "saved")[0]?.at),
  };
}

/** The last entries of a transcript, one line each (type, blocks, time), for a failure's message. */
function transcriptEnd(path: string, n = 12): string {
  let lines: string[];
  try {
    lines = readFileSync(path, "utf8").trim().split("\n").slice(-n);
  } catch (e) {
    return `(unread: ${(e as Error).message})`;
  }
  return lines
    .map((l) => {
      try {
        const e = JSON.parse(l);
        const c = e.message?.content;
        const blocks = Array.isArray(c)
          ? c
              .map((b: { type?: string; name?: string; input?: unknown }) =>
                b.name ? `${b.name}${JSON.stringify(b.input ?? {}).slice(0, 120)}` : b.type,
              )
              .join(",")
          : typeof c === "string"
            ? JSON.stringify(c.slice(0, 80))
            : "";
        return `${e.timestamp ?? "-"} ${e.type}${e.subtype ? `/${e.subtype}` : ""} ${blocks}`;
      } catch {
        return `(torn) ${l.slice(0, 80)}`;
      }
    })
    .join("\n");
}

/** Ticks every second until one decides `decision` (each earlier one must be in `before`). */
async function tickUntil(
  { p, transcript, api }: { p: ClaudeProgram; transcript: string; api: FakeAnthropic },
  decision: string,
  before: string[],
  withinMs = 60_000,
): Promise<{ decision: string; reason: string; facts: Record<string, unknown> }> {
  const end = Date.now() + withinMs;
  const seen: string[] = [];
  for (;;) {
    const t = await tickAsync(p.env);
    expect(t.code, t.stderr).toBe(0);
    const r = t.report as unknown as {
      decision: string;
      reason: string;
      facts: Record<string, unknown>;
    };
    if (r.decision === decision) return r;
    seen.push(`${r.decision}: ${r.reason}`);
    if (!before.includes(r.decision) || Date.now() > end)
      throw new Error(
        `expected ${decision}; the ticks said:\n${seen.join("\n")}\n` +
          `the transcript ends:\n${transcriptEnd(transcript)}\n` +
          `the fake API answered: ${api.requests.map((q) => q.answeredBy).join(", ")}`,
      );
    await new Promise((res) => setTimeout(res, 1000));
  }
}

/** A Bash call the model makes after the save (no `sheepdog` prefix: the allow rule is exact). */
const bashAfterSave = (input: Record<string, unknown>): Rule => ({
  name: "after save",
  when: (t) => t.main && savedBefore(t),
  reply: {
    tool: { name: "Bash", input: { description: "run it", ...input } },
    usage: usageOf(15_504),
  },
});

describe.skipIf(skipWithout("claude", claude.why, CLAUDE_INSTALL))(
  `activity of the real Claude Code ${CLAUDE_CODE_VERSION} (tmux launcher)`,
  () => {
    const ntfy = useNtfyServer();

    it("a turn that ends with nothing to wake it is nudged once, then restarted when nothing follows", async () => {
      const m = await managerThen([]);
      const session = basename(m.transcript, ".jsonl");
      const { stop } = await waitFor("the turn's Stop", () => {
        const r = readHookRecords(session, m.p.env);
        return r.stop ? r : null;
      });
      const nudge = await tickUntil(m, "nudge", ["ok"]);
      expect(nudge.reason).toMatch(/idle: the turn ended .* nothing will wake it/);
      const [nudged] = ofType(m.p.stateDir, "nudged");
      expect(nudged).toMatchObject({ pid: m.pid, via: expect.stringMatching(/^tmux send-keys/) });
      expect(nudged?.error).toBeUndefined();
      // The line reached the model as a turn of its own (it answers without saving).
      await waitFor("the nudge at the model", () =>
        m.api.mainTurns().some((t) => /this session has been idle for/.test(t.lastUser)),
      );
      // Until nudge_wait has passed it is left alone; then, idle again, it is replaced.
      const restart = await tickUntil(m, "restart_idle", ["ok"]);
      expect(restart.reason).toMatch(/nudged .* ago \(nudge_wait 5s\) with no save since/);
      expect(ofType(m.p.stateDir, "nudged")).toHaveLength(1);
      const [stopped] = ofType(m.p.stateDir, "manager_stopped");
      expect(stopped).toMatchObject({ pid: m.pid, decision: "restart_idle" });
      expect(ofType(m.p.stateDir, "restart_idle")[0]).toMatchObject({
        pid: m.pid,
        verdict: "idle",
      });
      expect(isAlive(m.pid, m.start_time)).toBe(false);
      const next = ofType(m.p.stateDir, "manager_started")[1];
      expect(next).toMatchObject({ planned: false });
      await waitForClaimBy(m.p.stateDir, next?.pid as number);
      timing("turn end to restart_idle (quiet_after 6s, nudge_wait 5s)", stop?.at, stopped?.at);
    }, 150_000);

    it("the same turn with sheepdog wait running in the background is left alone", async () => {
      const m = await managerThen([
        bashAfterSave({ command: "sheepdog wait --every 20m", run_in_background: true }),
        {
          name: "waiting",
          when: (t) => t.main && t.toolResults.some((r) => /background/i.test(r)),
          reply: { text: "Waiting for sheepdog wait.", usage: usageOf(15_604) },
        },
      ]);
      const session = basename(m.transcript, ".jsonl");
      await waitFor("the Stop listing the wait", () => {
        const r = readHookRecords(session, m.p.env);
        return r.stop && r.stop.background_count > 0 ? r : null;
      });
      // Well past quiet_after: every tick says waiting, and nothing is nudged or stopped.
      await new Promise((r) => setTimeout(r, 9000));
      const t = await tickAsync(m.p.env);
      expect(t.report.decision).toBe("ok");
      expect(t.report.reason).toMatch(/waiting: .*sheepdog wait/);
      const facts = t.report.facts as { activity?: { verdict: string } };
      expect(facts.activity?.verdict).toBe("waiting");
      // last-tick.json keeps the verdict with its evidence, and status says it in words.
      const last = JSON.parse(readFileSync(join(m.p.stateDir, "last-tick.json"), "utf8"));
      expect(last.facts.activity).toMatchObject({
        verdict: "waiting",
        evidence: expect.arrayContaining([expect.stringMatching(/sheepdog wait/)]),
      });
      const status = await sheepdogAsync(["status", "--wide"], { env: m.p.env });
      expect(status.stdout).toMatch(/ok: .*waiting: the turn ended .*sheepdog wait/);
      expect(ofType(m.p.stateDir, "nudged")).toHaveLength(0);
      expect(ofType(m.p.stateDir, "manager_stopped")).toHaveLength(0);
    }, 120_000);

    it("a Bash call inside its own limit is left alone", async () => {
      const m = await managerThen(
        [bashAfterSave({ command: 'node -e "setTimeout(() => {}, 60000)"', timeout: 120000 })],
        { allow: ["Bash(node:*)"] },
      );
      await waitFor("the call's process", () =>
        descendants(m.pid).some((c) => c.args.includes("setTimeout")),
      );
      await new Promise((r) => setTimeout(r, 8000));
      const t = await tickAsync(m.p.env);
      expect(t.report.decision).toBe("ok");
      expect(t.report.reason).toMatch(
        // Working: the call is open within its limit, or the tree (its spinner) used CPU.
        /working: (a Bash call has been open since .* within its limit of 2m|its process tree used)/,
      );
      expect(ofType(m.p.stateDir, "manager_stopped")).toHaveLength(0);
    }, 120_000);

    it.skipIf(
      skipWithout("cgroup freezer", freezerMissing(), "run as root with /sys/fs/cgroup/freezer"),
    )(
      "a Bash call that hangs past its own limit is restarted as wedged",
      async () => {
        // The CLI hangs (frozen: no CPU, no growth) while its Bash call is open. Unfrozen, 2.1.328
        // would move the command to the background at its 5 s timeout and end the call.
        const m = await managerThen(
          [bashAfterSave({ command: 'node -e "setTimeout(() => {}, 60000)"', timeout: 5000 })],
          { allow: ["Bash(node:*)"] },
        );
        await waitFor("the call's process", () =>
          descendants(m.pid).some((c) => c.args.includes("setTimeout")),
        );
        // 2.1.328's transcript writes lag behind its requests: the call runs while the transcript
        // may still end at the save's, or at its result. A freeze then would stage that instead.
        await waitFor("the call open in the transcript", () => {
          const tail = transcriptTail(m.transcript);
          return tail.state === "tool_open" && tail.tool.timeout_ms === 5000;
        });
        const freezer = makeFreezer("wedged");
        freezers.push(freezer);
        freezer.freeze([m.pid]);
        const frozenAt = new Date().toISOString();
        // A frozen process takes no signal: thawed once the tick has decided, its TERM lands.
        const thaw = setInterval(() => {
          if (ofType(m.p.stateDir, "restart_wedged").length > 0) {
            clearInterval(thaw);
            freezer.thaw();
          }
        }, 100);
        try {
          const r = await tickUntil(m, "restart_wedged", ["ok"]);
          expect(r.reason).toMatch(
            /wedged: a Bash call has been open since .* past its own limit of 5s/,
          );
        } finally {
          clearInterval(thaw);
          freezer.thaw();
        }
        const [wedged] = ofType(m.p.stateDir, "restart_wedged");
        expect(wedged).toMatchObject({ pid: m.pid, verdict: "wedged" });
        const [stopped] = ofType(m.p.stateDir, "manager_stopped");
        expect(stopped).toMatchObject({ pid: m.pid, decision: "restart_wedged" });
        expect(ofType(m.p.stateDir, "nudged")).toHaveLength(0);
        expect(isAlive(m.pid, m.start_time)).toBe(false);
        const next = ofType(m.p.stateDir, "manager_started")[1];
        await waitForClaimBy(m.p.stateDir, next?.pid as number);
        timing("hang to restart_wedged (Bash timeout 5s, quiet_after 6s)", frozenAt, stopped?.at);
      },
      150_000,
    );

    it("a 529 storm pages once and never restarts", async () => {
      const m = await managerThen(
        [
          {
            name: "529",
            when: (t) => t.main && savedBefore(t),
            times: Infinity,
            reply: { status: 529 },
          },
        ],
        { page: "storm" },
        ntfy.url,
      );
      const r = await tickUntil(m, "api_retry", ["ok"]);
      // 2.1.328 retries a 529 (one `api-request` entry per try), or has ended the turn on it.
      expect(r.reason).toMatch(
        /api_retry: (one request was tried \d+ times|the turn ended .* on an API error \(529\))/,
      );
      expect(m.api.requests.filter((q) => q.answeredBy === "529").length).toBeGreaterThanOrEqual(3);
      for (let i = 0; i < 2; i++) {
        const again = await tickAsync(m.p.env);
        expect(again.report.decision).toBe("ok");
        expect(again.report.reason).toMatch(/api_retry/);
      }
      expect(ofType(m.p.stateDir, "api_errors")).toHaveLength(1);
      const pages = ntfy.received.filter((x) => x.topic === "storm");
      expect(pages.map((x) => x.title)).toEqual(["catalog: the manager is getting API errors"]);
      expect(ofType(m.p.stateDir, "manager_stopped")).toHaveLength(0);
      expect(isAlive(m.pid, m.start_time)).toBe(true);
    }, 120_000);

    it("a permission prompt pages with its screen and never restarts", async () => {
      const m = await managerThen(
        [bashAfterSave({ command: "touch made.txt" })],
        { page: "asks" },
        ntfy.url,
      );
      const session = basename(m.transcript, ".jsonl");
      await waitFor("the permission Notification", () => {
        const n = readHookRecords(session, m.p.env).notification;
        return n?.notification_type === "permission_prompt" ? n : null;
      });
      const r = await tickUntil(m, "blocked", ["ok"]);
      expect(r.reason).toMatch(/blocked: Claude Code asked for a person .*permission_prompt/);
      const [blocked] = ofType(m.p.stateDir, "blocked");
      expect(String(blocked?.screen)).toMatch(/touch made\.txt/);
      const again = await tickAsync(m.p.env);
      expect(again.report.decision).toBe("ok");
      expect(ofType(m.p.stateDir, "blocked")).toHaveLength(1);
      const pages = ntfy.received.filter((x) => x.topic === "asks");
      expect(pages.map((x) => x.title)).toEqual(["catalog: the manager waits for a person"]);
      expect(pages[0]?.message).toMatch(/touch made\.txt/);
      expect(isAlive(m.pid, m.start_time)).toBe(true);
    }, 120_000);
  },
);
