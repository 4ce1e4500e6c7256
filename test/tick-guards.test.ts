import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { identityOf } from "../src/process/identity.js";
import { formatDuration } from "../src/util/duration.js";
import { acquireTickLock } from "../src/watchdog/pass/tick-lock.js";
import { sheepdog, sheepdogAsync, tempDir } from "./helpers/cli.js";
import {
  cleanedUp,
  dueFor,
  events,
  hashTree,
  holder,
  isAlive,
  managerProgram,
  ofType,
  staleDue,
  stuckProcess,
  tick,
  waitFor,
  waitForClaimBy,
} from "./helpers/watchdog.js";

const { cleanups, program, live } = cleanedUp();
const starts = (stateDir: string) =>
  ofType(stateDir, "manager_started") as unknown as {
    pid: number;
    start_time: string;
    planned: boolean;
  }[];
const lastStart = (stateDir: string) => starts(stateDir).at(-1) as ReturnType<typeof starts>[0];
/** Waits until the last start has claimed and died (a crashed manager). */
const crashed = (stateDir: string) => {
  const s = lastStart(stateDir);
  return waitFor(
    `pid ${s.pid} to claim and exit`,
    () => holder(stateDir)?.pid === s.pid && !isAlive(s.pid, s.start_time),
  );
};

