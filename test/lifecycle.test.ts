import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { sheepdog } from "./helpers/cli.js";
import { cleanedUp, holder, killStarted, ofType, tick } from "./helpers/watchdog.js";

const { program, live } = cleanedUp();

describe("finish and reopen", () => {
  it("a finished program starts nothing until `reopen`; finish releases the holder's claim", () => {
    const p = program();
    const manager = live();
    expect(sheepdog(["claim", "acquire", "--pid", String(manager.pid)], { env: p.env }).code).toBe(
      0,
    );
    const done = sheepdog(["finish", "--note", "backlog empty", "--pid", String(manager.pid)], {
      env: p.env,
    });
    expect(done.code, done.stderr).toBe(0);
    expect(done.stdout).toBe(
      `demo: finished; claim released by pid ${manager.pid}; the watchdog starts nothing more until sheepdog reopen\n`,
    );
    expect(holder(p.stateDir)).toBeNull();
    expect(ofType(p.stateDir, "finished")).toEqual([
      expect.objectContaining({ note: "backlog empty", pid: manager.pid }),
    ]);
    const r = tick(p.env);
    expect(r.report.decision).toBe("finished");
    expect(r.report.reason).toMatch(/backlog empty; sheepdog reopen starts it again/);
    expect(tick(p.env).report.decision).toBe("finished");
    expect(ofType(p.stateDir, "manager_started")).toHaveLength(0);

    const reopened = sheepdog(["reopen"], { env: p.env });
    expect(reopened.code).toBe(0);
    expect(ofType(p.stateDir, "reopened")).toHaveLength(1);
    const after = tick(p.env);
    expect(after.report.decision).toBe("start");
    expect(ofType(p.stateDir, "manager_started")).toEqual([
      expect.objectContaining({ planned: true }),
    ]);
  });

  it("finish by a process that is not the live holder is refused (exit 3) unless --force, which is journaled", () => {
    const p = program();
    const manager = live();
    const other = live();
    sheepdog(["claim", "acquire", "--pid", String(manager.pid)], { env: p.env });
    const r = sheepdog(["finish", "--note", "done", "--pid", String(other.pid)], { env: p.env });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain(`demo is claimed by pid ${manager.pid}`);
    expect(r.stderr).toContain("sheepdog finish --force --note TEXT --program demo");
    // a person in a shell (no manager among its ancestors) is refused the same way
    expect(sheepdog(["finish", "--note", "done"], { env: p.env }).code).toBe(3);
    expect(ofType(p.stateDir, "finished")).toEqual([]);
    expect(tick(p.env).report.decision).toBe("ok");

    const forced = sheepdog(["finish", "--force", "--note", "done by hand", "--json"], {
      env: p.env,
    });
    expect(forced.code, forced.stderr).toBe(0);
    expect(JSON.parse(forced.stdout)).toMatchObject({
      finished: true,
      forced: true,
      released_pid: null,
    });
    expect(ofType(p.stateDir, "finished")).toEqual([
      expect.objectContaining({ note: "done by hand", forced: true, holder_pid: manager.pid }),
    ]);
    expect(holder(p.stateDir)?.pid).toBe(manager.pid);
    expect(tick(p.env).report.decision).toBe("finished");
  });

  it("with no live holder anyone may finish, as before", () => {
    const p = program();
    const r = sheepdog(["finish", "--note", "nothing left"], { env: p.env });
    expect(r.code, r.stderr).toBe(0);
    expect(tick(p.env).report.decision).toBe("finished");
  });

  it("bad input: exit 2, nothing journaled", () => {
    const p = program();
    expect(sheepdog(["finish"], { env: p.env })).toMatchObject({ code: 2 });
    expect(sheepdog(["finish", "--note", "  "], { env: p.env }).stderr).toMatch(
      /--note TEXT is required/,
    );
    expect(sheepdog(["finish", "--note", "x", "--pid", "abc"], { env: p.env }).code).toBe(2);
    expect(sheepdog(["reopen", "extra"], { env: p.env }).code).toBe(2);
    expect(ofType(p.stateDir, "finished")).toHaveLength(0);
  });

  it("reopen and resume and unpause on a program in no such state say so and journal nothing", () => {
    const p = program();
    expect(sheepdog(["reopen"], { env: p.env }).stdout).toBe(
      "demo: not finished; nothing to reopen\n",
    );
    expect(sheepdog(["resume"], { env: p.env }).stdout).toBe(
      "demo: not stood down; nothing to clear\n",
    );
    expect(sheepdog(["unpause"], { env: p.env }).stdout).toBe("demo: not paused\n");
    expect(readdirSync(p.stateDir)).not.toContain("journal.jsonl");
  });
});

