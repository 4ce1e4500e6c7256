// Nothing an agent wrote reaches a terminal raw (DESIGN §18, issue 31): a `save --progress` and a
// `hand-over --note` holding OSC 52 (sets the clipboard), OSC 8 (a disguised link), ESC[2J and
// \r\n are shown as \xNN by status, journal, tick (--dry-run too), claim, doctor and the
// report's text; JSON answers keep the exact value with nothing raw; the statusline's one line
// strips them.
import type { ChildProcess } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunResult, sheepdog, sleeper, tempDir, tempProgram } from "./helpers/cli.js";

const OSC52 = "\u001b]52;c;cm0gLXJmIH4K\u0007";
const OSC8 = "\u001b]8;;https://evil.example/\u001b\\docs\u001b]8;;\u001b\\";
const FORGED = "\r\n13:00:00 CET  cleared          by=you";
const PROGRESS = `items:3${OSC52}\u001b[2J\u009b2J\u2028x`;
const NOTE = `half done ${OSC8}${FORGED}\u0085`;
// Everything a terminal acts on, but the newlines and tabs a command prints itself.
// biome-ignore lint/suspicious/noControlCharactersInRegex: what must not reach a terminal
const RAW = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029]/;

let manager: ChildProcess;
let p: ReturnType<typeof tempProgram>;

function clean(r: RunResult, what: string): void {
  expect(r.stdout, `${what}: stdout`).not.toMatch(RAW);
  expect(r.stderr, `${what}: stderr`).not.toMatch(RAW);
}

beforeAll(() => {
  manager = sleeper();
  p = tempProgram("hostile", {
    manager: { launcher: "command", command: [process.execPath, "-e", "0"] },
  });
  const pid = String(manager.pid);
  expect(sheepdog(["claim", "acquire", "--pid", pid], { env: p.env }).code).toBe(0);
  const save = sheepdog(["save", "--pid", pid, "--progress", PROGRESS], { env: p.env });
  expect(save.code, save.stderr).toBe(0);
  clean(save, "save");
  const hand = sheepdog(["hand-over", "--pid", pid, "--note", NOTE, "--progress", PROGRESS], {
    env: p.env,
  });
  expect(hand.code, hand.stderr).toBe(0);
  clean(hand, "hand-over");
});

afterAll(() => {
  manager?.kill("SIGKILL");
});

describe("a note and a progress text full of escapes", () => {
  it("journal shows them as \\xNN, one event a line; journal --json keeps them exactly", () => {
    const r = sheepdog(["journal"], { env: p.env });
    expect(r.code, r.stderr).toBe(0);
    clean(r, "journal");
    // a quoted value is JSON-escaped (\u001b), a bare one \xNN: either way shown, not acted on
    expect(r.stdout).toMatch(/(\\x1b|\\u001b)\]8;;https:\/\/evil\.example\//);
    expect(r.stdout).toMatch(/(\\x1b|\\u001b)\]52;c;cm0gLXJmIH4K(\\x07|\\u0007)/);
    expect(r.stdout).toContain("\\x9b2J");
    expect(r.stdout).toContain("\\u2028");
    // no forged line: every line is an event of this program
    const types = r.stdout
      .trim()
      .split("\n")
      .map((l) => l.split(/\s{2,}/)[1]?.split(" ")[0]);
    expect(types).not.toContain("cleared");
    const json = sheepdog(["journal", "--json"], { env: p.env });
    clean(json, "journal --json");
    const events = (JSON.parse(json.stdout) as { events: Record<string, unknown>[] }).events;
    expect(events.find((e) => e.type === "hand_over")?.note).toBe(NOTE);
    expect(events.find((e) => e.type === "hand_over")?.progress).toBe(PROGRESS);
  });

  it("tick --dry-run and tick show the reason (the note) on one line, escaped", () => {
    const dry = sheepdog(["tick", "--dry-run"], { env: p.env });
    expect(dry.code, dry.stderr).toBe(0);
    clean(dry, "tick --dry-run");
    expect(dry.stdout.trim().split("\n")).toHaveLength(1);
    expect(dry.stdout).toContain("\\x1b]8;;https://evil.example/");
    expect(dry.stdout).toContain("\\x0d\\x0a13:00:00");
    const json = sheepdog(["tick", "--dry-run", "--json"], { env: p.env });
    clean(json, "tick --dry-run --json");
    const doc = JSON.parse(json.stdout) as { programs: { reason: string }[] };
    expect(doc.programs[0]?.reason).toContain(NOTE);
  });

  it("status shows it on one line", () => {
    const r = sheepdog(["status", "--wide"], { env: p.env });
    clean(r, "status");
    expect(r.stdout).toContain("\\x1b]8;;https://evil.example/");
    expect(r.stdout.trim().split("\n")).toHaveLength(3); // header, the program, the report hint
    clean(sheepdog(["status", "--json"], { env: p.env }), "status --json");
  });

  it("claim show: a hostname an agent wrote into holder.json is one line, escaped", () => {
    const pid = String(manager.pid);
    expect(sheepdog(["claim", "acquire", "--pid", pid], { env: p.env }).code).toBe(0);
    const file = join(p.stateDir, "claim", "holder.json");
    const holder = JSON.parse(readFileSync(file, "utf8"));
    writeFileSync(file, JSON.stringify({ ...holder, hostname: `box${OSC52}${FORGED}` }));
    const r = sheepdog(["claim", "show"], { env: p.env });
    expect(r.code, r.stderr).toBe(0);
    clean(r, "claim show");
    expect(r.stdout.trim().split("\n")).toHaveLength(1);
    expect(r.stdout).toContain("box\\x1b]52;c;");
    const taken = sheepdog(["claim", "acquire", "--pid", String(process.pid)], { env: p.env });
    expect(taken.code).toBe(3);
    clean(taken, "claim acquire (refused)");
    expect(sheepdog(["claim", "release", "--pid", pid], { env: p.env }).code).toBe(0);
  });

  it("doctor: a folder named with escapes under $SHEEPDOG_HOME is reported on one line", () => {
    const home = tempDir();
    const evil = join(home, `evil${OSC52}\u001b[2J`);
    mkdirSync(evil);
    writeFileSync(join(evil, "program.json"), "{not json");
    const r = sheepdog(["doctor", "--all"], { env: { ...p.env, SHEEPDOG_HOME: home } });
    clean(r, "doctor");
    expect(r.stdout).toContain("evil\\x1b]52;c;");
  });

  it("the report's text shows them as \\xNN too", () => {
    const out = join(tempDir(), "night.html");
    const r = sheepdog(["report", "--out", out, "--since", "1h"], { env: p.env });
    expect(r.code, r.stderr).toBe(0);
    const html = readFileSync(out, "utf8");
    expect(html).not.toMatch(RAW);
    expect(html).toContain("\\x1b]8;;https://evil.example/");
  });
});

describe("statusline", () => {
  it("strips C0, DEL, C1 and U+2028/9 from its one line", () => {
    const input = JSON.stringify({
      model: { display_name: `Opus${OSC52}\u009b2J\u2028\u0085 4.6` },
      session_id: "s1",
    });
    const r = sheepdog(["statusline"], { env: p.env, input });
    expect(r.code).toBe(0);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: what must not be there
    expect(r.stdout.replace(/\n$/, "")).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/);
    expect(r.stdout).toContain("Opus");
    expect(r.stdout).toContain("4.6");
  });
});
