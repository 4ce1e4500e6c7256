// The permission verdict for a manager's `sheepdog …` calls, against what the real Claude Code
// 2.1.328 and 2.1.332 did (the same in both, API key and OAuth, a scripted model on 127.0.0.1;
// the probe's cases are the rows marked "measured").
import { describe, expect, it } from "vitest";
import {
  bashRuleMatches,
  permissionMode,
  type SettingsLayer,
  sheepdogPermission,
} from "../../src/usage/claude-permissions.js";

const project = (settings: unknown): SettingsLayer => ({
  path: "/p/.claude/settings.json",
  settings,
});
const seat = (settings: unknown): SettingsLayer => ({ path: "/seat/settings.json", settings });
const allow = (...rules: string[]) => ({ permissions: { allow: rules } });
const none: SettingsLayer[] = [];

describe("sheepdogPermission", () => {
  const rows: {
    what: string;
    args: string[];
    layers: SettingsLayer[];
    root?: boolean;
    ok: boolean;
    why?: RegExp;
  }[] = [
    // measured: "Auto mode can't check actions in this session and needs your choice"
    {
      what: "no flag, no rule",
      args: ["{prompt}"],
      layers: none,
      ok: false,
      why: /auto mode asks/,
    },
    // measured: ran
    {
      what: "no flag, project rule",
      args: ["{prompt}"],
      layers: [project(allow("Bash(sheepdog:*)"))],
      ok: true,
    },
    {
      what: "no flag, seat rule",
      args: ["{prompt}"],
      layers: [seat(allow("Bash(sheepdog:*)"))],
      ok: true,
    },
    // measured: asked all the same (auto mode sets the whole-tool rule aside)
    {
      what: "no flag, Bash",
      args: ["{prompt}"],
      layers: [project(allow("Bash"))],
      ok: false,
      why: /sets aside Bash/,
    },
    {
      what: "no flag, Bash(*)",
      args: ["{prompt}"],
      layers: [project(allow("Bash(*)"))],
      ok: false,
      why: /sets aside/,
    },
    // measured: "Do you want to proceed?"
    {
      what: "default, no rule",
      args: ["--permission-mode", "default", "{prompt}"],
      layers: none,
      ok: false,
      why: /asks a person/,
    },
    // measured: ran
    {
      what: "default, Bash",
      args: ["--permission-mode", "default", "{prompt}"],
      layers: [project(allow("Bash"))],
      ok: true,
    },
    {
      what: "default, new syntax",
      args: ["--permission-mode", "default"],
      layers: [project(allow("Bash(sheepdog *)"))],
      ok: true,
    },
    {
      what: "manual, project rule",
      args: ["--permission-mode", "manual"],
      layers: [project(allow("Bash(sheepdog:*)"))],
      ok: true,
    },
    {
      what: "acceptEdits, project rule",
      args: ["--permission-mode=acceptEdits"],
      layers: [project(allow("Bash(sheepdog:*)"))],
      ok: true,
    },
    // measured: refused ("running in don't ask mode")
    {
      what: "dontAsk, no rule",
      args: ["--permission-mode", "dontAsk"],
      layers: none,
      ok: false,
      why: /refuses it \(dontAsk/,
    },
    {
      what: "dontAsk, rule",
      args: ["--permission-mode", "dontAsk"],
      layers: [project(allow("Bash(sheepdog:*)"))],
      ok: true,
    },
    // measured: ran (the mode from settings)
    {
      what: "defaultMode dontAsk in settings",
      args: [],
      layers: [project({ permissions: { defaultMode: "dontAsk", allow: ["Bash(sheepdog:*)"] } })],
      ok: true,
    },
    {
      what: "defaultMode default with Bash",
      args: [],
      layers: [project({ permissions: { defaultMode: "default", allow: ["Bash"] } })],
      ok: true,
    },
    // measured: "This command requires approval"; ran with a rule, Bash included
    {
      what: "print, no rule",
      args: ["-p", "{prompt}"],
      layers: none,
      ok: false,
      why: /print mode asks nobody/,
    },
    { what: "print, Bash", args: ["-p", "{prompt}"], layers: [project(allow("Bash"))], ok: true },
    {
      what: "print, rule",
      args: ["-p", "{prompt}"],
      layers: [project(allow("Bash(sheepdog:*)"))],
      ok: true,
    },
    // from Claude Code's permission rules (deny, then ask, then allow)
    {
      what: "a deny rule wins",
      args: [],
      layers: [
        project({ permissions: { allow: ["Bash(sheepdog:*)"], deny: ["Bash(sheepdog save)"] } }),
      ],
      ok: false,
      why: /deny rule Bash\(sheepdog save\)/,
    },
    {
      what: "an ask rule wins over allow",
      args: [],
      layers: [
        project(allow("Bash(sheepdog:*)")),
        seat({ permissions: { ask: ["Bash(sheepdog hand-over:*)"] } }),
      ],
      ok: false,
      why: /ask rule/,
    },
    {
      what: "a rule for one command only",
      args: [],
      layers: [project(allow("Bash(sheepdog claim acquire)"))],
      ok: false,
      why: /sheepdog save/,
    },
    {
      what: "--allowedTools on the command line",
      args: ["--allowedTools", "Bash(sheepdog:*) Read"],
      layers: none,
      ok: true,
    },
    { what: "bypass, not root", args: ["--dangerously-skip-permissions"], layers: none, ok: true },
    {
      what: "bypass as root",
      args: ["--dangerously-skip-permissions"],
      layers: none,
      root: true,
      ok: false,
      why: /refuses to run as root/,
    },
  ];
  it.each(rows)("$what", ({ args, layers, root, ok, why }) => {
    const v = sheepdogPermission({ args, layers, root: root === true });
    expect(v.ok, JSON.stringify(v)).toBe(ok);
    if (!v.ok && why) expect(v.why + v.command).toMatch(why);
  });

  it("names where the allowing rule is", () => {
    const v = sheepdogPermission({
      args: [],
      layers: [project(allow("Bash(sheepdog:*)"))],
      root: false,
    });
    expect(v).toMatchObject({ ok: true, how: expect.stringContaining("/p/.claude/settings.json") });
  });
});

describe("permissionMode", () => {
  it("a flag wins over settings, the first layer with a defaultMode over the later ones", () => {
    const layers = [
      project({ permissions: { defaultMode: "plan" } }),
      seat({ permissions: { defaultMode: "dontAsk" } }),
    ];
    expect(permissionMode(["--permission-mode", "default"], layers).mode).toBe("default");
    expect(permissionMode([], layers).mode).toBe("plan");
    expect(permissionMode([], [seat({ permissions: { defaultMode: "bogus" } })]).mode).toBe("auto");
  });
});

describe("bashRuleMatches", () => {
  it.each([
    ["Bash(sheepdog:*)", "sheepdog save", true],
    ["Bash(sheepdog:*)", "sheepdog", true],
    ["Bash(sheepdog:*)", "sheepdogs save", false],
    ["Bash(sheepdog *)", "sheepdog save", true],
    ["Bash(sheepdog *)", "sheepdog", true],
    ["Bash(sheepdog*)", "sheepdogx", true],
    ["Bash(sheepdog save)", "sheepdog save", true],
    ["Bash(sheepdog save)", "sheepdog save --json", false],
    ["Bash", "rm -rf /", true],
    ["Read", "sheepdog save", false],
    ["Bash(git:*)", "sheepdog save", false],
  ])("%s vs %s", (rule, command, expected) => {
    expect(bashRuleMatches(rule, command)).toBe(expected);
  });
});
