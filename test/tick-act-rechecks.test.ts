import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { sheepdog, spawnCli } from "./helpers/cli.js";
import { armFaultPoint } from "./helpers/fault-point.js";
import {
  cleanedUp,
  dueFor,
  graceDue,
  isAlive,
  ofType,
  staleDue,
  type TickProgram,
  tick,
  waitFor,
} from "./helpers/watchdog.js";

const { program, live } = cleanedUp();

/** A tick held once it has decided; `meanwhile` runs; then it goes on. Returns its report. */
async function heldTick(env: NodeJS.ProcessEnv, meanwhile: () => void): Promise<TickProgram> {
  const decided = armFaultPoint("tick.after-decide");
  const run = spawnCli(["tick", "--json"], { env: { ...env, ...decided.env } });
  expect(await decided.reached(run.child), "the tick decided").toBe(true);
  meanwhile();
  run.child.kill("SIGCONT");
  const { code, stdout } = await run.done;
  expect(code).toBe(0);
  return (JSON.parse(stdout) as { programs: TickProgram[] }).programs[0] as TickProgram;
}

describe("act re-checks what decide saw", () => {
  it("a stuck holder that saves while the tick decides is not stopped, and its claim stays", async () => {
    const p = program([], { stale_after: "2s" });
    const manager = live();
    expect(sheepdog(["claim", "acquire", "--pid", String(manager.pid)], { env: p.env }).code).toBe(
      0,
    );
    await dueFor(p.env, "restart_stuck", staleDue(p.stateDir, 2000));
    const r = await heldTick(p.env, () => {
      expect(sheepdog(["save", "--pid", String(manager.pid)], { env: p.env }).code).toBe(0);
    });
    expect(r.decision).toBe("restart_stuck");
    expect(r.actions).toContain(`not stopped: pid ${manager.pid} saved since the tick looked`);
    expect(r.actions).toContain("not started: the claim changed meanwhile");
    expect(manager.exitCode).toBeNull();
    expect(ofType(p.stateDir, "manager_stopped")).toEqual([]);
    expect(ofType(p.stateDir, "claim_broken")).toEqual([]);
    expect(ofType(p.stateDir, "manager_started")).toEqual([]);
  });

  it("a start that claims while the tick decides to stop it as a leftover is left running", async () => {
    const p = program(["--never-claim"], { claim_grace: "2s" });
    expect(tick(p.env).report.decision).toBe("start");
    const [started] = ofType(p.stateDir, "manager_started");
    const pid = started?.pid as number;
    await dueFor(p.env, "start", graceDue(p.stateDir, 2000));
    const r = await heldTick(p.env, () => {
      expect(sheepdog(["claim", "acquire", "--pid", String(pid)], { env: p.env }).code).toBe(0);
    });
    expect(r.actions).toContain(`not stopped: pid ${pid} claimed since the tick looked`);
    expect(isAlive(pid, String(started?.start_time))).toBe(true);
    expect(ofType(p.stateDir, "manager_stopped")).toEqual([]);
    expect(ofType(p.stateDir, "manager_started")).toHaveLength(1);
  });

  it("evidence that cannot be written does not keep a stuck manager: it is stopped, and the journal says why there is none", async () => {
    const p = program([], { stale_after: "2s" });
    const manager = live();
    expect(sheepdog(["claim", "acquire", "--pid", String(manager.pid)], { env: p.env }).code).toBe(
      0,
    );
    // A file where the evidence folder goes: every evidence write fails (ENOTDIR), even as root.
    writeFileSync(join(p.stateDir, "evidence"), "not a folder\n");
    await dueFor(p.env, "restart_stuck", staleDue(p.stateDir, 2000));
    const r = tick(p.env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.report.decision).toBe("restart_stuck");
    await waitFor(
      "the stuck holder to go",
      () => manager.exitCode !== null || manager.signalCode !== null,
    );
    const [stopped] = ofType(p.stateDir, "manager_stopped");
    expect(stopped).toMatchObject({ pid: manager.pid, evidence: null });
    expect(String(stopped?.evidence_error)).toMatch(/ENOTDIR|EEXIST|not a directory/i);
    expect(ofType(p.stateDir, "manager_started")).toHaveLength(1);
    expect(ofType(p.stateDir, "tick_failed")).toEqual([]);
  });
});

describe("a start's intent is journaled before its launch (issue 18)", () => {
  it("a tick killed mid-launch leaves a start the next tick waits on, then journals it cut short and starts anew", async () => {
    const p = program(["--exit-at-once"], { claim_grace: "2s" });
    // The launcher has started the manager; the tick dies before journaling it.
    const launched = armFaultPoint("act.after-start");
    const run = spawnCli(["tick", "--json"], { env: { ...p.env, ...launched.env } });
    expect(await launched.reached(run.child), "the launch").toBe(true);
    run.child.kill("SIGKILL");
    await run.done;
    const [intent] = ofType(p.stateDir, "manager_starting");
    expect(intent).toMatchObject({ launcher: "command", planned: true });
    expect(ofType(p.stateDir, "manager_started")).toEqual([]);
    // Not a second launch beside the first: it is waited on for claim_grace.
    const next = tick(p.env);
    expect(next.report.decision).toBe("starting");
    expect(next.report.reason).toMatch(
      /its launch was not journaled: the tick that began it ended mid-launch/,
    );
    const due = Date.parse(String(intent?.at)) + 2000;
    const r = await dueFor(p.env, "start", due);
    expect(r.reason).toMatch(/cut short mid-launch and nothing claimed/);
    const after = tick(p.env);
    expect(after.report.decision).toBe("start");
    expect(ofType(p.stateDir, "start_cut_short")).toHaveLength(1);
    expect(ofType(p.stateDir, "start_cut_short")[0]?.launch_began).toBe(intent?.launch_began);
    // The new start is journaled whole: its intent, then its outcome.
    expect(ofType(p.stateDir, "manager_starting")).toHaveLength(2);
    expect(ofType(p.stateDir, "manager_started")).toHaveLength(1);
    expect(ofType(p.stateDir, "manager_started")[0]?.launch_began).toBe(
      ofType(p.stateDir, "manager_starting")[1]?.launch_began,
    );
  });
});
