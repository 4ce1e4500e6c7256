// CLI manners (DESIGN §16): the version, help that explains every option, a closed pipe that
// ends quietly, status lines that fit the terminal, a missing program that says what exists,
// and human times in the local zone while JSON stays UTC.
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { COMMAND_SPECS, type CommandSpec } from "../src/cli-spec.js";
import { CLI, sheepdog, tempDir, tempProgram } from "./helpers/cli.js";

const VERSION = JSON.parse(readFileSync("package.json", "utf8")).version as string;

/** A program whose journal holds `n` events, written as the journal does. */
function programWithJournal(n: number, extra: Record<string, unknown>[] = []) {
  const p = tempProgram("manners");
  mkdirSync(p.stateDir, { recursive: true, mode: 0o700 });
  const t0 = Date.parse("2026-07-01T12:00:00Z");
  const lines = Array.from({ length: n }, (_, i) => ({
    at: new Date(t0 + i * 1000).toISOString(),
    type: "saved",
    pid: 4242,
    context_tokens: i,
  }));
  writeFileSync(
    join(p.stateDir, "journal.jsonl"),
    [...lines, ...extra].map((l) => `${JSON.stringify(l)}\n`).join(""),
    { mode: 0o600 },
  );
  return p;
}

describe("the version", () => {
  it.each([["--version"], ["-v"], ["version"]])("%s prints it and exits 0", (flag) => {
    const r = sheepdog([flag]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(`sheepdog ${VERSION}\n`);
  });
});

describe("COMMAND --help", () => {
  const specs = Object.entries(COMMAND_SPECS as Record<string, CommandSpec>);
  it.each(specs)("%s: its synopsis, then every option on a line of its own", (name, spec) => {
    const r = sheepdog([name, "--help"]);
    expect(r.code, r.stderr).toBe(0);
    for (const u of spec.usage) expect(r.stdout).toContain(`sheepdog ${u}`);
    for (const [flag, o] of Object.entries(spec.options)) {
      const head = `--${flag}${o.type === "string" ? ` ${o.arg}` : ""}`;
      const line = r.stdout.split("\n").find((l) => l.trimStart().startsWith(`${head} `));
      expect(line, `${name} --help has no line for ${head}:\n${r.stdout}`).toBeDefined();
      expect(line?.slice(line.indexOf(head) + head.length).trim().length).toBeGreaterThan(10);
    }
  });
});

describe("a closed pipe", () => {
  it("`sheepdog journal | head -1` prints one line and no EPIPE", () => {
    const p = programWithJournal(3000); // far more than a pipe buffer
    const r = spawnSync(
      "bash",
      ["-c", `set -o pipefail; "${process.execPath}" "${CLI}" journal | head -1`],
      { env: { ...process.env, ...p.env }, encoding: "utf8" },
    );
    expect(r.stdout.split("\n").filter(Boolean)).toHaveLength(1);
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
  });
});

describe("status fits the terminal", () => {
  const longReason = `crash loop: 3 unplanned starts within 1h (the last 1s ago); ${"another would fail the same way; ".repeat(4)}`;

  function stoodDown() {
    return programWithJournal(1, [
      { at: new Date().toISOString(), type: "stood_down", reason: longReason },
    ]);
  }

  it("with COLUMNS=100 no line is wider; --wide shows the whole reason", () => {
    const p = stoodDown();
    const narrow = sheepdog(["status"], { env: { ...p.env, COLUMNS: "100" } });
    expect(narrow.code, narrow.stderr).toBe(0);
    for (const line of narrow.stdout.split("\n"))
      expect(line.length, line).toBeLessThanOrEqual(100);
    expect(narrow.stdout).toContain("…");
    const wide = sheepdog(["status", "--wide"], { env: { ...p.env, COLUMNS: "100" } });
    expect(wide.stdout).toContain(longReason.trim());
  });

  it("the stand-down's reason appears once, not in two columns", () => {
    const p = stoodDown();
    const r = sheepdog(["status", "--wide"], { env: p.env });
    const row = r.stdout.split("\n")[1] ?? "";
    expect(row.split("crash loop").length - 1, row).toBe(1);
    expect(row).toMatch(/since \d+s ago/);
  });
});

describe("no program found", () => {
  function home() {
    const h = tempDir();
    for (const name of ["alpha", "beta"]) {
      mkdirSync(join(h, name));
      writeFileSync(join(h, name, "program.json"), JSON.stringify({ name }));
    }
    return h;
  }
  const env = (h: string) => ({ SHEEPDOG_HOME: h, SHEEPDOG_PROGRAM: "" });

  it("a command that takes --all says so, and lists the programs there", () => {
    const h = home();
    const r = sheepdog(["status"], { env: env(h), cwd: tempDir() });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--all");
    expect(r.stderr).toContain(`programs under ${h}: alpha, beta`);
  });

  it("one that does not take --all lists them without offering it", () => {
    const h = home();
    const r = sheepdog(["claim", "show"], { env: env(h), cwd: tempDir() });
    expect(r.code).toBe(2);
    expect(r.stderr).not.toContain("--all");
    expect(r.stderr).toContain("alpha, beta");
  });

  it("an empty $SHEEPDOG_HOME says how to make a program", () => {
    const h = tempDir();
    const r = sheepdog(["journal"], { env: env(h), cwd: tempDir() });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`no programs under ${h}`);
    expect(r.stderr).toContain("sheepdog init DIR");
  });
});

describe("times for people are local, JSON stays UTC", () => {
  it("journal: the zone is named for people; --json keeps the UTC string", () => {
    const p = programWithJournal(1);
    const human = sheepdog(["journal"], { env: { ...p.env, TZ: "America/New_York" } });
    expect(human.stdout).toMatch(/^2026-07-01 08:00:00 EDT {2}saved/);
    const json = sheepdog(["journal", "--json"], { env: { ...p.env, TZ: "America/New_York" } });
    expect(JSON.parse(json.stdout).events[0].at).toBe("2026-07-01T12:00:00.000Z");
  });

  it("a reason's UTC time is shown local in status, and stays UTC in status --json", () => {
    const p = programWithJournal(0, [
      {
        at: new Date().toISOString(),
        type: "paused",
        until: "2099-07-01T12:00:00.000Z",
        reason: "paused by a person",
        window: null,
      },
    ]);
    const tz = { TZ: "Asia/Kolkata" };
    const human = sheepdog(["status", "--wide"], { env: { ...p.env, ...tz } });
    expect(human.stdout).toContain("until 2099-07-01 17:30");
    expect(human.stdout).toMatch(/2099-07-01 17:30:00 GMT\+5:30/);
    expect(human.stdout).not.toContain("2099-07-01T12:00");
    const json = sheepdog(["status", "--json"], { env: { ...p.env, ...tz } });
    expect(JSON.parse(json.stdout).programs[0].reason).toContain("2099-07-01T12:00:00.000Z");
  });
});
