import { readFileSync, readlinkSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { processInfo } from "../src/process/identity.js";
import { sheepdog, sleeper, tempDir } from "./helpers/cli.js";
import {
  cleanedUp,
  dueFor,
  events,
  holder,
  isAlive,
  ofType,
  staleDue,
  tick,
  waitFor,
  waitForClaimBy,
} from "./helpers/watchdog.js";

const { cleanups, program } = cleanedUp();
const lastStart = (stateDir: string) =>
  ofType(stateDir, "manager_started").at(-1) as unknown as {
    pid: number;
    start_time: string;
    planned: boolean;
    reason: string;
  };

describe("tick: starting and restarting managers (real processes)", () => {
  it("first start: a planned start of the command launcher, detached, logging to manager.log; then ok", async () => {
    const p = program(["--save-every", "1"]);
    const first = tick(p.env);
    expect(first.code).toBe(0);
    expect(first.report).toMatchObject({ program: "demo", root: p.root, decision: "start" });
    const s = lastStart(p.stateDir);
    expect(s).toMatchObject({
      launcher: "command",
      planned: true,
      reason: "the program's first start",
    });
    expect(first.report.actions.join(" ")).toContain(`started pid ${s.pid}`);
    // The tick has exited; the manager outlives it, in its own session, in the program root.
    await waitForClaimBy(p.stateDir, s.pid);
    expect(isAlive(s.pid, s.start_time)).toBe(true);
    const stat = readFileSync(`/proc/${s.pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    expect(Number(fields[3])).toBe(s.pid); // session id: setsid made it a session leader
    expect(readlinkSync(`/proc/${s.pid}/cwd`)).toBe(p.root);
    const environ = readFileSync(`/proc/${s.pid}/environ`, "utf8").split("\0");
    expect(environ).toContain(`SHEEPDOG_PROGRAM=${p.root}`);
    const log = join(p.stateDir, "manager.log");
    expect(statSync(log).mode & 0o777).toBe(0o600);
    await waitFor("the manager's output in manager.log", () =>
      readFileSync(log, "utf8").includes(`fake-manager ${s.pid}: claimed`),
    );
    // The prompt reached the argv with its placeholders filled.
    expect(readFileSync(log, "utf8")).toContain(
      `Read ${p.root}/MANAGER-PROMPT.md and follow it. You were started by sheepdog: the program's first start.`,
    );
    const second = tick(p.env);
    expect(second.report.decision).toBe("ok");
    expect(second.report.reason).toMatch(new RegExp(`^pid ${s.pid} alive`));
    expect(ofType(p.stateDir, "manager_started")).toHaveLength(1);
    const last = JSON.parse(readFileSync(join(p.stateDir, "last-tick.json"), "utf8"));
    expect(last).toMatchObject({ decision: "ok", facts: { program: "demo" } });
    expect(statSync(join(p.stateDir, "last-tick.json")).mode & 0o777).toBe(0o600);
  });

  it("a manager killed with SIGKILL is replaced (restart_dead, unplanned)", async () => {
    const p = program(["--save-every", "1"]);
    tick(p.env);
    const a = lastStart(p.stateDir);
    await waitForClaimBy(p.stateDir, a.pid);
    process.kill(a.pid, "SIGKILL");
    await waitFor("the manager to die", () => !isAlive(a.pid, a.start_time));
    const r = tick(p.env);
    expect(r.code).toBe(0);
    expect(r.report.decision).toBe("restart_dead");
    expect(r.report.reason).toBe(`holder pid ${a.pid} is dead`);
    const b = lastStart(p.stateDir);
    expect(b.pid).not.toBe(a.pid);
    expect(b.planned).toBe(false);
    expect(ofType(p.stateDir, "claim_broken")).toHaveLength(1);
    await waitForClaimBy(p.stateDir, b.pid);
  });

  it("a SIGSTOPped manager (alive, not saving) is stopped by exact pid, with evidence, and replaced", async () => {
    const childFile = join(tempDir(), "child.pid");
    const p = program(["--save-every", "1", "--child", childFile], { stale_after: "4s" });
    tick(p.env);
    const a = lastStart(p.stateDir);
    await waitForClaimBy(p.stateDir, a.pid);
    await waitFor("a first save", () => ofType(p.stateDir, "saved").length > 0);
    // Read now: the replacement manager, started by the same command, writes its own child here.
    const child = Number(readFileSync(childFile, "utf8"));
    process.kill(a.pid, "SIGSTOP");
    // Healthy while fresh; stuck once no save came for stale_after.
    await dueFor(p.env, "restart_stuck", staleDue(p.stateDir, 4000));
    const r = tick(p.env);
    expect(r.code).toBe(0);
    expect(r.report.decision).toBe("restart_stuck");
    expect(r.report.reason).toMatch(
      new RegExp(`^pid ${a.pid}: no save for \\d+s \\(stale after 4s\\)$`),
    );
    expect(isAlive(a.pid, a.start_time)).toBe(false);
    // It led its own session (the command launcher's setsid): its tool processes went with it.
    await waitFor("the manager's child to be gone", () => {
      const info = processInfo(child);
      return info === null || info.state === "Z" || info.state === "X";
    }).catch((err) => {
      // What a failure under load needs to be understood: the stop as journaled, and the child.
      const info = processInfo(child);
      throw new Error(
        `${(err as Error).message}; child ${child}: ${JSON.stringify(info)}; stop: ${JSON.stringify(ofType(p.stateDir, "manager_stopped"))}`,
      );
    });
    const [stopped] = ofType(p.stateDir, "manager_stopped");
    expect(stopped).toMatchObject({ pid: a.pid, start_time: a.start_time, outcome: "term" });
    const evidence = String(stopped?.evidence);
    expect(evidence.startsWith(join(p.stateDir, "evidence", ""))).toBe(true);
    expect(evidence).toMatch(new RegExp(`-${a.pid}$`));
    const kept = JSON.parse(readFileSync(join(evidence, "facts.json"), "utf8"));
    expect(kept.facts.claim).toMatchObject({ state: "alive", pid: a.pid });
    expect(kept.process).toMatchObject({ pid: a.pid, state: "T" });
    // A SIGSTOPped process uses no CPU: the evidence says it was idle, not looping.
    expect(kept.cpu).toMatchObject({ cpu_percent: 0, window_ms: 500 });
    expect(kept.cpu.rss_bytes).toBeGreaterThan(0);
    expect(readFileSync(join(evidence, "README.txt"), "utf8")).toMatch(
      /process: state T; cpu: idle, 0% of a core over 500 ms/,
    );
    expect(statSync(evidence).mode & 0o777).toBe(0o700);
    const types = events(p.stateDir).map((e) => e.type);
    const at = types.lastIndexOf("manager_stopped");
    expect(types.slice(at)).toEqual(
      expect.arrayContaining(["manager_stopped", "claim_broken", "manager_started"]),
    );
    expect(types.indexOf("claim_broken", at)).toBeLessThan(types.indexOf("manager_started", at));
    const b = lastStart(p.stateDir);
    expect(b.pid).not.toBe(a.pid);
    expect(b.planned).toBe(false);
    expect(r.report.actions.join(" ")).toContain(`stopped pid ${a.pid}`);
    await waitForClaimBy(p.stateDir, b.pid);
  });

  it("a replacement manager is not judged by its predecessor's heartbeat", async () => {
    const p = program(["--first-save-after", "3600"], { stale_after: "3s" });
    // The predecessor: a live process that claims and saves, then dies.
    const old = sleeper();
    cleanups.push(() => old.kill("SIGKILL"));
    expect(sheepdog(["claim", "acquire", "--pid", String(old.pid)], { env: p.env }).code).toBe(0);
    expect(sheepdog(["save", "--pid", String(old.pid)], { env: p.env }).code).toBe(0);
    old.kill("SIGKILL");
    await waitFor("the old heartbeat to go stale", () => {
      const beat = JSON.parse(readFileSync(join(p.stateDir, "heartbeat.json"), "utf8"));
      return Date.now() - Date.parse(beat.at) > 3500;
    });
    expect(tick(p.env).report.decision).toBe("restart_dead");
    const b = lastStart(p.stateDir);
    await waitForClaimBy(p.stateDir, b.pid);
    const r = tick(p.env);
    expect(r.report.decision).toBe("ok");
    expect(r.report.reason).toMatch(new RegExp(`^pid ${b.pid} alive, claimed without a save`));
    expect(r.report.facts?.heartbeat).toMatchObject({ pid: old.pid });
  });

  it("a save by a process that does not hold the claim leaves the holder's heartbeat alone", () => {
    const p = program();
    const manager = sleeper();
    const other = sleeper();
    cleanups.push(
      () => manager.kill("SIGKILL"),
      () => other.kill("SIGKILL"),
    );
    const env = p.env;
    expect(sheepdog(["claim", "acquire", "--pid", String(manager.pid)], { env }).code).toBe(0);
    // The claim alone is older than stale_after (1h): only the holder's save keeps it fresh.
    const holderPath = join(p.stateDir, "claim", "holder.json");
    const h = JSON.parse(readFileSync(holderPath, "utf8"));
    const old = new Date(Date.now() - 2 * 3600_000).toISOString();
    writeFileSync(holderPath, JSON.stringify({ ...h, claimed_at: old }));
    expect(sheepdog(["save", "--pid", String(manager.pid)], { env }).code).toBe(0);
    const theirs = sheepdog(["save", "--pid", String(other.pid), "--progress", "x"], { env });
    expect(theirs.code, theirs.stderr).toBe(0);
    const r = tick(env);
    expect(r.report.decision).toBe("ok");
    expect(r.report.reason).toMatch(new RegExp(`^pid ${manager.pid} alive, last save \\d+s ago`));
    expect(JSON.parse(theirs.stdout).notices).toContain(
      `the heartbeat was not stamped because pid ${manager.pid} holds the claim (this is pid ${other.pid})`,
    );
    const beatPath = join(p.stateDir, "heartbeat.json");
    expect(JSON.parse(readFileSync(beatPath, "utf8")).pid).toBe(manager.pid);
    expect(ofType(p.stateDir, "saved").map((e) => e.pid)).toEqual([manager.pid, other.pid]);
    // A heartbeat.json overwritten by someone else anyway: the holder's save in the journal counts.
    writeFileSync(
      beatPath,
      JSON.stringify({ at: new Date().toISOString(), pid: other.pid, context_tokens: null }),
    );
    const again = tick(env);
    expect(again.report.decision).toBe("ok");
    expect(again.report.reason).toMatch(new RegExp(`^pid ${manager.pid} alive, last save`));
    expect(again.report.facts?.heartbeat).toMatchObject({ pid: manager.pid });
    expect(isAlive(manager.pid as number, String(h.start_time))).toBe(true);
    expect(ofType(p.stateDir, "manager_stopped")).toHaveLength(0);
  });

  it("a manager that handed over but stays alive is stopped by exact pid before its successor starts", async () => {
    const p = program(["--hand-over-after", "1", "--linger"]);
    tick(p.env);
    const a = lastStart(p.stateDir);
    await waitFor(
      "a to hand over",
      () => ofType(p.stateDir, "hand_over").length === 1 && !holder(p.stateDir),
    );
    expect(isAlive(a.pid, a.start_time)).toBe(true); // it lingers, as a Claude session in a pane does
    const r = tick(p.env);
    expect(r.report.decision).toBe("start_after_hand_over");
    expect(isAlive(a.pid, a.start_time)).toBe(false);
    expect(ofType(p.stateDir, "hand_over")[0]).toMatchObject({
      pid: a.pid,
      start_time: a.start_time,
    });
    expect(ofType(p.stateDir, "manager_stopped")).toEqual([
      expect.objectContaining({
        pid: a.pid,
        start_time: a.start_time,
        reason: "handed over; stopping it before its successor starts",
        evidence: null,
        outcome: "term",
        decision: "start_after_hand_over",
      }),
    ]);
    expect(r.report.actions.join(" ")).toContain(`stopped pid ${a.pid}, which had handed over`);
    const b = lastStart(p.stateDir);
    expect(b.pid).not.toBe(a.pid);
    expect(b.planned).toBe(true);
    const types = events(p.stateDir).map((e) => e.type);
    expect(types.lastIndexOf("manager_stopped")).toBeLessThan(types.lastIndexOf("manager_started"));
    await waitForClaimBy(p.stateDir, b.pid);
  });

  it("a start that never claimed is stopped by exact pid before the next start", async () => {
    const p = program(["--never-claim"], { claim_grace: "2s" });
    tick(p.env);
    const a = lastStart(p.stateDir);
    expect(tick(p.env).report.decision).toBe("starting");
    await waitFor(
      "the claim grace to pass",
      () => Date.now() - Date.parse(String(events(p.stateDir)[0]?.at)) > 2200,
    );
    const r = tick(p.env);
    expect(r.report.decision).toBe("start");
    expect(r.report.reason).toMatch(new RegExp(`pid ${a.pid}\\) never claimed`));
    expect(isAlive(a.pid, a.start_time)).toBe(false);
    expect(ofType(p.stateDir, "manager_stopped")).toEqual([
      expect.objectContaining({ pid: a.pid, start_time: a.start_time, evidence: null }),
    ]);
    const b = lastStart(p.stateDir);
    expect(b.pid).not.toBe(a.pid);
    expect(isAlive(b.pid, b.start_time)).toBe(true);
    expect(holder(p.stateDir)).toBeNull();
  });

  it("rule 12: a start whose process exits at once is replaced on the next tick, not after the grace", async () => {
    const p = program(["--exit-at-once"], { claim_grace: "1h" });
    expect(tick(p.env).report.decision).toBe("start");
    const a = lastStart(p.stateDir);
    await waitFor("the started process to exit", () => !isAlive(a.pid, a.start_time));
    const r = tick(p.env);
    expect(r.report.decision).toBe("start");
    expect(r.report.reason).toMatch(new RegExp(`pid ${a.pid}\\) exited before it claimed`));
    expect(r.report.facts).toMatchObject({ last_start_process: "dead" });
    const b = lastStart(p.stateDir);
    expect(b.pid).not.toBe(a.pid);
    expect(b.planned).toBe(false);
    expect(ofType(p.stateDir, "manager_started")).toHaveLength(2);
  });
});