describe("pause and unpause", () => {
  it("pause --until 2h: nothing starts; unpause: the next start is planned", () => {
    const p = program();
    const r = sheepdog(["pause", "--until", "2h"], { env: p.env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(
      /^demo: paused until \S+Z \(2h from now\); sheepdog unpause ends it early\n$/,
    );
    const [paused] = ofType(p.stateDir, "paused");
    expect(paused).toMatchObject({ reason: "paused by a person", window: null });
    const until = Date.parse(String(paused?.until));
    expect(Math.abs(until - Date.now() - 2 * 3600_000)).toBeLessThan(60_000);
    const t = tick(p.env);
    expect(t.report.decision).toBe("wait_pause");
    expect(t.report.reason).toMatch(/paused by a person/);
    expect(sheepdog(["unpause"], { env: p.env }).code).toBe(0);
    expect(ofType(p.stateDir, "unpaused")).toHaveLength(1);
    expect(tick(p.env).report.decision).toBe("start");
    expect(ofType(p.stateDir, "manager_started")[0]).toMatchObject({ planned: true });
  });

  it("a pause whose time has come is ended by the tick (unpaused journaled), which then goes on", async () => {
    const p = program();
    // A pause long enough that no machine load can end it before the first tick…
    expect(sheepdog(["pause", "--until", "1h"], { env: p.env }).code).toBe(0);
    expect(tick(p.env).report.decision).toBe("wait_pause");
    // …and then its time comes: the journaled `until` moves to the past (no sleeping on a clock).
    const journal = join(p.stateDir, "journal.jsonl");
    const past = new Date(Date.now() - 1000).toISOString();
    writeFileSync(
      journal,
      readFileSync(journal, "utf8")
        .split("\n")
        .map((l) =>
          l.includes('"type":"paused"') ? JSON.stringify({ ...JSON.parse(l), until: past }) : l,
        )
        .join("\n"),
    );
    const r = tick(p.env);
    expect(r.report.decision).toBe("start");
    expect(r.report.actions[0]).toBe("pause over");
    expect(ofType(p.stateDir, "unpaused")).toHaveLength(1);
  });

  it("pause --until takes an ISO time; bad or past times are exit 2 and journal nothing", () => {
    const p = program();
    const at = new Date(Date.now() + 3600_000).toISOString();
    expect(sheepdog(["pause", "--until", at], { env: p.env }).code).toBe(0);
    expect(ofType(p.stateDir, "paused")[0]?.until).toBe(at);
    const q = program();
    expect(sheepdog(["pause"], { env: q.env }).stderr).toMatch(/--until WHEN is required/);
    const bad = sheepdog(["pause", "--until", "tomorrow"], { env: q.env });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain(
      `--until: expected a duration such as 2h or an ISO-8601 time such as 2026-11-30T18:00:00Z, got "tomorrow"`,
    );
    expect(sheepdog(["pause", "--until", "2020-01-01T00:00:00Z"], { env: q.env }).stderr).toMatch(
      /already passed/,
    );
    expect(ofType(q.stateDir, "paused")).toHaveLength(0);
  });
});

describe("resume", () => {
  it("clears a stand-down (journal `cleared`)", () => {
    const p = program(["--never-claim"], { crash_loop: { starts: 1, within: "1h" } });
    // A manual release after a first start, twice: the second unplanned start is one too many.
    const m = live();
    tick(p.env);
    sheepdog(["claim", "acquire", "--break-stale", "--pid", String(m.pid)], { env: p.env });
    sheepdog(["claim", "release", "--pid", String(m.pid)], { env: p.env });
    killStarted(p.stateDir);
    expect(tick(p.env).report.decision).toBe("start");
    sheepdog(["claim", "acquire", "--break-stale", "--pid", String(m.pid)], { env: p.env });
    sheepdog(["claim", "release", "--pid", String(m.pid)], { env: p.env });
    killStarted(p.stateDir);
    expect(tick(p.env).report.decision).toBe("stand_down");
    const r = sheepdog(["resume"], { env: p.env });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(
      /^demo: stand-down cleared \(it was: no manager holds the claim; crash loop: 1 unplanned start within 1h/,
    );
    expect(ofType(p.stateDir, "cleared")).toHaveLength(1);
    expect(tick(p.env).report.decision).toBe("start");
  });
});
