// What act re-checks after decide (issue 18, found by reading): gathering and keeping evidence
// take seconds, so a holder that saved meanwhile is not stopped as stuck, and a start that
// claimed meanwhile is not stopped as a leftover; evidence that cannot be written never keeps a
// stuck manager in place. Each tick is held at `tick.after-decide` (its decision made) while the
// world changes, then let go.
import { spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CLI, sheepdog, tempDir } from "./helpers/cli.js";
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
  const marker = join(tempDir(), "marker");
  const child = spawn(process.execPath, [CLI, "tick", "--json"], {
    env: {
      ...process.env,
      ...env,
      SHEEPDOG_FAULT_POINT: "tick.after-decide",
      SHEEPDOG_FAULT_MARKER: marker,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout.on("data", (d) => {
    out += d;
  });
  const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
  await waitFor(
    "the tick to decide",
    () => existsSync(marker) && readFileSync(marker, "utf8").endsWith("\n"),
  );
  meanwhile();
  child.kill("SIGCONT");
  expect(await exited).toBe(0);
  return (JSON.parse(out) as { programs: TickProgram[] }).programs[0] as TickProgram;
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
    const marker = join(tempDir(), "marker");
    // The launcher has started the manager; the tick dies before journaling it.
    const child = spawn(process.execPath, [CLI, "tick", "--json"], {
      env: {
        ...process.env,
        ...p.env,
        SHEEPDOG_FAULT_POINT: "act.after-start",
        SHEEPDOG_FAULT_MARKER: marker,
      },
      stdio: "ignore",
    });
    const exited = new Promise((r) => child.once("exit", r));
    await waitFor(
      "the launch",
      () => existsSync(marker) && readFileSync(marker, "utf8").endsWith("\n"),
    );
    child.kill("SIGKILL");
    await exited;
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
