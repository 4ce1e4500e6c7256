import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { appendEvent } from "../src/journal/journal.js";
import { CLI, sheepdog, sleeper, tempProgram } from "./helpers/cli.js";
import { ntfyServer } from "./helpers/ntfy-server.js";
import { hashTree, killStarted, managerProgram, ofType } from "./helpers/watchdog.js";

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

/** Two programs under one $SHEEPDOG_HOME: `catalog` with a live claimed manager, `search` idle. */
function twoPrograms() {
  const p = managerProgram([], {}, {}, "catalog");
  cleanups.push(() => killStarted(p.stateDir));
  const search = join(p.home, "search");
  mkdirSync(search);
  writeFileSync(
    join(search, "program.json"),
    JSON.stringify({
      name: "search",
      manager: { command: [process.execPath, "-e", "0"], env: { SHEEPDOG_CLI: CLI } },
    }),
  );
  const env = {
    SHEEPDOG_HOME: p.home,
    SHEEPDOG_STATE_DIR: p.env.SHEEPDOG_STATE_DIR,
    SHEEPDOG_PROGRAM: "",
  };
  const m = sleeper();
  cleanups.push(() => m.kill("SIGKILL"));
  expect(
    sheepdog(["claim", "acquire", "--pid", String(m.pid), "--program", "catalog"], { env }).code,
  ).toBe(0);
  expect(sheepdog(["save", "--pid", String(m.pid), "--program", "catalog"], { env }).code).toBe(0);
  return { p, env, pid: m.pid, searchState: join(search, ".sheepdog") };
}

