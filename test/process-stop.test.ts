// stopProcess: exact pid + start time, and (asked for) the whole group a manager leads.
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { identityOf, type ProcessIdentity, processInfo } from "../src/process/identity.js";
import { stopOptionsFor, stopProcess } from "../src/process/stop.js";
import { tempDir } from "./helpers/cli.js";
import { waitFor } from "./helpers/watchdog.js";

const pids: number[] = [];
const children: ChildProcess[] = [];
afterEach(() => {
  for (const pid of pids.splice(0))
    for (const target of [-pid, pid])
      try {
        process.kill(target, "SIGKILL");
      } catch {
        // gone
      }
  for (const c of children.splice(0)) c.kill("SIGKILL");
});

/** Alive and not a zombie (an orphan may stay a zombie for a while on some hosts). */
function running(pid: number): boolean {
  const info = processInfo(pid);
  return Boolean(info && info.state !== "Z" && info.state !== "X");
}

/**
 * A manager-like process in its own session (as the command launcher starts one) with a
 * `sleep` child and a node child that itself runs `sleep`; each writes its pid to `dir`.
 * `ignoreTerm`: the middle child ignores SIGTERM, so only SIGKILL ends it.
 */
async function managerWithChildren(ignoreTerm = false) {
  const dir = tempDir();
  const script = `
    const { spawn } = require("node:child_process");
    const fs = require("node:fs");
    const sleep = spawn("sleep", ["300"], { stdio: "ignore" });
    fs.writeFileSync(${JSON.stringify(join(dir, "sleep"))}, String(sleep.pid));
    const mid = spawn(process.execPath, ["-e", ${JSON.stringify(
      `${ignoreTerm ? "process.on('SIGTERM', () => {});" : ""}
       const c = require("node:child_process").spawn("sleep", ["300"], { stdio: "ignore" });
       require("node:fs").writeFileSync(${JSON.stringify(join(dir, "grandchild"))}, String(c.pid));
       setInterval(() => {}, 1e6);`,
    )}], { stdio: "ignore" });
    fs.writeFileSync(${JSON.stringify(join(dir, "mid"))}, String(mid.pid));
    setInterval(() => {}, 1e6);`;
  const leader = spawn(process.execPath, ["-e", script], { stdio: "ignore", detached: true });
  children.push(leader);
  const pid = leader.pid as number;
  pids.push(pid);
  const read = (name: string) => {
    try {
      return Number(readFileSync(join(dir, name), "utf8")) || null;
    } catch {
      return null;
    }
  };
  const sleepPid = await waitFor("the sleep child", () => read("sleep"));
  const mid = await waitFor("the node child", () => read("mid"));
  const grandchild = await waitFor("the grandchild", () => read("grandchild"));
  for (const p of [sleepPid, mid, grandchild]) pids.push(p);
  const id = identityOf(pid) as ProcessIdentity;
  return { pid, id, sleepPid, mid, grandchild };
}

describe("process group id", () => {
  it("ProcessInfo.pgid is the process group: its own pid for a session leader", async () => {
    const m = await managerWithChildren();
    expect(processInfo(m.pid)?.pgid).toBe(m.pid);
    expect(processInfo(m.sleepPid)?.pgid).toBe(m.pid);
    expect(processInfo(m.mid)?.pgid).toBe(m.pid);
    expect(processInfo(process.pid)?.pgid).not.toBe(m.pid);
  });
});

describe("stopProcess", () => {
  it("{group: true} on a group leader stops its children and grandchildren too", async () => {
    const m = await managerWithChildren();
    const r = await stopProcess(m.id, 5_000, { group: true });
    expect(r).toEqual({ pid: m.pid, outcome: "term", group: true });
    for (const p of [m.pid, m.sleepPid, m.mid, m.grandchild])
      await waitFor(`pid ${p} to end`, () => !running(p), 5_000);
  });

  it("{group: true}: a child that ignores SIGTERM is killed after the grace", async () => {
    const m = await managerWithChildren(true);
    const r = await stopProcess(m.id, 1_000, { group: true });
    expect(r).toEqual({ pid: m.pid, outcome: "kill", group: true });
    for (const p of [m.pid, m.sleepPid, m.mid, m.grandchild]) expect(running(p)).toBe(false);
  });

  it("without {group: true} only the process itself is stopped (the default)", async () => {
    const m = await managerWithChildren();
    const r = await stopProcess(m.id, 5_000);
    expect(r).toEqual({ pid: m.pid, outcome: "term" });
    expect(running(m.pid)).toBe(false);
    expect(running(m.sleepPid)).toBe(true);
    expect(running(m.grandchild)).toBe(true);
  });

  it("{group: true} on a process that is not its group's leader stops it alone", async () => {
    const m = await managerWithChildren();
    // `mid` is in the leader's group but does not lead it: it is stopped alone.
    const midId = identityOf(m.mid) as ProcessIdentity;
    expect(processInfo(m.mid)?.pgid).not.toBe(m.mid);
    const r = await stopProcess(midId, 5_000, { group: true });
    expect(r).toEqual({ pid: m.mid, outcome: "term" });
    expect(running(m.mid)).toBe(false);
    expect(running(m.pid)).toBe(true);
    expect(running(m.sleepPid)).toBe(true);
    expect(running(m.grandchild)).toBe(true);
  });

  it("a reused pid (start time differs) is never signalled, group or not", async () => {
    const m = await managerWithChildren();
    const r = await stopProcess({ ...m.id, start_time: `${m.id.start_time}0` }, 1_000, {
      group: true,
    });
    expect(r).toEqual({ pid: m.pid, outcome: "gone" });
    for (const p of [m.pid, m.sleepPid, m.mid, m.grandchild]) expect(running(p)).toBe(true);
  });

  it("stopOptionsFor: the group only for the command launcher", () => {
    expect(stopOptionsFor("command")).toEqual({ group: true });
    for (const l of ["tmux", "herdr", undefined])
      expect(stopOptionsFor(l)).toEqual({ group: false });
  });
});
