// program.json for an agent (src/config/agent-config.ts, codex-argv.ts): what load refuses for
// a manager's argv, the agent's launch defaults, and how a codex argv is read.
import { describe, expect, it } from "vitest";
import { codexArgv, isOneShotCodex } from "../../src/config/codex-argv.js";
import { parseConfig } from "../../src/config/load.js";

const load = (manager: Record<string, unknown>) =>
  parseConfig(JSON.stringify({ name: "catalog", manager }), "/p/program.json");
const refusal = (manager: Record<string, unknown>) => {
  try {
    load(manager);
    return null;
  } catch (err) {
    return (err as Error).message;
  }
};

describe("what load refuses", () => {
  const table: [string, Record<string, unknown>, RegExp | null][] = [
    [
      "codex without --no-daemon (tmux)",
      { agent: "codex", launcher: "tmux", tmux: { command: ["codex", "{prompt}"] } },
      /manager\.tmux\.command: expected --no-daemon before any subcommand, got \["codex","\{prompt\}"\]: without it Codex leaves an app-server daemon/,
    ],
    [
      "--no-daemon after exec (0.171.0 refuses it there)",
      { agent: "codex", command: ["codex", "exec", "--no-daemon", "{prompt}"] },
      /manager\.command: expected --no-daemon before any subcommand/,
    ],
    [
      "codex --no-daemon exec",
      { agent: "codex", command: ["codex", "--no-daemon", "exec", "{prompt}"] },
      null,
    ],
    [
      "a path to codex, flags with values before exec",
      {
        agent: "codex",
        command: [
          "/opt/codex/bin/codex",
          "-c",
          'model="o3"',
          "--no-daemon",
          "--profile",
          "sheepdog",
          "e",
          "{prompt}",
        ],
      },
      null,
    ],
    [
      "the Codex TUI under the command launcher",
      { agent: "codex", command: ["codex", "--no-daemon", "{prompt}"] },
      /manager\.command: expected a command that runs without a terminal.*the Codex TUI needs one/,
    ],
    [
      "the TUI under tmux",
      { agent: "codex", launcher: "tmux", tmux: { command: ["codex", "--no-daemon", "{prompt}"] } },
      null,
    ],
    [
      "codex run by a claude program",
      { launcher: "tmux", tmux: { command: ["codex", "--no-daemon", "{prompt}"] } },
      /manager\.agent: expected "codex" for a manager whose manager\.tmux\.command runs codex, got "claude"/,
    ],
    [
      "claude run by a codex program",
      { agent: "codex", launcher: "tmux", tmux: { command: ["claude", "{prompt}"] } },
      /manager\.agent: expected "claude"/,
    ],
    [
      "claude without -p under the command launcher (as before)",
      { command: ["claude", "{prompt}"] },
      /claude without -p\/--print needs one/,
    ],
    [
      "herdr kind codex without --no-daemon in its args",
      { agent: "codex", launcher: "herdr", herdr: { args: [] } },
      /manager\.herdr\.args: expected --no-daemon/,
    ],
    [
      "a command that is neither",
      { agent: "codex", command: ["node", "toy.mjs", "{prompt}"] },
      null,
    ],
    [
      "an unknown agent",
      { agent: "gemini" },
      /manager\.agent: expected one of "claude", "codex", got "gemini"/,
    ],
    [
      "a resume line of two lines",
      { agent: "codex", resume_line: "a\nb" },
      /manager\.resume_line: .*one line of text/,
    ],
  ];
  for (const [what, manager, want] of table)
    it(what, () => {
      const got = refusal(manager);
      if (want === null) expect(got).toBeNull();
      else expect(got).toMatch(want);
    });
  it("every line names the file", () => {
    const got = refusal({ agent: "codex", command: ["codex", "{prompt}"] }) ?? "";
    for (const line of got.split("\n")) expect(line).toMatch(/^\/p\/program\.json: /);
  });
});

describe("the agent's launch defaults", () => {
  it("a codex tmux section without a command runs codex --no-daemon", () => {
    const c = load({ agent: "codex", launcher: "tmux", tmux: { session: "cat" } });
    expect(c.manager.tmux?.command).toEqual(["codex", "--no-daemon", "{prompt}"]);
  });
  it("a codex herdr section: kind codex, args --no-daemon", () => {
    const c = load({ agent: "codex", launcher: "herdr", herdr: {} });
    expect(c.manager.herdr).toMatchObject({ kind: "codex", args: ["--no-daemon"] });
  });
  it("what program.json says wins", () => {
    const c = load({
      agent: "codex",
      launcher: "tmux",
      tmux: { command: ["codex", "--no-daemon", "-p", "x", "{prompt}"] },
    });
    expect(c.manager.tmux?.command).toEqual(["codex", "--no-daemon", "-p", "x", "{prompt}"]);
  });
  it("Claude's are the schema's own, and Claude is the default agent", () => {
    const c = load({ launcher: "tmux", tmux: {} });
    expect(c.manager.agent).toBe("claude");
    expect(c.manager.tmux?.command).toEqual(["claude", "{prompt}"]);
  });
});

describe("codexArgv", () => {
  it("reads the top-level options up to the subcommand", () => {
    expect(
      codexArgv([
        "env",
        "--",
        "codex",
        "-c",
        "x=1",
        "--profile=sheepdog",
        "--no-daemon",
        "-a",
        "never",
        "-s",
        "read-only",
        "exec",
        "--no-daemon",
      ]),
    ).toEqual({
      noDaemon: true,
      subcommand: "exec",
      profile: "sheepdog",
      overrides: ["x=1"],
      approval: "never",
      sandbox: "read-only",
      bypass: false,
    });
  });
  it("a prompt is not a subcommand; the bypass flag is seen", () => {
    const a = codexArgv(["codex", "--dangerously-bypass-approvals-and-sandbox", "fix the tests"]);
    expect(a).toMatchObject({ subcommand: null, bypass: true, noDaemon: false });
    expect(isOneShotCodex(["codex", "--no-daemon", "fix the tests"])).toBe(false);
    expect(isOneShotCodex(["codex", "--no-daemon", "e", "x"])).toBe(true);
  });
});