describe("status", () => {
  it("--all: one aligned row per program, and changes nothing", () => {
    const { p, env, pid } = twoPrograms();
    expect(sheepdog(["pause", "--until", "3h", "--program", "search"], { env }).code).toBe(0);
    const before = hashTree(p.home);
    const r = sheepdog(["status", "--all"], { env });
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trimEnd().split("\n");
    expect(lines).toHaveLength(4);
    expect(lines[3]).toBe("the night as a picture: sheepdog report --all --since 12h");
    expect(lines[0]).toMatch(
      /^PROGRAM +MANAGER +HEARTBEAT +CONTEXT +CLAIM +PAUSE +STOOD DOWN +MERGE LOCK +PAGES +LAST TICK +NOW$/,
    );
    expect(lines[1]).toMatch(
      new RegExp(
        `^catalog +pid ${pid} \\(\\d+s\\) +\\d+s ago +- +alive +- +- +- +off +never +ok: pid ${pid} alive, last save \\d+s ago`,
      ),
    );
    expect(lines[2]).toMatch(
      /^search +- +- +- +none +until \d{4}-\d\d-\d\d \d\d:\d\d \S+ +- +- +off +never +wait_pause: paused until/,
    );
    // Columns line up: every row's CLAIM cell starts where the header's does.
    const col = (lines[0] as string).indexOf("CLAIM");
    expect((lines[1] as string).slice(col, col + 5)).toBe("alive");
    expect((lines[2] as string).slice(col, col + 4)).toBe("none");
    expect(hashTree(p.home)).toBe(before);
  });

  it("--json: {at, programs: [{program, root, decision, reason, facts, actions}]}, an array even for one", () => {
    const { p, env, pid } = twoPrograms();
    const one = JSON.parse(sheepdog(["status", "--json", "--program", "catalog"], { env }).stdout);
    expect(Object.keys(one)).toEqual(["at", "programs"]);
    expect(one.programs).toHaveLength(1);
    expect(one.programs[0]).toMatchObject({
      program: "catalog",
      root: p.root,
      decision: "ok",
      actions: [],
      facts: {
        claim: { state: "alive", pid },
        heartbeat: { pid },
        finished: null,
        stood_down: null,
        paused: null,
        history: { starts_total: 0 },
      },
    });
    const all = JSON.parse(sheepdog(["status", "--json", "--all"], { env }).stdout);
    expect(all.programs.map((x: { program: string }) => x.program)).toEqual(["catalog", "search"]);
    expect(all.programs[1]).toMatchObject({
      decision: "start",
      facts: { claim: { state: "none" } },
    });
  });

  it("shows the last tick's decision and when", () => {
    const { env, searchState } = twoPrograms();
    // `search`'s manager exits at once without claiming: the first start, then (its process
    // dead, rule 12) not waited for: status says the next tick starts another.
    const t = sheepdog(["tick", "--program", "search"], { env });
    expect(t.code, t.stderr).toBe(0);
    expect(t.stdout).toBe(
      `search  start  the program's first start; started pid ${ofType(searchState, "manager_started")[0]?.pid} (planned)\n`,
    );
    const r = sheepdog(["status", "--program", "search"], { env });
    expect(r.stdout.split("\n")[1]).toMatch(
      / start \d+s ago +start: the manager started \d+s ago \(pid \d+\) exited before it claimed/,
    );
  });

  it("tick --all: one line per program, aligned; --json lists both", () => {
    const { env } = twoPrograms();
    const r = sheepdog(["tick", "--all", "--dry-run"], { env });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(
      /^catalog +ok +pid \d+ alive, last save \d+s ago \(stale after 1h\)\nsearch +start +the program's first start; would start a manager \(planned\)\n$/,
    );
    const j = JSON.parse(sheepdog(["tick", "--all", "--dry-run", "--json"], { env }).stdout);
    expect(j.programs.map((x: { decision: string }) => x.decision)).toEqual(["ok", "start"]);
  });

  it("shows page state: the last page, an undelivered page, the next reminder", async () => {
    const server = await ntfyServer();
    cleanups.push(() => void server.stop());
    const p = tempProgram("catalog", {
      manager: { command: [process.execPath, "-e", "0"] },
      page: { ntfy: { server: server.url, topic: "sheepdog-test" }, remind_every: "2h" },
    });
    sheepdog(["pause", "--until", "1h"], { env: p.env }); // creates the state dir
    appendEvent(p.stateDir, { type: "stood_down", reason: "3 unplanned starts in 1h" });
    appendEvent(p.stateDir, {
      type: "paged",
      kind: "stood_down",
      priority: 5,
      title: "catalog stood down",
    });
    appendEvent(p.stateDir, {
      type: "page_failed",
      kind: "tick_failed",
      error: "connect ECONNREFUSED",
      page: { title: "catalog: a tick failed", message: "m", priority: 4, tags: [] },
    });
    const j = JSON.parse(sheepdog(["status", "--json"], { env: p.env }).stdout);
    expect(j.programs[0].facts.pages).toMatchObject({
      configured: true,
      last_page: { kind: "stood_down", priority: 5 },
      undelivered: [{ kind: "tick_failed", error: "connect ECONNREFUSED" }],
      reminders_left: 2,
    });
    expect(Date.parse(j.programs[0].facts.pages.next_reminder) - Date.now()).toBeGreaterThan(
      3600_000,
    );
    const r = sheepdog(["status"], { env: p.env });
    expect(r.stdout).toMatch(
      /last stood_down \d+s ago; 1 undelivered \(tick_failed\); reminder in (?:1h59m|2h)/,
    );
    // Nothing was sent by looking.
    expect(server.received).toHaveLength(0);
  });

  it("a program with a bad config: exit 2 naming the file and field", () => {
    const { p, env } = twoPrograms();
    writeFileSync(
      join(p.root, "program.json"),
      JSON.stringify({ name: "catalog", watchdog: { stale_after: "soon" } }),
    );
    const r = sheepdog(["status", "--program", "catalog"], { env });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/program\.json: .*watchdog\.stale_after/);
    const t = sheepdog(["tick", "--program", "catalog"], { env });
    expect(t.code).toBe(2);
    // --all reports the bad program and still ticks the others.
    const all = JSON.parse(sheepdog(["tick", "--all", "--json", "--dry-run"], { env }).stdout);
    expect(all.programs.map((x: { decision: string }) => x.decision)).toEqual(["error", "start"]);
    expect(sheepdog(["tick", "--all", "--dry-run"], { env }).code).toBe(2);
  });
});