describe("tick: the guards", () => {
  it("a hand-over is followed by a planned start that the crash-loop guard ignores", async () => {
    const flag = join(tempDir(), "hand-over-now");
    const p = program(["--save-every", "1", "--hand-over-when", flag], {
      crash_loop: { starts: 1, within: "1h" },
    });
    tick(p.env); // the first start (planned)
    const a = lastStart(p.stateDir);
    await waitForClaimBy(p.stateDir, a.pid);
    process.kill(a.pid, "SIGKILL");
    await waitFor("a to die", () => !isAlive(a.pid, a.start_time));
    expect(tick(p.env).report.decision).toBe("restart_dead"); // unplanned #1: the limit
    const b = lastStart(p.stateDir);
    await waitForClaimBy(p.stateDir, b.pid);
    writeFileSync(flag, "");
    await waitFor(
      "b to hand over",
      () => ofType(p.stateDir, "hand_over").length === 1 && !holder(p.stateDir),
    );
    // The successor must not hand over too (at its first save, which a fast machine reaches
    // before the kill below): then its death would be planned.
    rmSync(flag);
    const r = tick(p.env);
    expect(r.report.decision).toBe("start_after_hand_over");
    expect(r.report.reason).toMatch(
      /^the previous manager handed over.*: context full after \d+ saves$/,
    );
    const c = lastStart(p.stateDir);
    expect(c.planned).toBe(true);
    // Control: an unplanned start now would be the second within the hour.
    await waitForClaimBy(p.stateDir, c.pid);
    process.kill(c.pid, "SIGKILL");
    await waitFor("c to die", () => !isAlive(c.pid, c.start_time));
    expect(tick(p.env).report.decision).toBe("stand_down");
  });

  it("a crash loop stands down and starts nothing more until `resume`", async () => {
    const p = program(["--exit-after-claim"], { crash_loop: { starts: 2, within: "1h" } });
    expect(tick(p.env).report.decision).toBe("start");
    await crashed(p.stateDir);
    expect(tick(p.env).report.decision).toBe("restart_dead");
    await crashed(p.stateDir);
    expect(tick(p.env).report.decision).toBe("restart_dead");
    await crashed(p.stateDir);
    const down = tick(p.env);
    expect(down.report.decision).toBe("stand_down");
    expect(down.report.reason).toMatch(/crash loop: 2 unplanned starts within 1h/);
    expect(ofType(p.stateDir, "stood_down")).toHaveLength(1);
    // The stand-down says what failed, the loop, and where the managers' output is.
    const dead = lastStart(p.stateDir).pid;
    expect(String(ofType(p.stateDir, "stood_down")[0]?.reason)).toMatch(
      new RegExp(
        `^holder pid ${dead} is dead; crash loop: 2 unplanned starts within 1h .*; the managers' output is in \\.sheepdog/manager\\.log$`,
      ),
    );
    expect(starts(p.stateDir)).toHaveLength(3);
    const held = tick(p.env);
    expect(held.report.decision).toBe("hold");
    expect(held.report.reason).toMatch(/sheepdog resume/);
    expect(starts(p.stateDir)).toHaveLength(3);
    const resumed = sheepdog(["resume"], { env: p.env });
    expect(resumed.code).toBe(0);
    expect(ofType(p.stateDir, "cleared")).toHaveLength(1);
    const after = tick(p.env);
    expect(after.report.decision).toBe("restart_dead");
    expect(starts(p.stateDir)).toHaveLength(4);
    expect(lastStart(p.stateDir).planned).toBe(true);
  });

  it("a merge lock held by a live process keeps a stale manager alone", async () => {
    const repo = tempDir();
    spawnSync("git", ["init", "-q", repo]);
    const p = program([], { stale_after: "2s" }, { merge_lock: { repo } });
    const manager = live();
    const merger = live();
    expect(sheepdog(["claim", "acquire", "--pid", String(manager.pid)], { env: p.env }).code).toBe(
      0,
    );
    const acquired = sheepdog(
      ["merge-lock", "acquire", "--pid", String(merger.pid), "--item", "PR-7"],
      {
        env: p.env,
      },
    );
    expect(acquired.code, acquired.stderr).toBe(0);
    await dueFor(p.env, "merge_in_flight", staleDue(p.stateDir, 2000));
    const r = tick(p.env);
    expect(r.report.decision).toBe("merge_in_flight");
    expect(r.report.reason).toMatch(
      new RegExp(`merge lock is held by pid ${merger.pid} for PR-7 \\(alive\\)`),
    );
    expect(manager.exitCode).toBeNull();
    expect(ofType(p.stateDir, "manager_stopped")).toHaveLength(0);
    // Control: once the merge is over, the stale manager is restarted.
    merger.kill("SIGKILL");
    await waitFor(
      "the merger to die",
      () => merger.exitCode !== null || merger.signalCode !== null,
    );
    expect(tick(p.env).report.decision).toBe("restart_stuck");
  });

  it("a stale manager holding its own merge lock past merge_max is restarted (issue 18)", async () => {
    const repo = tempDir();
    spawnSync("git", ["init", "-q", repo]);
    const p = program([], { stale_after: "2s", merge_max: "8s" }, { merge_lock: { repo } });
    const manager = live();
    expect(sheepdog(["claim", "acquire", "--pid", String(manager.pid)], { env: p.env }).code).toBe(
      0,
    );
    // merge-lock acquire defaults to the manager's pid: here, the holder's own
    const acquired = sheepdog(
      ["merge-lock", "acquire", "--pid", String(manager.pid), "--item", "PR-9"],
      { env: p.env },
    );
    expect(acquired.code, acquired.stderr).toBe(0);
    const lockedAt = Date.now();
    // stale, and the merge younger than merge_max: left alone (a dry run, so nothing is written)
    const young = await dueFor(p.env, "merge_in_flight", staleDue(p.stateDir, 2000));
    expect(young.reason).toMatch(new RegExp(`merge lock is held by pid ${manager.pid} for PR-9`));
    await dueFor(p.env, "restart_stuck", lockedAt + 8000);
    const r = tick(p.env);
    expect(r.report.decision).toBe("restart_stuck");
    await waitFor(
      "the stuck holder to be stopped",
      () => manager.exitCode !== null || manager.signalCode !== null,
    );
    expect(ofType(p.stateDir, "manager_stopped")).toEqual([
      expect.objectContaining({ pid: manager.pid }),
    ]);
  });

  it("ten concurrent ticks start exactly one manager", async () => {
    const p = program(["--save-every", "2"]);
    const results = await Promise.all(
      Array.from({ length: 10 }, () => sheepdogAsync(["tick", "--json"], { env: p.env })),
    );
    for (const r of results) expect(r.code, r.stderr).toBe(0);
    const decisions = results.map((r) => JSON.parse(r.stdout).programs[0].decision as string);
    expect(decisions.filter((d) => d === "start")).toHaveLength(1);
    for (const d of decisions) expect(["start", "locked", "starting", "ok"]).toContain(d);
    expect(starts(p.stateDir)).toHaveLength(1);
    expect(existsSync(join(p.stateDir, "tick.lock"))).toBe(false);
  });

  it("a sleep gap (last tick 3h ago) restarts nothing; the next tick judges again", async () => {
    const p = program([], { stale_after: "2s", interval: "1m" });
    const manager = live();
    expect(sheepdog(["claim", "acquire", "--pid", String(manager.pid)], { env: p.env }).code).toBe(
      0,
    );
    await new Promise((r) => setTimeout(r, 2500));
    const slept = new Date(Date.now() - 3 * 3600_000).toISOString();
    writeFileSync(
      join(p.stateDir, "last-tick.json"),
      JSON.stringify({ at: slept, decision: "ok", reason: "", facts: null }),
    );
    const r = tick(p.env);
    expect(r.report.decision).toBe("ok");
    expect(r.report.reason).toMatch(/gap in the watchdog's runs is not counted/);
    expect(manager.exitCode).toBeNull();
    expect(ofType(p.stateDir, "manager_stopped")).toHaveLength(0);
    // Control: once stale_after of awake time passed, the same stale claim is a stuck manager:
    // the gap's credit ran out with the tick that found it, so 2 s after that tick.
    await dueFor(p.env, "restart_stuck", Date.parse(r.report.facts?.now as string) + 2000);
    const next = tick(p.env);
    expect(next.report.decision).toBe("restart_stuck");
    await waitFor("the stuck sleeper to be stopped", () => manager.signalCode !== null);
  });

  it("a sleep gap is remembered: later ticks do not count it either, awake time does", async () => {
    const p = program([], { stale_after: "3m6s", interval: "1m" });
    const manager = live();
    const pid = String(manager.pid);
    expect(sheepdog(["claim", "acquire", "--pid", pid], { env: p.env }).code).toBe(0);
    expect(sheepdog(["save", "--pid", pid], { env: p.env }).code).toBe(0);
    // The host slept: the manager's claim and last save are 2h old, the last tick 1h58m.
    const now = Date.now();
    const at = (ms: number) => new Date(ms).toISOString();
    const rewrite = (file: string, fields: Record<string, unknown>) => {
      const path = join(p.stateDir, file);
      writeFileSync(path, JSON.stringify({ ...JSON.parse(readFileSync(path, "utf8")), ...fields }));
    };
    rewrite("claim/holder.json", { claimed_at: at(now - 120 * 60_000) });
    rewrite("heartbeat.json", { at: at(now - 120 * 60_000) });
    const slept = at(now - 118 * 60_000);
    writeFileSync(
      join(p.stateDir, "last-tick.json"),
      JSON.stringify({ at: slept, decision: "ok", reason: "", facts: null }),
    );
    const first = tick(p.env);
    expect(first.report.decision).toBe("ok");
    expect(first.report.reason).toMatch(/1h57m gap in the watchdog's runs is not counted/);
    // The next tick, a moment later: the gap still counts against no manager.
    const second = tick(p.env);
    expect(second.report.decision).toBe("ok");
    expect(second.report.reason).toMatch(/1h57m gap in the watchdog's runs is not counted/);
    const gaps = [{ from: slept, to: first.report.facts?.now }];
    expect(second.report.facts?.gaps).toEqual(gaps);
    const last = JSON.parse(readFileSync(join(p.stateDir, "last-tick.json"), "utf8"));
    expect(last.gaps).toEqual(gaps);
    // Journaled once, by the tick that found it, for `sheepdog report`.
    const found = Date.parse(first.report.facts?.now as string);
    expect(ofType(p.stateDir, "sleep_gap")).toEqual([
      expect.objectContaining({
        from: slept,
        to: first.report.facts?.now,
        discounted_ms: found - Date.parse(slept) - 60_000,
      }),
    ]);
    expect(manager.exitCode).toBeNull();
    expect(ofType(p.stateDir, "manager_stopped")).toHaveLength(0);
    // Awake time counts: once the manager was silent for stale_after of it, it is stuck. Its
    // awake silence is 3m when the gap was found (2h silent, 1h57m of it the gap), so 6 s later.
    await dueFor(p.env, "restart_stuck", found + 6000);
    const r = tick(p.env);
    expect(r.report.decision).toBe("restart_stuck");
    const awake = 180_000 + Date.parse(r.report.facts?.now as string) - found;
    expect(awake).toBeGreaterThanOrEqual(186_000);
    expect(r.report.reason).toContain(`no save for ${formatDuration(awake)} (stale after 3m6s)`);
    expect(r.report.reason).toMatch(/1h57m gap in the watchdog's runs/);
    await waitFor("the stuck sleeper to be stopped", () => manager.signalCode !== null);
  });

  it("`resume` clears a no-progress stand-down: the pending hand-over starts a manager", async () => {
    const p = program(["--hand-over-after", "1", "--progress", "same"]);
    expect(tick(p.env).report.decision).toBe("start");
    for (let n = 1; n <= 3; n++) {
      await waitFor(
        `hand-over ${n}`,
        () => ofType(p.stateDir, "hand_over").length === n && !holder(p.stateDir),
      );
      expect(tick(p.env).report.decision).toBe(n < 3 ? "start_after_hand_over" : "stand_down");
    }
    expect(String(ofType(p.stateDir, "stood_down")[0]?.reason)).toMatch(
      /^no progress: the last 3 managers each handed over with progress "same"/,
    );
    expect(tick(p.env).report.decision).toBe("hold");
    expect(starts(p.stateDir)).toHaveLength(3);
    expect(sheepdog(["resume"], { env: p.env }).code).toBe(0);
    const r = tick(p.env);
    expect(r.report.decision).toBe("start_after_hand_over");
    expect(starts(p.stateDir)).toHaveLength(4);
    expect(lastStart(p.stateDir).planned).toBe(true);
    expect(ofType(p.stateDir, "stood_down")).toHaveLength(1);
    await waitForClaimBy(p.stateDir, lastStart(p.stateDir).pid);
  });

  it("--dry-run decides and prints but changes nothing (state dir hashed before and after)", async () => {
    const p = program();
    const dead = live();
    expect(sheepdog(["claim", "acquire", "--pid", String(dead.pid)], { env: p.env }).code).toBe(0);
    dead.kill("SIGKILL");
    await waitFor("the holder to die", () => dead.signalCode !== null);
    writeFileSync(
      join(p.stateDir, "last-tick.json"),
      JSON.stringify({ at: new Date().toISOString(), decision: "ok", reason: "", facts: null }),
    );
    const before = hashTree(p.stateDir);
    const human = sheepdog(["tick", "--dry-run"], { env: p.env });
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(
      /^demo +restart_dead +holder pid \d+ is dead; would break the claim, would start a manager \(planned\)\n$/,
    );
    const json = tick(p.env, ["--dry-run"]);
    expect(json.report).toMatchObject({
      decision: "restart_dead",
      actions: ["would break the claim", "would start a manager (planned)"],
    });
    expect(hashTree(p.stateDir)).toBe(before);
    // A program with no state at all stays without any.
    const fresh = program();
    expect(tick(fresh.env, ["--dry-run"]).report.decision).toBe("start");
    expect(existsSync(fresh.stateDir)).toBe(false);
  });

  it("--dry-run describes the same effects the real tick carries out and journals, in order", async () => {
    const p = program();
    const dead = live();
    expect(sheepdog(["claim", "acquire", "--pid", String(dead.pid)], { env: p.env }).code).toBe(0);
    dead.kill("SIGKILL");
    await waitFor("the holder to die", () => dead.signalCode !== null);

    const dry = tick(p.env, ["--dry-run"]).report;
    expect(dry.effects).toEqual(["break_claim", "start"]);
    expect(dry.actions).toEqual(["would break the claim", "would start a manager (planned)"]);

    const before = events(p.stateDir).length;
    const real = tick(p.env).report;
    expect(real.decision).toBe(dry.decision);
    expect(real.effects).toEqual(dry.effects);
    expect(real.actions).toHaveLength(dry.actions.length);
    // Every effect left its journal entry, in the same order.
    const JOURNALED: Record<string, string> = {
      unpause: "unpaused",
      pause: "paused",
      "stop:holder": "manager_stopped",
      break_claim: "claim_broken",
      stand_down: "stood_down",
      start: "manager_started",
    };
    const journaled = events(p.stateDir)
      .slice(before)
      .map((e) => e.type)
      .filter((t) => Object.values(JOURNALED).includes(t));
    expect(journaled).toEqual((dry.effects ?? []).map((e) => JOURNALED[e]));
  });

  it("a tick that throws journals tick_failed and exits 1 (and releases its lock)", () => {
    const p = managerProgram();
    const cfgPath = join(p.root, "program.json");
    writeFileSync(
      cfgPath,
      JSON.stringify({
        name: "demo",
        manager: { launcher: "command", command: ["/nonexistent/manager", "{prompt}"] },
      }),
    );
    // A failed start is journaled, not a failed tick; what throws is writing last-tick.json.
    mkdirSync(join(p.stateDir, "last-tick.json"), { recursive: true });
    const r = sheepdog(["tick"], { env: p.env });
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^demo +tick_failed +.*last-tick\.json/);
    expect(r.stderr).toMatch(/sheepdog tick: demo: .*last-tick\.json/);
    const [failed] = ofType(p.stateDir, "tick_failed");
    expect(String(failed?.error)).toMatch(/last-tick\.json/);
    expect(ofType(p.stateDir, "manager_start_failed")).toHaveLength(1);
    expect(existsSync(join(p.stateDir, "tick.lock"))).toBe(false);
    expect(ofType(p.stateDir, "manager_started")).toHaveLength(0);
  });

  it("a tick past its deadline journals tick_failed, exits 1, and its lock is broken next time", async () => {
    const p = program([], { stale_after: "1s" });
    // A stuck manager that ignores SIGTERM: stopping it takes the full grace.
    const stubborn = await stuckProcess();
    cleanups.push(() => stubborn.kill("SIGKILL"));
    expect(sheepdog(["claim", "acquire", "--pid", String(stubborn.pid)], { env: p.env }).code).toBe(
      0,
    );
    await new Promise((r) => setTimeout(r, 1200));
    const r = sheepdog(["tick"], { env: { ...p.env, SHEEPDOG_TICK_DEADLINE_MS: "2000" } });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/passed its deadline/);
    expect(String(ofType(p.stateDir, "tick_failed")[0]?.error)).toMatch(/deadline/);
    expect(existsSync(join(p.stateDir, "tick.lock"))).toBe(true);
    stubborn.kill("SIGKILL");
    const next = tick(p.env);
    expect(next.code).toBe(0);
    expect(ofType(p.stateDir, "tick_lock_broken")).toEqual([
      expect.objectContaining({ reason: expect.stringMatching(/is gone/) }),
    ]);
    expect(events(p.stateDir).length).toBeGreaterThan(0);
  });

  it("a tick lock this very process left (its release met a busy mutex) does not lock it out: the next pass takes it", () => {
    const p = program();
    mkdirSync(join(p.stateDir, "tick.lock"), { recursive: true, mode: 0o700 });
    chmodSync(p.stateDir, 0o700);
    const me = identityOf(process.pid);
    if (!me) throw new Error("cannot read this process's identity");
    const at = new Date().toISOString();
    writeFileSync(join(p.stateDir, "tick.lock", "holder.json"), JSON.stringify({ ...me, at }));
    const lock = acquireTickLock(p.stateDir, 240_000);
    expect("release" in lock).toBe(true);
    expect(ofType(p.stateDir, "tick_lock_broken")).toEqual([
      expect.objectContaining({ pid: process.pid, reason: "this process left it" }),
    ]);
    if ("release" in lock) lock.release();
    expect(existsSync(join(p.stateDir, "tick.lock"))).toBe(false);
  });

  it("a tick lock whose holder is alive but older than the tick deadline is broken, journaled, and the tick goes on", () => {
    const p = program();
    // A live process stands in for a tick that hangs: it holds tick.lock/ and never lets go.
    const hung = live();
    const id = identityOf(hung.pid as number);
    if (!id) throw new Error("cannot read the sleeper's identity");
    mkdirSync(join(p.stateDir, "tick.lock"), { recursive: true, mode: 0o700 });
    chmodSync(p.stateDir, 0o700);
    const lockPath = join(p.stateDir, "tick.lock", "holder.json");
    const lockAt = (msAgo: number) => {
      const at = new Date(Date.now() - msAgo).toISOString();
      writeFileSync(lockPath, JSON.stringify({ ...id, at }));
      return at;
    };
    // Control: the same holder inside the deadline (4 min) holds the lock.
    lockAt(60_000);
    const held = tick(p.env);
    expect(held.code, held.stderr).toBe(0);
    expect(held.report.decision).toBe("locked");
    expect(held.report.reason).toBe(`another tick (pid ${hung.pid}) is working on it`);
    expect(ofType(p.stateDir, "tick_lock_broken")).toEqual([]);
    expect(starts(p.stateDir)).toHaveLength(0);
    // Just past the deadline (4 min), alive: the tick may still be finishing (it ends itself at
    // its deadline), so it still holds for a minute more.
    lockAt(4.5 * 60_000);
    expect(tick(p.env).report.decision).toBe("locked");
    // A minute past the deadline, alive or not, it is hung: broken.
    const at = lockAt(5.5 * 60_000);
    const r = tick(p.env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.report.decision).toBe("start");
    expect(ofType(p.stateDir, "tick_lock_broken")).toEqual([
      expect.objectContaining({
        pid: hung.pid,
        locked_at: at,
        reason: expect.stringMatching(/^it is older than the tick deadline \(33\ds\)$/),
      }),
    ]);
    const types = events(p.stateDir).map((e) => e.type);
    expect(types.indexOf("tick_lock_broken")).toBeLessThan(types.indexOf("manager_started"));
    expect(starts(p.stateDir)).toHaveLength(1);
    // The breaking tick released its own lock; breaking a lock never touches its holder.
    expect(existsSync(join(p.stateDir, "tick.lock"))).toBe(false);
    expect(hung.exitCode).toBeNull();
    expect(hung.signalCode).toBeNull();
  });
});
