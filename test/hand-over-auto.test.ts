// `hand_over_tokens: "auto"` (DESIGN §4), through the built CLI: 75 % of the manager session's
// context window as its statusline recorded it, else 150000; a number in program.json wins.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { sheepdog, tempDir, tempProgram } from "./helpers/cli.js";
import { FIXTURES } from "./helpers/fixtures.js";

const BASIC = join(FIXTURES, "transcript-basic.jsonl"); // context 143210
const input = (size: number | null) => {
  const value = JSON.parse(readFileSync(join(FIXTURES, "statusline-input.json"), "utf8"));
  if (size === null) delete value.context_window;
  else value.context_window.context_window_size = size;
  return JSON.stringify(value);
};

/** `save` for this test process as the manager (the statusline's agent is its parent: us). */
function save(env: Record<string, string>) {
  const r = sheepdog(["save", "--pid", String(process.pid), "--transcript", BASIC], { env });
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout) as { hand_over: boolean; hand_over_at: number };
}

function statusline(env: Record<string, string>, size: number | null) {
  const seat = join(env.SHEEPDOG_HOME as string, "seat");
  const r = sheepdog(["statusline"], {
    env: { ...env, CLAUDE_CONFIG_DIR: seat },
    input: input(size),
  });
  expect(r.code).toBe(0);
}

describe('hand_over_tokens "auto"', () => {
  it("with no statusline record: 75 % of 200000", () => {
    const p = tempProgram("demo");
    expect(save(p.env)).toMatchObject({ hand_over_at: 150000, hand_over: false });
  });

  it("75 % of the window the statusline recorded for the manager's session", () => {
    const p = tempProgram("demo", { hand_over_tokens: "auto" });
    statusline(p.env, 1_000_000);
    expect(save(p.env)).toMatchObject({ hand_over_at: 750000, hand_over: false });
    statusline(p.env, 190_000);
    expect(save(p.env)).toMatchObject({ hand_over_at: 142500, hand_over: true });
    // An update without a context window keeps the last one known.
    statusline(p.env, null);
    expect(save(p.env)).toMatchObject({ hand_over_at: 142500 });
  });

  it("a number in program.json wins", () => {
    const p = tempProgram("demo", { hand_over_tokens: 120000 });
    statusline(p.env, 1_000_000);
    expect(save(p.env)).toMatchObject({ hand_over_at: 120000, hand_over: true });
  });

  it('init writes "auto" and a prompt placeholder with the settings.json snippet', () => {
    const dir = join(tempDir(), "catalog");
    const r = sheepdog(["init", dir]);
    expect(r.code).toBe(0);
    const config = JSON.parse(readFileSync(join(dir, "program.json"), "utf8"));
    expect(config.hand_over_tokens).toBe("auto");
    const prompt = readFileSync(join(dir, "MANAGER-PROMPT.md"), "utf8");
    const snippet = JSON.parse(/```json\n([\s\S]*?)\n```/.exec(prompt)?.[1] ?? "null");
    expect(snippet.statusLine.command).toBe("sheepdog statusline");
    expect(snippet.hooks.StopFailure[0].hooks[0].command).toBe("sheepdog hook stop-failure");
    expect(sheepdog(["check", "--program", dir]).code).toBe(0);
  });
});
