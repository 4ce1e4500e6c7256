// A typo saved into program.json while a program runs (DESIGN §16, issue 18): before, every tick
// exited 2, every save failed, nothing was journaled or paged, and `status --all` exited 0. Now
// the tick judges with the last valid config, journals `config_invalid` once per broken text,
// pages (high), saves go on with a notice, and status and doctor say it.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { sheepdog, sheepdogAsync } from "./helpers/cli.js";
import { useNtfyServer } from "./helpers/ntfy-server.js";
import {
  cleanedUp,
  isAlive,
  ofType,
  type TickProgram,
  waitFor,
  waitForClaimBy,
} from "./helpers/watchdog.js";

const server = useNtfyServer();
const { program } = cleanedUp();

/** `tick --json` run asynchronously: the ntfy stand-in in this process answers its pages. */
async function tick(env: NodeJS.ProcessEnv) {
  const r = await sheepdogAsync(["tick", "--json"], { env });
  return {
    ...r,
    report: (JSON.parse(r.stdout || '{"programs":[{}]}') as { programs: TickProgram[] })
      .programs[0] as TickProgram,
  };
}

function paged() {
  const p = program(
    ["--save-every", "1"],
    {},
    { page: { ntfy: { server: server.url, topic: "demo-pages" } } },
  );
  const file = join(p.root, "program.json");
  const good = readFileSync(file, "utf8");
  const breakWith = (key: string) => {
    const config = JSON.parse(good);
    config.watchdog[key] = "45m";
    writeFileSync(file, JSON.stringify(config));
  };
  return { ...p, file, good, breakWith };
}

describe("a program.json that turns invalid while the program runs", () => {
  it("is judged on the last valid copy: config_invalid journaled and paged once per broken text, saves go on, status exits 2", async () => {
    const p = paged();
    const first = await tick(p.env);
    expect(first.report.decision).toBe("start");
    const [started] = ofType(p.stateDir, "manager_started");
    const pid = started?.pid as number;
    await waitForClaimBy(p.stateDir, pid);

    p.breakWith("stale_afterr");
    for (let i = 0; i < 2; i++) {
      const t = await tick(p.env);
      expect(t.stderr).toBe("");
      expect(t.code).toBe(0);
      expect(t.report.decision).toBe("ok");
      expect(t.report.facts?.config_invalid).toMatchObject({ file: p.file });
    }
    const invalid = ofType(p.stateDir, "config_invalid");
    expect(invalid).toHaveLength(1);
    expect(invalid[0]).toMatchObject({ file: p.file });
    expect(String(invalid[0]?.error)).toContain(
      'watchdog.stale_afterr: unknown key "stale_afterr" (did you mean "stale_after"?)',
    );
    const pages = server.received.filter((r) => r.title === "demo: program.json is invalid");
    expect(pages).toHaveLength(1);
    expect(pages[0]?.priority).toBe(4);
    expect(pages[0]?.message).toContain("goes on with the last valid config");

    // The manager's own saves go on, and a save answers with a notice.
    const saves = ofType(p.stateDir, "saved").length;
    await waitFor("the manager's next save", () => ofType(p.stateDir, "saved").length > saves);
    const save = sheepdog(["save", "--pid", String(pid)], { env: p.env });
    expect(save.code, save.stderr).toBe(0);
    expect(JSON.parse(save.stdout).notices.join("\n")).toMatch(
      /program\.json is invalid .*last valid config/,
    );
    expect(isAlive(pid, String(started?.start_time))).toBe(true);

    // status says it and exits 2; a command that would act on it refuses (exit 2).
    const status = sheepdog(["status", "--all", "--wide"], { env: p.env });
    expect(status.code).toBe(2);
    expect(status.stdout).toContain("CONFIG INVALID");
    expect(sheepdog(["claim", "show"], { env: p.env }).code).toBe(2);
    const doctor = JSON.parse(sheepdog(["doctor", "--json"], { env: p.env }).stdout);
    const config = doctor.checks.find((c: { check: string }) => c.check === "config");
    expect(config.status).toBe("fail");
    expect(config.detail).toContain("the watchdog goes on with the last valid copy");

    // Another typo is news; fixing it and making the first one again is news too.
    p.breakWith("claim_gracee");
    expect((await tick(p.env)).report.decision).toBe("ok");
    expect(ofType(p.stateDir, "config_invalid")).toHaveLength(2);
    writeFileSync(p.file, p.good);
    const fixed = await tick(p.env);
    expect(fixed.report.facts?.config_invalid).toBeUndefined();
    expect(sheepdog(["status"], { env: p.env }).code).toBe(0);
    p.breakWith("stale_afterr");
    await tick(p.env);
    expect(ofType(p.stateDir, "config_invalid")).toHaveLength(3);
  });

  it("a program that never had a valid config fails loudly, as before (exit 2, nothing journaled)", async () => {
    const p = paged();
    p.breakWith("stale_afterr");
    const t = await sheepdogAsync(["tick"], { env: p.env });
    expect(t.code).toBe(2);
    expect(t.stderr).toContain("stale_afterr");
    expect(ofType(p.stateDir, "config_invalid")).toEqual([]);
  });
});

describe("a launcher's config error (issue 18)", () => {
  it("check warns; each start fails as a failed start, journaled and counted, and the crash-loop guard stands the program down", async () => {
    const p = paged();
    const config = JSON.parse(p.good);
    config.manager = { launcher: "command" }; // no manager.command
    config.watchdog.crash_loop = { starts: 2, within: "1h" };
    writeFileSync(p.file, JSON.stringify(config));
    const check = sheepdog(["check"], { env: p.env });
    expect(check.code).toBe(0);
    expect(check.stderr).toMatch(/warning: .*manager\.command is not set/);
    const decisions: string[] = [];
    for (let i = 0; i < 4; i++) {
      const t = await tick(p.env);
      expect(t.code, t.stderr).toBe(0);
      decisions.push(t.report.decision);
    }
    // a failed start counts as unplanned (DESIGN §6): two, then the guard stands it down
    expect(decisions).toEqual(["start", "start", "stand_down", "hold"]);
    const failed = ofType(p.stateDir, "manager_start_failed");
    expect(failed).toHaveLength(2);
    expect(String(failed[0]?.reason)).toContain("manager.command: expected a non-empty array");
    expect(ofType(p.stateDir, "tick_failed")).toEqual([]);
    expect(ofType(p.stateDir, "stood_down")).toHaveLength(1);
  });
});
