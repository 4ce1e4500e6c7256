// The Codex side of the agent seam (src/agent/codex/): the rollout locator, the prompt's
// arrival, the readings and refusal as the seat takes them, save's wait for the response's
// usage, the seat, and the Stop payload's rollout. On the real 0.171.0 rollouts.
import { mkdirSync, readFileSync, rmSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { codex, codexSeat, readingsOf } from "../../src/agent/codex/agent.js";
import { promptInRollouts } from "../../src/agent/codex/arrival.js";
import {
  findRollout,
  newestRollout,
  rolloutSession,
  sessionMetaOf,
} from "../../src/agent/codex/locate.js";
import { agentFor } from "../../src/agent/index.js";
import { codexRolloutSeat } from "../../src/usage/hook-records.js";
import { recordSession } from "../../src/usage/sessions.js";
import { tempDir } from "../helpers/cli.js";
import { FIXTURES } from "../helpers/fixtures.js";

const fixture = (name: string) => readFileSync(join(FIXTURES, "codex-0.171.0", name), "utf8");
const TMP = tempDir("codex-agent-");
afterAll(() => rmSync(TMP, { recursive: true, force: true }));
let n = 0;

/** A seat with rollouts written as Codex does: `sessions/YYYY/MM/DD/rollout-<time>-<uuid>.jsonl`. */
function seatWith(
  files: {
    fixture: string;
    cwd: string;
    day?: string;
    ageMs?: number;
    session?: string;
    patch?: (t: string) => string;
  }[],
) {
  const seat = join(TMP, `seat-${n++}`);
  const paths = files.map((f, i) => {
    const day = f.day ?? "2026/12/03";
    const dir = join(seat, "sessions", day);
    mkdirSync(dir, { recursive: true });
    const session = f.session ?? `01a23c16-0000-7000-8000-${String(i).padStart(12, "0")}`;
    const path = join(dir, `rollout-2026-12-03T13-27-${String(10 + i)}-${session}.jsonl`);
    let text = fixture(f.fixture).replaceAll("{CWD}", f.cwd);
    if (f.patch) text = f.patch(text);
    writeFileSync(path, text);
    const t = (Date.now() - (f.ageMs ?? 0)) / 1000;
    utimesSync(path, t, t);
    return path;
  });
  return { seat, paths };
}

describe("the rollout locator", () => {
  const root = join(TMP, "catalog");
  const other = join(TMP, "other");
  mkdirSync(root, { recursive: true });
  mkdirSync(other, { recursive: true });

  it("the newest rollout whose session_meta cwd is the root", () => {
    const { seat, paths } = seatWith([
      { fixture: "rollout-tool-turn.jsonl", cwd: root, ageMs: 60_000 },
      { fixture: "rollout-tui-turn.jsonl", cwd: root, ageMs: 1_000 },
      { fixture: "rollout-tool-turn.jsonl", cwd: other, ageMs: 0 },
    ]);
    expect(newestRollout(seat, root)).toBe(paths[1]);
    expect(newestRollout(seat, other)).toBe(paths[2]);
  });
  it("written since the claim: an older manager's rollout does not count", () => {
    const { seat } = seatWith([{ fixture: "rollout-tool-turn.jsonl", cwd: root, ageMs: 600_000 }]);
    expect(newestRollout(seat, root, Date.now() - 60_000)).toBeNull();
    expect(newestRollout(seat, root, Date.now() - 3_600_000)).not.toBeNull();
  });
  it("the root by its real path: a cwd reached through a symlink is the same folder", () => {
    const link = join(TMP, `link-${n}`);
    symlinkSync(root, link);
    const { seat, paths } = seatWith([{ fixture: "rollout-tool-turn.jsonl", cwd: root }]);
    expect(newestRollout(seat, link)).toBe(paths[0]);
  });
  it("a sub-agent's thread (thread_source not user) is not the manager's", () => {
    const { seat, paths } = seatWith([
      { fixture: "rollout-tui-turn.jsonl", cwd: root, ageMs: 5_000 },
      {
        fixture: "rollout-tui-turn.jsonl",
        cwd: root,
        patch: (t) => t.replace('"thread_source":"user"', '"thread_source":"subagent"'),
      },
    ]);
    expect(sessionMetaOf(paths[1] as string)).toMatchObject({ main: false });
    expect(newestRollout(seat, root)).toBe(paths[0]);
  });
  it("across day folders, newest first; other files are not rollouts", () => {
    const { seat, paths } = seatWith([
      { fixture: "rollout-tool-turn.jsonl", cwd: root, day: "2026/12/02", ageMs: 10_000 },
      { fixture: "rollout-tool-turn.jsonl", cwd: root, day: "2026/12/03", ageMs: 20_000 },
    ]);
    writeFileSync(join(seat, "sessions", "2026", "12", "03", "notes.jsonl"), "{}\n");
    expect(newestRollout(seat, root)).toBe(paths[0]);
  });
  it("the rollout a Stop hook recorded for the manager's process wins", () => {
    const state = join(TMP, `state-${n++}`);
    const env = { ...process.env, SHEEPDOG_STATE_DIR: state };
    const { seat, paths } = seatWith([
      { fixture: "rollout-tool-turn.jsonl", cwd: root, ageMs: 30_000 },
      { fixture: "rollout-tool-turn.jsonl", cwd: root },
    ]);
    const manager = { pid: process.pid, start_time: "linux:boot:1" };
    recordSession(
      {
        ...manager,
        transcript_path: paths[0] as string,
        session_id: "x",
        cwd: root,
        seat,
        at: new Date().toISOString(),
      },
      env,
    );
    expect(findRollout(seat, { cwd: root, root, manager, env })).toBe(paths[0]);
    // Not under this seat's sessions: not a rollout of it.
    recordSession(
      {
        ...manager,
        transcript_path: "/elsewhere/rollout-x.jsonl",
        session_id: "x",
        cwd: root,
        seat,
        at: new Date().toISOString(),
      },
      env,
    );
    expect(findRollout(seat, { cwd: root, root, manager, env })).toBe(paths[1]);
  });
  it("a rollout's session is the uuid its name ends in (the Stop payload's session_id)", () => {
    const stop = JSON.parse(fixture("hook-stop.json"));
    expect(rolloutSession(stop.transcript_path)).toBe(stop.session_id);
    expect(rolloutSession("/s/projects/x/abc.jsonl")).toBeNull();
  });
});

describe("the prompt's arrival", () => {
  const root = join(TMP, "arrive");
  mkdirSync(root, { recursive: true });
  it("a user message holding the prompt since the launch", () => {
    const { seat } = seatWith([{ fixture: "rollout-tool-turn.jsonl", cwd: root }]);
    const sent = Date.parse("2026-12-03T13:27:15Z");
    expect(promptInRollouts(seat, root, "run echo hi", sent)).toBe(true);
    expect(promptInRollouts(seat, root, "something else", sent)).toBe(false);
    // Written before the launch began: an older prompt.
    expect(promptInRollouts(seat, root, "run echo hi", sent + 3_600_000)).toBe(false);
  });
});

describe("what the seat takes from a rollout", () => {
  const write = (text: string) => {
    const p = join(TMP, `r-${n++}.jsonl`);
    writeFileSync(p, text);
    return p;
  };
  it("readings: each window with a reset, from the newest rate_limits, as the rollout's session", () => {
    const path = write(fixture("rollout-tool-turn.jsonl"));
    const got = codex.readings(path);
    expect(got.map((r) => [r.window, r.used_percentage, r.source])).toEqual([
      ["five_hour", 42.5, "rollout"],
      ["seven_day", 12, "rollout"],
    ]);
    expect(got[0]?.resets_at).toMatch(/^2026-12-0\dT/);
  });
  it("readings: a window with no reset is none (a plan that names none)", () => {
    const state = {
      context_tokens: null,
      model_context_window: null,
      refusal: null,
      activity: { state: "unknown", at: null } as const,
      readings: {
        at: "2026-12-03T13:00:00.000Z",
        limit_id: "codex",
        windows: [
          {
            window: "five_hour" as const,
            used_percentage: 100,
            resets_at: null,
            window_minutes: 300,
          },
          // Two weeks ahead of its reading: a week's reset cannot be that far (DESIGN §5).
          {
            window: "seven_day" as const,
            used_percentage: 5,
            resets_at: Date.parse("2026-12-17T13:00:00Z") / 1000,
            window_minutes: 10080,
          },
        ],
      },
    };
    expect(readingsOf(state, "s")).toEqual([]);
  });
  it("the refusal in the seat's shape: exact from the 100 % window, its window", () => {
    const r = codex.refusal(write(fixture("rollout-usage-limit-far.jsonl")));
    expect(r).toMatchObject({
      window: "seven_day",
      text: expect.stringMatching(/^You’ve hit your usage limit/),
    });
    expect(typeof r?.resets_at).toBe("number");
    expect(codex.refusal(write(fixture("rollout-rate-limit-429.jsonl")))).toBeNull();
  });
  it("context and window; save waits while its own call's usage is not written yet", () => {
    const open = write(fixture("rollout-call-open.jsonl"));
    expect(codex.context(open)).toEqual({ tokens: 2500, window: 475000 });
    expect(codex.contextReady(open)).toBe(true);
    const lines = fixture("rollout-call-open.jsonl").split("\n").filter(Boolean);
    const beforeUsage = write(`${lines.slice(0, -1).join("\n")}\n`); // ends at the function_call
    expect(codex.tail(beforeUsage).state).toBe("tool_open");
    expect(codex.contextReady(beforeUsage)).toBe(false);
    expect(codex.contextReady(write(fixture("rollout-tool-turn.jsonl")))).toBe(true);
  });
  it("a refusal's turn error says usage_limit; a plain 429's transient", () => {
    const limit = codex.tail(write(fixture("rollout-usage-limit-near.jsonl")));
    expect(limit).toMatchObject({
      state: "ended",
      error: { error: "usage_limit_exceeded", cause: "usage_limit" },
    });
    const plain = codex.tail(write(fixture("rollout-rate-limit-429.jsonl")));
    expect(plain).toMatchObject({ state: "ended", error: { status: 429, cause: "transient" } });
  });
});

describe("the seat and the agent", () => {
  const config = (env: Record<string, string>, seat?: string) => ({
    manager: { env, agent: "codex" as const },
    usage: seat ? { seat } : {},
  });
  it("usage.seat, else manager.env.CODEX_HOME, else $CODEX_HOME, else ~/.codex", () => {
    expect(codexSeat(config({}, "/seat"), {})).toBe("/seat");
    expect(codexSeat(config({ CODEX_HOME: "/m" }), { CODEX_HOME: "/e" })).toBe("/m");
    expect(codexSeat(config({}), { CODEX_HOME: "/e" })).toBe("/e");
    expect(codexSeat(config({}), { HOME: "/home/me" })).toBe("/home/me/.codex");
  });
  it("manager.agent chooses the implementation; Claude by default", () => {
    expect(agentFor({ manager: { agent: "codex" } }).kind).toBe("codex");
    expect(agentFor({ manager: {} }).kind).toBe("claude");
  });
  it("a Stop payload's rollout names its seat; a Claude transcript none", () => {
    const stop = JSON.parse(
      fixture("hook-stop.json").replaceAll("{CODEX_HOME}", "/home/me/.codex"),
    );
    expect(codexRolloutSeat(stop.transcript_path)).toBe("/home/me/.codex");
    expect(
      codexRolloutSeat("/home/me/.claude/projects/-p/ba3e59ff-65af-4025-96fa-773d4a0a44c4.jsonl"),
    ).toBeNull();
    expect(codexRolloutSeat(null)).toBeNull();
  });
});
