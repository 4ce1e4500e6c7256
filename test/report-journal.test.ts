// `sheepdog report` through the CLI on journals that are big, rotated, torn or empty, and its
// files, flags and --all.
import {
  appendFileSync,
  chmodSync,
  existsSync,
  mkdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { appendEvent } from "../src/journal/journal.js";
import { MAX_ROWS } from "../src/report/svg.js";
import { sheepdog, tempDir, tempProgram } from "./helpers/cli.js";

const env0 = { ...process.env };
afterEach(() => {
  process.env = { ...env0 };
});

const localDate = (t = Date.now()) => {
  const d = new Date(t);
  const p = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}`;
};

interface Json {
  file: string | null;
  programs: {
    program: string;
    empty: boolean;
    managers: { pid: number; ending: string; hand_over_tokens: number | null }[];
    tokens: unknown[];
    spans: { kind: string }[];
    numbers: { managers_started: number; hand_overs: number };
  }[];
}
const report = (env: NodeJS.ProcessEnv, args: string[] = []) => {
  const r = sheepdog(["report", "--json", ...args], { env });
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as Json;
};

/**
 * A long night written with the real appendEvent: managers that start, claim, save with a
 * bulky progress note and hand over, every `stepMs`, ending `now`.
 */
function writeNight(stateDir: string, managers: number, savesEach: number, stepMs: number) {
  mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  const now = Date.now();
  let t = now - managers * (savesEach + 3) * stepMs;
  const note = "x".repeat(300);
  const next = () => {
    t += stepMs;
    return t;
  };
  for (let i = 0; i < managers; i++) {
    const pid = 100_000 + i;
    appendEvent(
      stateDir,
      { type: "manager_started", reason: "r", planned: true, pid, launcher: "command" },
      next(),
    );
    appendEvent(stateDir, { type: "claimed", pid, start_time: `st${pid}` }, next());
    for (let k = 1; k <= savesEach; k++)
      appendEvent(
        stateDir,
        { type: "saved", pid, context_tokens: k * 10_000, progress: note, pushed: null },
        next(),
      );
    appendEvent(
      stateDir,
      { type: "hand_over", pid, context_tokens: savesEach * 10_000, note: "n" },
      next(),
    );
    appendEvent(stateDir, { type: "released", pid, start_time: `st${pid}` }, t);
  }
}

describe("report on big, rotated, torn and empty journals", () => {
  it("a 10 MB journal that rotated: every manager once, with its ending, across the rotation", () => {
    const p = tempProgram("big");
    // 1400 managers × 30 events of ~400 bytes: a little over 10 MB, so the journal rotates.
    writeNight(p.stateDir, 1400, 28, 1000);
    expect(statSync(join(p.stateDir, "journal.1.jsonl")).size).toBeGreaterThan(9 * 1024 * 1024);
    // A manager whose saves straddle the rotation: its first events in journal.1, its last here.
    const rotated = readFileSync(join(p.stateDir, "journal.1.jsonl"), "utf8").trimEnd().split("\n");
    const current = readFileSync(join(p.stateDir, "journal.jsonl"), "utf8").split("\n");
    const straddling = JSON.parse(rotated.at(-1) as string).pid as number;
    expect(JSON.parse(current[0] as string).pid).toBe(straddling);
    const out = join(tempDir(), "big.html");
    const j = report(p.env, ["--since", "24h", "--out", out]);
    const t = j.programs[0];
    expect(t?.managers).toHaveLength(1400);
    expect(new Set(t?.managers.map((m) => m.pid)).size).toBe(1400);
    expect(t?.managers.filter((m) => m.pid === straddling)).toEqual([
      expect.objectContaining({ ending: "hand_over", hand_over_tokens: 280_000 }),
    ]);
    expect(
      t?.managers.every((m) => m.ending === "hand_over" && m.hand_over_tokens === 280_000),
    ).toBe(true);
    expect(t?.numbers).toMatchObject({ managers_started: 1400, hand_overs: 1400 });
    expect(t?.tokens).toHaveLength(1400 * 29);
    // Too many for a row each: one shared row, every bar still drawn (with its title).
    const html = readFileSync(out, "utf8");
    expect(1400).toBeGreaterThan(MAX_ROWS);
    expect(html.match(/<g class="bar /g)).toHaveLength(1400);
    expect(html).not.toContain('class="gutter row-label');
  }, 120_000);

  it("a torn last line is skipped: the report is what it was before the line was torn", () => {
    const p = tempProgram("torn");
    writeNight(p.stateDir, 3, 2, 1000);
    const before = report(p.env);
    appendFileSync(
      join(p.stateDir, "journal.jsonl"),
      '{"at":"2026-11-30T03:12:00.000Z","type":"hand_ov',
    );
    const after = report(p.env);
    const facts = (j: Json) =>
      j.programs.map((t) => ({ m: t.managers, s: t.spans, t: t.tokens, n: t.numbers }));
    expect(facts(after)).toEqual(facts(before));
    expect(after.programs[0]?.managers).toHaveLength(3);
    const html = sheepdog(["report", "--out", join(tempDir(), "t.html")], { env: p.env });
    expect(html.code, html.stderr).toBe(0);
  });

  it("an empty journal (or none at all): a clear 'nothing happened' page, exit 0", () => {
    const p = tempProgram("quiet");
    const r = sheepdog(["report"], { env: p.env });
    expect(r.code, r.stderr).toBe(0);
    const file = r.stdout.trim();
    expect(file).toBe(join(p.stateDir, `report-quiet-${localDate()}.html`));
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const html = readFileSync(file, "utf8");
    expect(html).toContain("Nothing happened in this window.");
    expect(html).toContain("The journal is empty.");
    expect(html).not.toContain('<g class="bar');
    const j = report(p.env);
    expect(j.file).toBeNull();
    expect(j.programs[0]).toMatchObject({ empty: true, managers: [], spans: [] });
    // Events only before the window: still nothing in it.
    writeNight(p.stateDir, 1, 1, 1000);
    const later = report(p.env, ["--since", new Date(Date.now() + 1000).toISOString()]);
    expect(later.programs[0]?.empty).toBe(true);
  });
});

describe("report: files, flags, --all", () => {
  it("--all: one page for every program under $SHEEPDOG_HOME, in the host state folder", () => {
    const a = tempProgram("alpha");
    writeNight(a.stateDir, 2, 2, 1000);
    const bDir = join(a.home, "beta");
    mkdirSync(bDir);
    writeFileSync(join(bDir, "program.json"), JSON.stringify({ name: "beta" }));
    const env = { ...a.env, SHEEPDOG_PROGRAM: "" };
    const r = sheepdog(["report", "--all"], { env });
    expect(r.code, r.stderr).toBe(0);
    const file = r.stdout.trim();
    expect(file).toBe(join(a.env.SHEEPDOG_STATE_DIR, `report-all-${localDate()}.html`));
    const html = readFileSync(file, "utf8");
    expect(html).toContain('<section class="program" id="program-alpha">');
    expect(html).toContain('<section class="program empty" id="program-beta">');
    expect(html.match(/<g class="bar /g)).toHaveLength(2);
    const j = report(env, ["--all"]);
    expect(j.programs.map((t) => [t.program, t.managers.length])).toEqual([
      ["alpha", 2],
      ["beta", 0],
    ]);
  });

  it("--open hands the file to xdg-open (no shell); without one it says so and still exits 0", () => {
    const p = tempProgram("opened");
    const bin = tempDir();
    const seen = join(bin, "seen");
    writeFileSync(join(bin, "xdg-open"), `#!/bin/sh\nprintf '%s\\n' "$@" > '${seen}'\n`);
    chmodSync(join(bin, "xdg-open"), 0o755);
    const out = join(tempDir(), "a file with spaces; $(touch x).html");
    const r = sheepdog(["report", "--open", "--out", out], { env: { ...p.env, PATH: bin } });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(`${out}\n`);
    const deadline = Date.now() + 10_000;
    while (!existsSync(seen) && Date.now() < deadline)
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
    expect(readFileSync(seen, "utf8")).toBe(`${out}\n`);

    const none = sheepdog(["report", "--open"], { env: { ...p.env, PATH: tempDir() } });
    expect(none.code).toBe(0);
    expect(none.stderr).toMatch(
      /not opened \(xdg-open is not installed here\); open \S+report-opened-\S+\.html in a browser/,
    );
  });

  it("bad input: --since that is neither a duration nor a time, --out into a missing folder (exit 2)", () => {
    const p = tempProgram("bad");
    const r = sheepdog(["report", "--since", "yesterday"], { env: p.env });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      `--since: expected a duration such as 2h or an ISO-8601 time such as 2026-11-30T18:00:00Z, got "yesterday"`,
    );
    const o = sheepdog(["report", "--out", "/nonexistent/dir/r.html"], { env: p.env });
    expect(o.code).toBe(2);
    expect(o.stderr).toMatch(/--out \/nonexistent\/dir\/r\.html: cannot write the report/);
    expect(sheepdog(["report", "--all", "--program", "bad"], { env: p.env }).code).toBe(2);
  });
});
