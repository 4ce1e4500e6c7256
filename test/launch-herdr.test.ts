// The herdr launcher against the Herdr stand-in (test/bin/herdr): Herdr cannot be installed here.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { appendEvent } from "../src/journal/journal.js";
import { freeAgentName, type HerdrTiming, launcher, startHerdr } from "../src/launch/herdr.js";
import { projectDirOf, promptArrived, tailLines } from "../src/launch/herdr-arrival.js";
import { StartFailed } from "../src/launch/start-failed.js";
import { managerTranscriptEnv } from "../src/usage/transcript.js";
import { tempDir } from "./helpers/cli.js";
import {
  alive,
  answerProblems,
  killGroup,
  programWith,
  readRecord,
  requestFor,
  standinLog,
  TEST_BIN,
  waitFor,
  writeRecorder,
} from "./helpers/launch.js";

const FAST: HerdrTiming = { startMs: 10_000, promptMs: 5_000, arrivalMs: 1_500, tries: 3 };
const SAVED = { ...process.env };

let dir: string;
let seat: string;
let record: string;
let stateFile: string;
let logFile: string;

interface StandinState {
  workspaces: { workspace_id: string; label: string }[];
  tabs: { tab_id: string }[];
  panes: { pane_id: string; tab_id: string }[];
  agents: { name: string; pid: number; pane_id: string }[];
}

function state(): StandinState {
  return JSON.parse(readFileSync(stateFile, "utf8")) as StandinState;
}

function calls(sub?: string) {
  return standinLog(logFile).filter((c) => !sub || c.argv.slice(0, 2).join(" ") === sub);
}

function program(name = "alpha", herdr: Record<string, unknown> = {}) {
  return programWith(name, {
    page: { ntfy: { topic: `${name}-pages`, token_env: "NTFY_TOKEN" } },
    manager: {
      launcher: "herdr",
      env: { CLAUDE_CONFIG_DIR: seat, RECORD_TO: record },
      herdr: { args: ["--model", "opus", "--name={program}"], ...herdr },
    },
  });
}

