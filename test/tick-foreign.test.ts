// Rule 6 (DESIGN §6): a claim held on another machine is reported, never judged or broken here.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { machineId } from "../src/process/identity.js";
import { sheepdog, sleeper } from "./helpers/cli.js";
import { events, killStarted, managerProgram, ofType, tick } from "./helpers/watchdog.js";

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

describe("tick: a claim held by another machine", () => {
  it("decides foreign, exits 0, starts, stops and breaks nothing; the claim stays", () => {
    // A stale claim (2h, stale_after 1s) on a pid that is alive here: judged as this machine's,
    // it would be a stuck manager to stop and restart.
    const p = managerProgram([], { stale_after: "1s" });
    cleanups.push(() => killStarted(p.stateDir));
    const local = sleeper();
    cleanups.push(() => local.kill("SIGKILL"));
    const pid = local.pid as number;
    const took = sheepdog(["claim", "acquire", "--pid", String(pid)], { env: p.env });
    expect(took.code, took.stderr).toBe(0);
    const holderPath = join(p.stateDir, "claim", "holder.json");
    const mine = JSON.parse(readFileSync(holderPath, "utf8"));
    const other = `another-${machineId()}`;
    const foreign = {
      ...mine,
      machine_id: other,
      hostname: "build-box-2",
      claimed_at: new Date(Date.now() - 2 * 3600_000).toISOString(),
    };
    writeFileSync(holderPath, `${JSON.stringify(foreign)}\n`);
    const before = readFileSync(holderPath, "utf8");
    const journalBefore = events(p.stateDir).length;

    const r = tick(p.env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.report.decision).toBe("foreign");
    expect(r.report.reason).toBe(
      `claimed by pid ${pid} on build-box-2 (another machine): not judged here`,
    );
    expect(r.report.actions).toEqual([]);
    expect(r.report.facts?.claim).toMatchObject({ state: "foreign", pid, machine_id: other });

    // Nothing was started, stopped or broken: the journal has no new event, the claim is as it was.
    expect(events(p.stateDir)).toHaveLength(journalBefore);
    for (const type of ["manager_started", "manager_stopped", "claim_broken", "stood_down"])
      expect(ofType(p.stateDir, type)).toEqual([]);
    expect(readFileSync(holderPath, "utf8")).toBe(before);
    expect(local.exitCode).toBeNull();
    expect(local.signalCode).toBeNull();
    const shown = sheepdog(["claim", "show", "--json"], { env: p.env });
    expect(shown.code, shown.stderr).toBe(0);
    expect(JSON.parse(shown.stdout)).toEqual({
      held: true,
      holder: foreign,
      alive: null,
      foreign: true,
    });

    // The human form says the same, and a second tick still judges nothing.
    const human = sheepdog(["tick"], { env: p.env });
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toMatch(
      /^demo +foreign +claimed by pid \d+ on build-box-2 \(another machine\)/,
    );
    expect(JSON.parse(readFileSync(join(p.stateDir, "last-tick.json"), "utf8"))).toMatchObject({
      decision: "foreign",
    });
    expect(ofType(p.stateDir, "manager_started")).toEqual([]);
    expect(readFileSync(holderPath, "utf8")).toBe(before);
  });
});
