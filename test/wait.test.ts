// `sheepdog wait` (DESIGN §14) through the built CLI: a real manager process (a sleeper) holds
// the claim, and the wait wakes on the first of its interval, a pause, a stand-down or a lost
// claim, with one JSON line, exit 0; it spends no CPU while it waits.
import type { ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { appendEvent } from "../src/journal/journal.js";
import { sheepdog, sleeper, spawnCli, tempProgram } from "./helpers/cli.js";
import { armFaultPoint } from "./helpers/fault-point.js";

const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) c.kill("SIGKILL");
});

function held() {
  const p = tempProgram("demo");
  const manager = sleeper();
  children.push(manager);
  const r = sheepdog(["claim", "acquire", "--pid", String(manager.pid)], { env: p.env });
  expect(r.code, r.stderr).toBe(0);
  return { ...p, manager: manager.pid as number };
}

/**
 * `sheepdog wait` in the background, once it waits: its first look found nothing to wake for
 * and it watches the state folder (the `wait.waiting` fault point stops it there, and it is let
 * go on). Whatever ends it after this is the wake path, never a look at its start. Its JSON
 * line and exit code once it ends.
 */
async function startWait(
  p: ReturnType<typeof held>,
  args: string[],
  env: Record<string, string> = {},
) {
  const waiting = armFaultPoint("wait.waiting");
  const run = spawnCli(["wait", "--pid", String(p.manager), ...args], {
    env: { ...p.env, ...env, ...waiting.env },
  });
  const child = run.child;
  children.push(child);
  const done = run.done.then(({ code, stdout, stderr }) => {
    let line: Record<string, unknown> | null = null;
    try {
      line = JSON.parse(stdout);
    } catch {
      line = null;
    }
    if (line === null) process.stderr.write(`wait printed: ${stdout} ${stderr}\n`);
    return { code, line };
  });
  if (!(await waiting.reached(child)))
    throw new Error(`wait ended before it waited: ${run.stdout()}`);
  child.kill("SIGCONT");
  return { child, done, ended: run.ended };
}

/** utime + stime of a process, in clock ticks (/proc/PID/stat). */
function cpuTicks(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return Number(fields[11]) + Number(fields[12]);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("sheepdog wait", () => {
  it("wakes when --every has passed: one JSON line {event, reason, at}, exit 0, no CPU while it waits", async () => {
    const p = held();
    const w = await startWait(p, ["--every", "4s"]);
    const before = cpuTicks(w.child.pid as number);
    await sleep(1500);
    const after = cpuTicks(w.child.pid as number);
    // No busy poll: at most a tick or two of CPU in 1.5 s of waiting.
    expect(after - before).toBeLessThanOrEqual(2);
    expect(w.ended()).toBe(false);
    const { code, line } = await w.done;
    expect(code).toBe(0);
    expect(line).toMatchObject({ event: "time", reason: "4s passed" });
    expect(Object.keys(line ?? {})).toEqual(["event", "reason", "at"]);
  });

  it("wakes at once when the claim is released (claim_lost), long before --every", async () => {
    const p = held();
    const w = await startWait(p, ["--every", "10m"]);
    expect(w.ended()).toBe(false);
    expect(sheepdog(["claim", "release", "--pid", String(p.manager)], { env: p.env }).code).toBe(0);
    const { code, line } = await w.done;
    expect(code).toBe(0);
    expect(line).toMatchObject({ event: "claim_lost", reason: "the program's claim is not held" });
  });

  it("wakes when the program is paused (seat)", async () => {
    const p = held();
    const w = await startWait(p, ["--every", "10m"]);
    expect(sheepdog(["pause", "--until", "1h"], { env: p.env }).code).toBe(0);
    const { line } = await w.done;
    expect(line).toMatchObject({ event: "seat" });
    expect(String(line?.reason)).toMatch(/^the program is paused until /);
  });

  it("wakes when the program stands down", async () => {
    const p = held();
    const w = await startWait(p, ["--every", "10m"]);
    appendEvent(p.stateDir, { type: "stood_down", reason: "crash loop" });
    const { line } = await w.done;
    expect(line).toMatchObject({
      event: "stood_down",
      reason: "the program stood down: crash loop",
    });
  });

  it("a caller that does not hold the claim, or whose manager dies, is told claim_lost", async () => {
    const p = held();
    const other = sleeper();
    children.push(other);
    const r = sheepdog(["wait", "--pid", String(other.pid)], { env: p.env });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({
      event: "claim_lost",
      reason: `the claim is held by pid ${p.manager}, not by this manager (pid ${other.pid})`,
    });
    // The manager's death changes no file: the slow re-check sees it (a minute; 1 s here).
    const w = await startWait(p, ["--every", "10m"], { SHEEPDOG_WAIT_RECHECK_MS: "1000" });
    process.kill(p.manager, "SIGKILL");
    const { line } = await w.done;
    expect(line).toMatchObject({ event: "claim_lost" });
    expect(String(line?.reason)).toMatch(/is gone|not held|not by this manager/);
  });

  it("a bad --every is exit 2, naming what was expected", () => {
    const p = held();
    for (const bad of ["0s", "soon", "5"]) {
      const r = sheepdog(["wait", "--pid", String(p.manager), "--every", bad], { env: p.env });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(
        `--every: expected a positive duration such as 90s, 5m, 2h or 1d, got "${bad}"`,
      );
    }
  });
});
