// The herdr launcher against the Herdr stand-in (test/bin/herdr) as Herdr 0.8.2: Herdr cannot be
// installed here. test/launch-herdr-0.9.test.ts runs the same launcher suite against it as 0.9.3,
// test/launch-herdr-faults.test.ts the faults both releases have.
import { spawnSync } from "node:child_process";
import { utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { projectDirOf, promptArrived, tailLines } from "../src/launch/herdr-arrival.js";
import { tempDir } from "./helpers/cli.js";
import { launcherSuite } from "./helpers/herdr-launcher-suite.js";
import { herdrTestbed } from "./helpers/herdr-testbed.js";
import { answerProblems } from "./helpers/launch.js";

launcherSuite("0.8.2");

describe("herdr stand-in (as Herdr 0.8.2)", () => {
  const t = herdrTestbed("0.8.2");

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
      const r = t.herdr(args);
      expect({ args, code: r.code }).toEqual({ args, code: 2 });
      expect(r.err.trim()).not.toBe("");
      expect(r.out).toBe("");
    }
  });

  it("answers errors as error objects (exit 1), records waits without --timeout", () => {
    const made = t.herdr(["workspace", "create", "--cwd", t.dir, "--label", "x", "--no-focus"]);
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
      const r = t.herdr(args);
      expect({ args, code: r.code }).toEqual({ args, code: 1 });
      expect(JSON.parse(r.err).error.code).toBe(code);
      expect(answerProblems(r.err, "error_response")).toEqual([]);
    }
    expect(t.herdr(["workspace", "list"], { HERDR_STANDIN_STATE: "" }).code).toBe(1);

    const started = t.herdr(["agent", "start", "m", "--kind", "claude", "--pane", pane]);
    expect(started.code).toBe(0);
    expect(t.herdr(["agent", "prompt", "m", "hello", "--wait", "--until", "working"]).code).toBe(0);
    const violations = t.calls().flatMap((c) => c.violations);
    expect(violations).toEqual([
      "agent start without --timeout",
      "agent prompt --wait without --timeout",
    ]);
  });

  it("answers in the shapes of Herdr's published schema", () => {
    const answers: string[] = [];
    const run = (args: string[]) => {
      const r = t.herdr(args);
      expect({ args, code: r.code, err: r.err }).toEqual({ args, code: 0, err: "" });
      answers.push(r.out);
      return JSON.parse(r.out).result;
    };
    run(["workspace", "list"]);
    const made = run(["workspace", "create", "--cwd", t.dir, "--label", "x", "--no-focus"]);
    run(["workspace", "list"]);
    const tab = run(["tab", "create", "--workspace", made.workspace.workspace_id, "--cwd", t.dir]);
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