/** Runs the stand-in directly, as a person would. */
function herdr(args: string[], env: Record<string, string> = {}) {
  const r = spawnSync(join(TEST_BIN, "herdr"), args, {
    encoding: "utf8",
    // The stand-in writes transcripts under the seat: never the real ~/.claude.
    env: { ...process.env, CLAUDE_CONFIG_DIR: seat, ...env },
  });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

beforeEach(() => {
  dir = tempDir();
  seat = join(dir, "seat");
  record = join(dir, "record.json");
  stateFile = join(dir, "herdr-state.json");
  logFile = join(dir, "herdr-log.jsonl");
  const fakeBin = join(dir, "bin");
  spawnSync("mkdir", ["-p", fakeBin]);
  writeRecorder(fakeBin, "claude");
  process.env.PATH = `${TEST_BIN}:${fakeBin}:${SAVED.PATH}`;
  process.env.HERDR_STANDIN_STATE = stateFile;
  process.env.HERDR_STANDIN_LOG = logFile;
  delete process.env.HERDR_STANDIN_DROP_PROMPTS;
  delete process.env.HERDR_STANDIN_DROP_MODE;
  delete process.env.HERDR_STANDIN_FAULT;
});

afterEach(() => {
  if (existsSync(stateFile)) for (const a of state().agents) killGroup(a.pid);
  const rec = readRecord(record);
  if (rec) killGroup(rec.pid);
  for (const k of Object.keys(process.env)) if (!(k in SAVED)) delete process.env[k];
  Object.assign(process.env, SAVED);
});

describe("herdr launcher", () => {
  it("creates the workspace, a tab, starts the agent, prompts and sees the prompt arrive", async () => {
    const ctx = program();
    const req = requestFor(ctx, `it's "stuck"; $(echo no)`);
    const launched = await startHerdr(req, FAST);

    const s = state();
    expect(s.workspaces.map((w) => w.label)).toEqual(["alpha"]);
    expect(launched).toMatchObject({ launcher: "herdr", agent: "manager" });
    expect(s.agents.map((a) => [a.name, a.pane_id])).toEqual([["manager", launched.pane]]);
    const pane = s.panes.find((p) => p.pane_id === launched.pane);
    expect(pane?.tab_id).toBe(launched.window);

    const argvs = calls().map((c) => c.argv);
    const ws = s.workspaces[0]?.workspace_id as string;
    expect(argvs).toEqual([
      // No workspace recorded for the program yet: a new one, never one found by its label.
      ["workspace", "create", "--cwd", ctx.root, "--label", "alpha", "--no-focus"],
      [
        "tab",
        "create",
        "--workspace",
        ws,
        "--cwd",
        ctx.root,
        "--label",
        "manager",
        "--env",
        `CLAUDE_CONFIG_DIR=${seat}`,
        "--env",
        `RECORD_TO=${record}`,
        "--env",
        `SHEEPDOG_PROGRAM=${ctx.root}`,
        "--no-focus",
      ],
      ["agent", "list"],
      [
        "agent",
        "start",
        "manager",
        "--kind",
        "claude",
        "--pane",
        launched.pane,
        "--timeout",
        "10000",
        "--",
        "--model",
        "opus",
        "--name=alpha",
      ],
      [
        "agent",
        "prompt",
        "manager",
        req.prompt,
        "--wait",
        "--until",
        "working",
        "--timeout",
        "5000",
      ],
      // The pid (AgentInfo has none) and the session Herdr's Claude integration reports.
      ["pane", "process-info", "--pane", launched.pane],
      ["agent", "get", "manager"],
    ]);
    expect(calls().flatMap((c) => c.violations)).toEqual([]);
    expect(calls().every((c) => c.exit === 0)).toBe(true);

    // The agent is a real process, started in the program root with the manager's env.
    const rec = await waitFor("the agent's record", () => readRecord(record));
    expect(rec.argv).toEqual(["--model", "opus", "--name=alpha"]);
    expect(rec.cwd).toBe(ctx.root);
    expect(rec.env.SHEEPDOG_PROGRAM).toBe(ctx.root);
    expect(alive(rec.pid)).toBe(true);
    expect(promptArrived(seat, ctx.root, req.prompt, Date.now() - 60_000)).toBe(true);
    // Stopped by exact pid like the other launchers' managers; the exact transcript is known.
    expect(launched.pid).toBe(rec.pid);
    expect(launched.start_time).toEqual(expect.any(String));
    expect(launched.workspace).toBe(ws);
    expect(launched.transcript).toMatch(
      new RegExp(
        `^${projectDirOf(seat, ctx.root).replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}/[0-9a-f-]{36}\\.jsonl$`,
      ),
    );
    expect(existsSync(launched.transcript as string)).toBe(true);
  });

  it("finds the prompt in the project folder manager.env names with CLAUDE_CODE_PROJECT_DIR_NAME", async () => {
    // Claude Code in the pane gets manager.env: its transcripts go to <seat>/projects/<that
    // name>/, not the munged root; the arrival check must look where Claude writes.
    const ctx = programWith("alpha", {
      manager: {
        launcher: "herdr",
        env: {
          CLAUDE_CONFIG_DIR: seat,
          RECORD_TO: record,
          CLAUDE_CODE_PROJECT_DIR_NAME: "renamed",
        },
        herdr: { args: [] },
      },
    });
    const req = requestFor(ctx, "a reason");
    const launched = await startHerdr(req, FAST);
    const folder = join(seat, "projects", "renamed");
    expect(launched.transcript?.startsWith(`${folder}/`)).toBe(true);
    expect(existsSync(launched.transcript as string)).toBe(true);
    expect(existsSync(projectDirOf(seat, ctx.root))).toBe(false);
    const env = managerTranscriptEnv(ctx.config.manager.env);
    expect(projectDirOf(seat, ctx.root, env)).toBe(folder);
    expect(promptArrived(seat, ctx.root, req.prompt, Date.now() - 60_000, env)).toBe(true);
    expect(promptArrived(seat, ctx.root, req.prompt, Date.now() - 60_000)).toBe(false);
    // Our own environment's value gives way to the manager's.
    expect(managerTranscriptEnv({}, { CLAUDE_CODE_PROJECT_DIR_NAME: "ours" })).toEqual({
      CLAUDE_CODE_PROJECT_DIR_NAME: "ours",
    });
    expect(
      managerTranscriptEnv(
        { CLAUDE_CODE_PROJECT_DIR_NAME: "theirs" },
        { CLAUDE_CODE_PROJECT_DIR_NAME: "ours" },
      ),
    ).toEqual({ CLAUDE_CODE_PROJECT_DIR_NAME: "theirs" });
  });

  it("never hands the page token to herdr or the agent", async () => {
    process.env.NTFY_TOKEN = "tk_never_in_a_pane";
    // herdr itself records the environment it was run with (it keeps it for every pane).
    const seen = join(dir, "herdr-env.jsonl");
    const wrapperDir = join(dir, "wrap");
    spawnSync("mkdir", ["-p", wrapperDir]);
    writeFileSync(
      join(wrapperDir, "herdr"),
      `#!/bin/sh\nprintf '%s\\n' "\${NTFY_TOKEN-unset}" >> ${JSON.stringify(seen)}\nexec ${JSON.stringify(join(TEST_BIN, "herdr"))} "$@"\n`,
      { mode: 0o755 },
    );
    process.env.PATH = `${wrapperDir}:${process.env.PATH}`;
    const ctx = program();
    const launched = await startHerdr(requestFor(ctx), FAST);
    expect(launched.agent).toBe("manager");
    const rec = await waitFor("the agent's record", () => readRecord(record));
    expect(rec.env.SHEEPDOG_PROGRAM).toBe(ctx.root);
    expect(rec.env.NTFY_TOKEN).toBeUndefined();
    const herdrSaw = readFileSync(seen, "utf8").trim().split("\n");
    expect(herdrSaw.length).toBeGreaterThan(3);
    expect(new Set(herdrSaw)).toEqual(new Set(["unset"]));
  });

  it("reuses only the workspace it recorded, and gives a taken agent name a suffix", async () => {
    const ctx = program();
    // Someone else's workspace that happens to carry the program's name as its label.
    herdr(["workspace", "create", "--cwd", dir, "--label", "alpha", "--no-focus"]);
    const first = await startHerdr(requestFor(ctx), FAST);
    expect(calls("workspace create")).toHaveLength(2);
    expect(first.workspace).not.toBe(state().workspaces[0]?.workspace_id);
    // The tick journals what a start launched; the next start reuses that workspace.
    appendEvent(ctx.stateDir, { type: "manager_started", reason: "r", planned: true, ...first });
    const second = await startHerdr(requestFor(ctx, "a second start"), FAST);
    expect(calls("workspace create")).toHaveLength(2);
    expect(second.workspace).toBe(first.workspace);
    expect(calls("tab create")).toHaveLength(2);
    expect(first.agent).toBe("manager");
    expect(second.agent).toBe("manager-2");
    expect(second.window).not.toBe(first.window);
    expect(calls("agent start")[1]?.argv[2]).toBe("manager-2");
    expect(calls("agent prompt")[1]?.argv[2]).toBe("manager-2");

    // Once the first is gone its name is free again.
    await launcher.close(ctx, first);
    const third = await startHerdr(requestFor(ctx, "a third start"), FAST);
    expect(third.agent).toBe("manager");
  });

  it("uses the configured workspace label, agent name and kind", async () => {
    const ctx = program("beta", { workspace: "loops", agent: "boss", kind: "claude", args: [] });
    const launched = await startHerdr(requestFor(ctx), FAST);
    expect(launched.agent).toBe("boss");
    expect(state().workspaces.map((w) => w.label)).toEqual(["loops"]);
    // No agent args: no `--` either.
    expect(calls("agent start")[0]?.argv.slice(-4)).toEqual([
      "--pane",
      launched.pane,
      "--timeout",
      "10000",
    ]);
  });

  for (const [drops, mode] of [
    [1, "silent"],
    [2, "silent"],
    [1, "stalled"],
    [2, "stalled"],
  ] as const) {
    it(`retries when the first ${drops} prompt(s) are lost (${mode})`, async () => {
      process.env.HERDR_STANDIN_DROP_PROMPTS = String(drops);
      process.env.HERDR_STANDIN_DROP_MODE = mode;
      const ctx = program();
      const req = requestFor(ctx);
      const launched = await startHerdr(req, FAST);
      expect(launched.agent).toBe("manager");
      const prompts = calls("agent prompt");
      expect(prompts).toHaveLength(drops + 1);
      expect(prompts.every((c) => c.argv[3] === req.prompt)).toBe(true);
      expect(prompts.map((c) => c.exit)).toEqual([
        ...Array(drops).fill(mode === "stalled" ? 1 : 0),
        0,
      ]);
      expect(promptArrived(seat, ctx.root, req.prompt, Date.now() - 60_000)).toBe(true);
    });
  }

  it("fails clearly after 3 lost prompts and closes the pane it made", async () => {
    process.env.HERDR_STANDIN_DROP_PROMPTS = "3";
    const ctx = program();
    const err = await startHerdr(requestFor(ctx), FAST).then(
      () => null,
      (e: Error) => e,
    );
    expect(err?.message).toMatch(/the prompt never reached agent manager/);
    expect(err?.message).toContain(projectDirOf(seat, ctx.root));
    expect(err?.message).toMatch(/send 3: herdr said delivered/);
    expect(err).toBeInstanceOf(StartFailed);
    expect((err as StartFailed).screen).toMatch(/prompt swallowed/);
    expect(calls("agent prompt")).toHaveLength(3);
    expect(calls("pane close")).toHaveLength(1);
    const rec = await waitFor("the agent's record", () => readRecord(record));
    await waitFor("the agent to be stopped", () => !alive(rec.pid));
    expect(state().agents).toEqual([]);
  });

  it("close closes the pane and its process ends; screen shows the agent's screen", async () => {
    const ctx = program();
    const req = requestFor(ctx);
    const launched = await startHerdr(req, FAST);
    const rec = await waitFor("the agent's record", () => readRecord(record));

    const screen = await launcher.screen(ctx, launched);
    expect(screen).toContain(req.prompt);
    // By pane (a timed-out start clears the name), `visible` (a busy agent refuses `recent`).
    expect(calls("agent read").at(-1)?.argv).toEqual([
      "agent",
      "read",
      launched.pane,
      "--source",
      "visible",
    ]);

    await launcher.close(ctx, launched);
    expect(calls("pane close").at(-1)?.argv).toEqual(["pane", "close", launched.pane]);
    await waitFor("the agent to be stopped", () => !alive(rec.pid));
    expect(state().panes.some((p) => p.pane_id === launched.pane)).toBe(false);
    // Already gone: close is quiet, screen is null.
    await launcher.close(ctx, launched);
    expect(await launcher.screen(ctx, launched)).toBeNull();
  });

  it("does not close a pane that is no longer in the recorded tab", async () => {
    const ctx = program();
    const launched = await startHerdr(requestFor(ctx), FAST);
    await launcher.close(ctx, { ...launched, window: "w9:t99" });
    expect(calls("pane close")).toHaveLength(0);
    expect(state().panes.some((p) => p.pane_id === launched.pane)).toBe(true);
  });

  const faults: [string, unknown, RegExp][] = [
    [
      "workspace create",
      "malformed",
      /^herdr workspace create --label alpha: herdr's answer is not JSON/,
    ],
    [
      "tab create",
      "wrong_shape",
      /^herdr tab create --workspace w\d+: unexpected answer from herdr at \.result\.tab: /,
    ],
    [
      "agent start",
      { code: "server_error", message: "boom" },
      /^herdr agent start manager: Herdr error server_error: boom/,
    ],
    ["agent list", "exit2", /^herdr agent list: herdr rejected the command line \(exit 2\)/],
    [
      "agent prompt",
      { code: "agent_not_found", message: "agent manager not found" },
      /^herdr agent prompt manager: Herdr error agent_not_found/,
    ],
  ];
  for (const [sub, fault, expected] of faults) {
    it(`a bad answer from \`herdr ${sub}\` gives a clear error and leaves no pane behind`, async () => {
      process.env.HERDR_STANDIN_FAULT = JSON.stringify({ [sub]: fault });
      const ctx = program();
      await expect(startHerdr(requestFor(ctx), FAST)).rejects.toThrow(expected);
      if (existsSync(stateFile)) {
        const s = state();
        expect(s.agents).toEqual([]);
        // Once the tab is known, its pane is closed: only the new workspace's own pane remains.
        if (sub.startsWith("agent")) expect(s.panes).toHaveLength(1);
      }
    });
  }

  it("says so when herdr is not installed", async () => {
    const ctx = program();
    process.env.PATH = "/nonexistent";
    await expect(startHerdr(requestFor(ctx), FAST)).rejects.toThrow(
      /^herdr workspace create --label alpha: cannot run herdr .*on PATH/,
    );
  });

  it("picks free agent names", () => {
    const cases: [string, string[], string][] = [
      ["manager", [], "manager"],
      ["manager", ["manager"], "manager-2"],
      ["manager", ["manager", "manager-2", "manager-3"], "manager-4"],
      ["a".repeat(32), ["a".repeat(32)], `${"a".repeat(30)}-2`],
    ];
    for (const [base, taken, want] of cases) {
      const got = freeAgentName(base, new Set(taken));
      expect(got).toBe(want);
      expect(got).toMatch(/^[a-z][a-z0-9_-]{0,31}$/);
    }
  });
});

describe("herdr stand-in", () => {
  it("rejects bad syntax with exit 2 and a usage message", () => {
    const bad: string[][] = [
      ["frobnicate"],
      ["workspace", "frob"],
      ["workspace", "create", "--colour", "red"],
      ["workspace", "create", "--label"],
      ["tab", "create", "--env", "NOEQUALS"],
      ["agent", "start", "manager", "--pane", "w1:p1", "--timeout", "5000"],
      ["agent", "start", "manager", "--kind", "claude", "--timeout", "5000"],
      ["agent", "start", "manager", "--kind", "vim", "--pane", "w1:p1"],
      ["agent", "start", "manager", "--kind", "claude", "--pane", "w1:p1", "--timeout", "soon"],
      ["agent", "prompt", "manager"],
      ["agent", "prompt", "manager", "hi", "--until", "working"],
      ["agent", "prompt", "manager", "hi", "--timeout", "5000"],
      ["agent", "prompt", "manager", "hi", "--wait", "--until", "sleeping", "--timeout", "5"],
      ["agent", "read", "manager", "--source", "everything"],
      ["pane", "close"],
    ];
    for (const args of bad) {
      const r = herdr(args);
      expect({ args, code: r.code }).toEqual({ args, code: 2 });
      expect(r.err.trim()).not.toBe("");
      expect(r.out).toBe("");
    }
  });

  it("answers errors as error objects (exit 1), records waits without --timeout", () => {
    const made = herdr(["workspace", "create", "--cwd", dir, "--label", "x", "--no-focus"]);
    const pane = JSON.parse(made.out).result.root_pane.pane_id as string;
    const cases: [string[], string][] = [
      [
        ["agent", "start", "Manager", "--kind", "claude", "--pane", pane, "--timeout", "5000"],
        "invalid_agent_name",
      ],
      [
        ["agent", "start", "m", "--kind", "claude", "--pane", pane, "--timeout", "1000"],
        "invalid_agent_timeout",
      ],
      [
        ["agent", "start", "m", "--kind", "claude", "--pane", "w9:p9", "--timeout", "5000"],
        "agent_pane_not_found",
      ],
      [
        [
          "agent",
          "start",
          "m",
          "--kind",
          "claude",
          "--pane",
          pane,
          "--timeout",
          "5000",
          "--",
          "a\nb",
        ],
        "invalid_agent_argument",
      ],
      [["agent", "send-keys", "nobody", "hyperspace"], "invalid_key"],
      [["agent", "get", "nobody"], "agent_not_found"],
      [["pane", "close", "w9:p9"], "pane_not_found"],
    ];
    for (const [args, code] of cases) {
      const r = herdr(args);
      expect({ args, code: r.code }).toEqual({ args, code: 1 });
      expect(JSON.parse(r.err).error.code).toBe(code);
      expect(answerProblems(r.err, "error_response")).toEqual([]);
    }
    expect(herdr(["workspace", "list"], { HERDR_STANDIN_STATE: "" }).code).toBe(1);

    const started = herdr(["agent", "start", "m", "--kind", "claude", "--pane", pane]);
    expect(started.code).toBe(0);
    expect(herdr(["agent", "prompt", "m", "hello", "--wait"]).code).toBe(0);
    const violations = calls().flatMap((c) => c.violations);
    expect(violations).toEqual([
      "agent start without --timeout",
      "agent prompt --wait without --timeout",
    ]);
  });

  it("answers in the shapes of Herdr's published schema", () => {
    const answers: string[] = [];
    const run = (args: string[]) => {
      const r = herdr(args);
      expect({ args, code: r.code, err: r.err }).toEqual({ args, code: 0, err: "" });
      answers.push(r.out);
      return JSON.parse(r.out).result;
    };
    run(["workspace", "list"]);
    const made = run(["workspace", "create", "--cwd", dir, "--label", "x", "--no-focus"]);
    run(["workspace", "list"]);
    const tab = run(["tab", "create", "--workspace", made.workspace.workspace_id, "--cwd", dir]);
    run(["tab", "list"]);
    run([
      "agent",
      "start",
      "m",
      "--kind",
      "claude",
      "--pane",
      tab.root_pane.pane_id,
      "--timeout",
      "5000",
    ]);
    run(["agent", "prompt", "m", "hello", "--wait", "--until", "working", "--timeout", "5000"]);
    run(["agent", "list"]);
    run(["agent", "get", "m"]);
    run(["pane", "get", tab.root_pane.pane_id]);
    run(["pane", "close", tab.root_pane.pane_id]);
    for (const text of answers) expect(answerProblems(text, "success_response")).toEqual([]);
    // The check itself can fail: a missing required key is found.
    const broken = JSON.parse(answers[1] as string);
    delete broken.result.workspace.label;
    expect(answerProblems(JSON.stringify(broken), "success_response")).not.toEqual([]);
  });
});

describe("prompt arrival in the transcript", () => {
  const PROMPT = "Read /r/MANAGER-PROMPT.md and follow it. You were started by sheepdog: x.";
  const user = (content: unknown, extra: Record<string, unknown> = {}) =>
    JSON.stringify({
      type: "user",
      isSidechain: false,
      timestamp: new Date().toISOString(),
      message: { role: "user", content },
      ...extra,
    });
  const cases: [string, () => string[], boolean][] = [
    ["a user entry with the prompt as a string", () => [user(PROMPT)], true],
    [
      "a user entry with the prompt as a text part",
      () => [user([{ type: "text", text: PROMPT }])],
      true,
    ],
    ["no entry", () => [], false],
    ["another prompt", () => [user("something else")], false],
    [
      "the prompt in an assistant entry",
      () => [JSON.stringify({ type: "assistant", message: { content: PROMPT } })],
      false,
    ],
    ["the prompt in a sidechain entry", () => [user(PROMPT, { isSidechain: true })], false],
    [
      "the prompt from long before the start",
      () => [user(PROMPT, { timestamp: "2020-01-01T00:00:00Z" })],
      false,
    ],
    [
      "the prompt in a tool result",
      () => [user([{ type: "tool_result", content: PROMPT }])],
      false,
    ],
    ["a broken line before it", () => ["{not json", user(PROMPT)], true],
  ];
  for (const [what, lines, want] of cases) {
    it(`${want ? "finds" : "does not find"} ${what}`, () => {
      const seatDir = tempDir();
      const cwd = "/r/my program";
      const folder = projectDirOf(seatDir, cwd);
      expect(folder).toBe(join(seatDir, "projects", "-r-my-program"));
      spawnSync("mkdir", ["-p", folder]);
      writeFileSync(
        join(folder, "s1.jsonl"),
        lines()
          .map((l) => `${l}\n`)
          .join(""),
      );
      expect(promptArrived(seatDir, cwd, PROMPT, Date.now() - 5_000)).toBe(want);
    });
  }

  it("ignores transcripts older than the start and sub-agent folders", () => {
    const seatDir = tempDir();
    const folder = projectDirOf(seatDir, "/r");
    spawnSync("mkdir", ["-p", join(folder, "s1", "subagents")]);
    writeFileSync(join(folder, "old.jsonl"), `${user(PROMPT)}\n`);
    const old = new Date(Date.now() - 3_600_000);
    utimesSync(join(folder, "old.jsonl"), old, old);
    writeFileSync(join(folder, "s1", "subagents", "agent-1.jsonl"), `${user(PROMPT)}\n`);
    expect(promptArrived(seatDir, "/r", PROMPT, Date.now() - 5_000)).toBe(false);
    expect(promptArrived(seatDir, "/r", PROMPT, Date.now() - 7_200_000)).toBe(true);
  });

  it("reads only the tail of a big transcript", () => {
    const path = join(tempDir(), "big.jsonl");
    writeFileSync(path, `${"x".repeat(5000)}\n${user("first")}\n${user(PROMPT)}\n`);
    const lines = tailLines(path, 400);
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.some((l) => l.includes("xxxx"))).toBe(false);
    expect(lines.at(-1)).toContain(PROMPT.slice(0, 20));
  });
});
