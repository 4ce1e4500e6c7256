// The morning's reading tools through the built CLI (issue 33): `journal --all` from outside any
// program folder (the README's morning line), journal lines within the terminal's width, and
// `report`, `doctor` and `tick --dry-run` on a program whose program.json broke after it ran:
// they work from the journal and the last valid config, and say the current one is invalid.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { sheepdog, tempDir } from "./helpers/cli.js";

/** Two programs under one $SHEEPDOG_HOME, each with a few events, and a folder outside them. */
function home() {
  const dir = tempDir("sheepdog-morning-");
  const env = { SHEEPDOG_HOME: dir, SHEEPDOG_STATE_DIR: join(dir, ".state"), SHEEPDOG_PROGRAM: "" };
  const make = (name: string) => {
    const root = join(dir, name);
    mkdirSync(root);
    writeFileSync(
      join(root, "program.json"),
      JSON.stringify({ name, manager: { launcher: "command", command: ["true"] } }),
    );
    return root;
  };
  const outside = tempDir("sheepdog-elsewhere-");
  return { dir, env, make, outside };
}

describe("journal --all", () => {
  it("from outside a program folder: every program's events in one list in time order, each line naming its program", () => {
    const h = home();
    const a = h.make("alpha");
    const b = h.make("beta");
    const run = (args: string[]) => sheepdog(args, { env: h.env, cwd: h.outside });
    expect(run(["pause", "--program", a, "--until", "1h"]).code).toBe(0);
    expect(run(["pause", "--program", b, "--until", "2h"]).code).toBe(0);
    expect(run(["unpause", "--program", a]).code).toBe(0);

    // Without a program or --all: exit 2, naming --all and the programs there are.
    const bare = run(["journal", "--since", "12h"]);
    expect(bare.code).toBe(2);
    expect(bare.stderr).toMatch(/--all/);
    expect(bare.stderr).toContain("alpha, beta");

    // The README's morning line.
    const all = run(["journal", "--all", "--since", "12h"]);
    expect(all.code, all.stderr).toBe(0);
    const lines = all.stdout.trim().split("\n");
    expect(lines.map((l) => l.split(/\s{2,}/).slice(1, 3))).toEqual([
      ["alpha", "paused"],
      ["beta", "paused"],
      ["alpha", "unpaused"],
    ]);
    const doc = JSON.parse(run(["journal", "--all", "--json"]).stdout);
    expect(
      doc.programs.map((p: { program: string; events: unknown[] }) => [p.program, p.events.length]),
    ).toEqual([
      ["alpha", 2],
      ["beta", 1],
    ]);
  });

  it("lines fit the terminal's width; --wide and --json keep them whole", () => {
    const h = home();
    const a = h.make("alpha");
    const long = `a reason that a person typed at length: ${"x".repeat(400)}`;
    expect(sheepdog(["pause", "--program", a, "--until", "1h"], { env: h.env }).code).toBe(0);
    // An event with a long field, as a stand-down's reason or a kept screen is.
    writeFileSync(
      join(a, ".sheepdog", "journal.jsonl"),
      `${JSON.stringify({ at: new Date().toISOString(), type: "stood_down", reason: long })}\n`,
      { flag: "a" },
    );
    const narrow = sheepdog(["journal", "--program", a], { env: { ...h.env, COLUMNS: "100" } });
    for (const l of narrow.stdout.trim().split("\n")) expect(l.length).toBeLessThanOrEqual(100);
    expect(narrow.stdout).toContain("…");
    const wide = sheepdog(["journal", "--program", a, "--wide"], {
      env: { ...h.env, COLUMNS: "100" },
    });
    expect(wide.stdout).toContain("x".repeat(400));
  });
});

describe("a program.json broken after it ran", () => {
  it("report, doctor and tick --dry-run read the journal and the last valid config, and say the current one is invalid", () => {
    const h = home();
    const a = h.make("alpha");
    const env = { ...h.env, HOME: h.dir };
    // A valid load keeps the copy (a write command: pause), then a typo is saved.
    expect(sheepdog(["pause", "--program", a, "--until", "1h"], { env }).code).toBe(0);
    writeFileSync(
      join(a, "program.json"),
      '{"name": "alpha", "watchdog": {"stale_afer": "45m"}}\n',
    );

    const report = sheepdog(["report", "--program", a, "--since", "12h"], { env });
    expect(report.code, report.stderr).toBe(0);
    expect(report.stderr).toMatch(/program\.json is invalid .*stale_afer/);
    const file =
      report.stdout
        .trim()
        .split("\n")
        .at(-1)
        ?.replace(/^.*?(\/\S+\.html).*$/, "$1") ?? "";
    const html = readFileSync(file, "utf8");
    expect(html).toContain("is invalid now");
    expect(html).toContain("paused");

    const doctor = sheepdog(["doctor", "--program", a, "--json"], { env });
    expect(doctor.code).toBe(1);
    const checks = JSON.parse(doctor.stdout).checks as {
      check: string;
      status: string;
      detail: string;
    }[];
    expect(checks.find((c) => c.check === "config")).toMatchObject({ status: "fail" });
    expect(checks.find((c) => c.check === "config")?.detail).toMatch(
      /stale_afer.*the checks below are of that copy/,
    );
    // All of them, not the config and the state alone.
    expect(checks.map((c) => c.check)).toEqual(
      expect.arrayContaining(["timer", "last_tick", "statusline", "pages"]),
    );

    const dry = sheepdog(["tick", "--dry-run", "--program", a], { env });
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stderr).toMatch(
      /program\.json is invalid .*stale_afer.*judged with the last valid config/,
    );
    expect(dry.stdout).toMatch(/wait_pause/);

    const journal = sheepdog(["journal", "--program", a], { env });
    expect(journal.code).toBe(0);
    expect(journal.stderr).toMatch(/is invalid/);
    expect(journal.stdout).toMatch(/paused/);
  });
});
