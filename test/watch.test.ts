// `sheepdog watch` (DESIGN §12): the tick's very pass, run at once when a manager dies, when the
// files say something changed, and on the interval; real managers, real files, real signals.
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { identityOf, machineId } from "../src/process/identity.js";
import { sheepdog, sleeper, tempDir } from "./helpers/cli.js";
import { startWatch, watchReady } from "./helpers/watch.js";
import {
  cleanedUp,
  FAKE_MANAGER,
  holder,
  isAlive,
  killStarted,
  ofType,
  stuckProcess,
  waitFor,
} from "./helpers/watchdog.js";

const t = cleanedUp();
const LONG = 90_000;

/** Waits for a claim by a pid other than `not`, and returns it. */
async function newClaim(stateDir: string, not?: number) {
  return waitFor(
    "a new claim",
    () => {
      const h = holder(stateDir);
      return h && h.pid !== not && isAlive(h.pid, h.start_time) ? h : null;
    },
    LONG,
  );
}

/** The started managers still alive (by exact pid + start time). */
function liveStarted(stateDir: string): number[] {
  return ofType(stateDir, "manager_started")
    .filter((e) => typeof e.pid === "number" && typeof e.start_time === "string")
    .filter((e) => isAlive(e.pid as number, e.start_time as string))
    .map((e) => e.pid as number);
}

describe("watch: reacts without waiting for the interval", () => {
  it("kill -9 of the manager: the death poll runs a pass and a new manager claims", {
    timeout: 120_000,
  }, async () => {
    // one save right after claiming, then none: no save of its own can be in flight at the kill
    // (a `sheepdog save` it started outlives it and would be a file event of its own)
    const p = t.program(["--save-every", "3600"]);
    const w = startWatch(p.env, ["--json"], t.cleanups);
    const first = await newClaim(p.stateDir);
    await waitFor("its first save", () =>
      ofType(p.stateDir, "saved").some((e) => e.pid === first.pid),
    );
    await waitFor("the watcher to have seen the save", () =>
      w.passes().some((x) => x.programs[0]?.reason.includes("last save")),
    );
    // The save's files land in more than one event (journal, heartbeat, ledger): kill only
    // once a pass has begun after the last of them was written, so no file event of the save
    // can still be pending to see the death.
    const lastWrite = () =>
      Math.max(
        ...["journal.jsonl", "heartbeat.json", "claim"].map((f) => {
          try {
            return statSync(join(p.stateDir, f)).mtimeMs;
          } catch {
            return 0;
          }
        }),
      );
    await waitFor("a pass begun after the save's last write", () =>
      w.passes().some((x) => Date.parse(x.at) > lastWrite()),
    );
    process.kill(first.pid, "SIGKILL");
    const second = await newClaim(p.stateDir, first.pid);
    expect(second.pid).not.toBe(first.pid);
    const restart = w.passes().find((x) => x.programs[0]?.decision === "restart_dead");
    // the interval is an hour: only the death poll can have run this pass
    expect(restart?.trigger).toBe(`pid ${first.pid} is gone`);
    expect(await w.stop()).toBe(0);
    expect(existsSync(join(p.stateDir, "tick.lock"))).toBe(false);
  });

  it("a hand-over: the journal event runs a pass that starts the successor (planned)", {
    timeout: 120_000,
  }, async () => {
    // --linger: it stays alive after handing over (as a session in a pane does), so its exit
    // cannot be what runs the pass: only the hand-over's files can
    const p = t.program(["--hand-over-after", "2", "--linger"]);
    const w = startWatch(p.env, ["--json"], t.cleanups);
    const first = await newClaim(p.stateDir);
    await waitFor("the hand-over", () => ofType(p.stateDir, "hand_over").length > 0, LONG);
    const next = await newClaim(p.stateDir, first.pid);
    const started = ofType(p.stateDir, "manager_started").find((e) => e.pid === next.pid);
    expect(started?.planned).toBe(true);
    const pass = w.passes().find((x) => x.programs[0]?.decision === "start_after_hand_over");
    expect(pass?.trigger).toMatch(/journal appended|claim or heartbeat changed/);
    // the pass stopped the manager that handed over before starting its successor
    expect(pass?.programs[0]?.actions.join(" ")).toContain(
      `stopped pid ${first.pid}, which had handed over`,
    );
    await w.stop();
  });

  it("a stale heartbeat: restart_stuck on the interval, with no file event", {
    timeout: 120_000,
  }, async () => {
    const p = t.program(["--hang-after", "1"], { interval: "2s", stale_after: "3s" });
    const w = startWatch(p.env, ["--json"], t.cleanups);
    const first = await newClaim(p.stateDir);
    const second = await newClaim(p.stateDir, first.pid);
    const stuck = w.passes().find((x) => x.programs[0]?.decision === "restart_stuck");
    // The interval's slot, or the moment stale_after came due, whichever came first.
    expect(["schedule", "a wait ended"]).toContain(stuck?.trigger);
    expect(ofType(p.stateDir, "manager_stopped").some((e) => e.pid === first.pid)).toBe(true);
    expect(second.pid).not.toBe(first.pid);
    await w.stop();
  });

  it("the rules' own moments wake a pass: stale_after comes due an hour before the next slot", {
    timeout: 120_000,
  }, async () => {
    const p = t.program(["--hang-after", "1"], { interval: "1h", stale_after: "3s" });
    const w = startWatch(p.env, ["--json"], t.cleanups);
    const first = await newClaim(p.stateDir);
    const second = await newClaim(p.stateDir, first.pid);
    const stuck = w.passes().find((x) => x.programs[0]?.decision === "restart_stuck");
    expect(stuck?.trigger).toBe("a wait ended");
    expect(second.pid).not.toBe(first.pid);
    await w.stop();
  });

  it("a pause ends on time: the pass runs at the pause's end, not at the next interval", {
    timeout: 120_000,
  }, async () => {
    const p = t.program();
    expect(sheepdog(["pause", "--until", "4s"], { env: p.env }).code).toBe(0);
    const w = startWatch(p.env, ["--json"], t.cleanups);
    await watchReady(w);
    expect(w.passes()[0]?.programs[0]?.decision).toBe("wait_pause");
    await newClaim(p.stateDir);
    expect(ofType(p.stateDir, "unpaused")).toHaveLength(1);
    const resumed = w.passes().find((x) => x.programs[0]?.decision !== "wait_pause");
    expect(resumed?.trigger).toBe("a wait ended");
    await w.stop();
  });

  it("--all: a program directory added later is picked up, a removed one dropped", {
    timeout: 120_000,
  }, async () => {
    const home = tempDir();
    const env = { SHEEPDOG_HOME: home, SHEEPDOG_STATE_DIR: join(home, ".state") };
    const w = startWatch(env, ["--all"], t.cleanups);
    await waitFor("the watcher to start", () => w.stdout().includes("watch started"), LONG);
    const root = join(home, "late");
    mkdirSync(root);
    const stateDir = join(root, ".sheepdog");
    t.cleanups.push(() => killStarted(stateDir));
    writeFileSync(
      join(root, "program.json"),
      JSON.stringify({
        name: "late",
        manager: {
          launcher: "command",
          command: [process.execPath, FAKE_MANAGER, "{prompt}"],
          env: { SHEEPDOG_CLI: process.env.SHEEPDOG_CLI ?? join(process.cwd(), "dist/cli.cjs") },
        },
        watchdog: { interval: "1h", stale_after: "1h", claim_grace: "1h" },
      }),
    );
    await newClaim(stateDir);
    expect(w.stdout()).toContain(`watching ${root}`);
    // The fake manager may claim before the pass that started it has printed its line.
    await waitFor("the start's line", () => /late +start +/.test(w.stdout()), LONG);
    rmSync(join(root, "program.json"));
    await waitFor(
      "the program dropped",
      () => w.stdout().includes(`no longer watching ${root}`),
      LONG,
    );
    await w.stop();
  });
});

describe("watch: doctor sees it", () => {
  const watcherCheck = (env: NodeJS.ProcessEnv) => {
    const r = sheepdog(["doctor", "--json"], { env });
    const checks = JSON.parse(r.stdout).checks as {
      check: string;
      status: string;
      detail: string;
    }[];
    return checks.find((c) => c.check === "watcher");
  };

  it("running, stopped cleanly, killed", { timeout: 120_000 }, async () => {
    const p = t.program();
    expect(watcherCheck(p.env)?.detail).toMatch(/^no watcher/);
    const w = startWatch(p.env, [], t.cleanups);
    await newClaim(p.stateDir);
    await waitFor("doctor to see the watcher", () =>
      watcherCheck(p.env)?.detail.startsWith(`watched by pid ${w.child.pid} `),
    );
    expect(watcherCheck(p.env)?.status).toBe("ok");
    expect(await w.stop()).toBe(0);
    expect(watcherCheck(p.env)).toMatchObject({
      status: "ok",
      detail: expect.stringMatching(/^no watcher/),
    });
    const again = startWatch(p.env, [], t.cleanups);
    await waitFor("doctor to see the second watcher", () =>
      watcherCheck(p.env)?.detail.startsWith(`watched by pid ${again.child.pid} `),
    );
    again.child.kill("SIGKILL");
    await again.exited;
    expect(watcherCheck(p.env)).toMatchObject({
      status: "warn",
      detail: expect.stringContaining(`watcher pid ${again.child.pid} died without stopping`),
    });
  });
});

describe("watch: never two managers", () => {
  it("a watcher, a second watcher and timer ticks on one program, many kill rounds", {
    timeout: 300_000,
  }, async () => {
    // every kill is an unplanned start: the crash-loop guard must not stand the program down
    const p = t.program([], { crash_loop: { starts: 100, within: "1h" } });
    const a = startWatch(p.env, [], t.cleanups);
    const b = startWatch(p.env, [], t.cleanups);
    let last = await newClaim(p.stateDir);
    for (let round = 0; round < 6; round++) {
      process.kill(last.pid, "SIGKILL");
      // timer ticks racing the two watchers' passes
      const ticks = Array.from({ length: 4 }, () =>
        spawn(process.execPath, [process.env.SHEEPDOG_CLI ?? "dist/cli.cjs", "tick"], {
          env: { ...process.env, ...p.env },
          stdio: "ignore",
        }),
      );
      await Promise.all(ticks.map((c) => new Promise((r) => c.on("close", r))));
      last = await newClaim(p.stateDir, last.pid);
      expect(liveStarted(p.stateDir)).toEqual([last.pid]);
    }
    const starts = ofType(p.stateDir, "manager_started");
    // the first start and one replacement a round: nothing more
    expect(starts).toHaveLength(7);
    await Promise.all([a.stop(), b.stop()]);
    expect(existsSync(join(p.stateDir, "tick.lock"))).toBe(false);
  });
});

describe("watch: failures and signals", () => {
  it("a pass that throws is journaled tick_failed and the watcher goes on", {
    timeout: 120_000,
  }, async () => {
    const p = t.program();
    // A live holder, so the pass decides `ok`; a folder where last-tick.json goes makes it throw.
    const holderProc = sleeper();
    t.cleanups.push(() => holderProc.kill("SIGKILL"));
    const acquired = sheepdog(["claim", "acquire", "--pid", String(holderProc.pid)], {
      env: p.env,
    });
    expect(acquired.code, acquired.stderr).toBe(0);
    mkdirSync(join(p.stateDir, "last-tick.json"));
    const w = startWatch(p.env, [], t.cleanups);
    await waitFor("tick_failed", () => ofType(p.stateDir, "tick_failed").length > 0, LONG);
    expect(String(ofType(p.stateDir, "tick_failed")[0]?.error)).toMatch(/last-tick\.json/);
    await waitFor("the failure logged", () => /demo +tick_failed/.test(w.stdout()), LONG);
    expect(existsSync(join(p.stateDir, "tick.lock"))).toBe(false);
    // still alive: once the folder is gone, the holder's death is seen and a manager starts
    rmSync(join(p.stateDir, "last-tick.json"), { recursive: true });
    holderProc.kill("SIGKILL");
    await newClaim(p.stateDir, holderProc.pid);
    expect(w.child.exitCode).toBe(null);
    // its own tick_failed lines did not run pass after pass
    expect(ofType(p.stateDir, "tick_failed").length).toBeLessThan(5);
    expect(await w.stop()).toBe(0);
  });

  /** A live holder that ignores SIGTERM, so the watcher's restart_stuck pass takes 10 s. */
  async function stuckHolder(env: NodeJS.ProcessEnv) {
    const child = await stuckProcess();
    t.cleanups.push(() => child.kill("SIGKILL"));
    expect(sheepdog(["claim", "acquire", "--pid", String(child.pid)], { env }).code).toBe(0);
    return child;
  }

  it("SIGTERM mid-pass: the pass finishes, no tick.lock is left, exit 0", {
    timeout: 120_000,
  }, async () => {
    const p = t.program([], { stale_after: "1s", interval: "1s" });
    await stuckHolder(p.env);
    const w = startWatch(p.env, [], t.cleanups);
    await waitFor("the pass to be mid-stop", () => existsSync(join(p.stateDir, "evidence")), LONG);
    expect(existsSync(join(p.stateDir, "tick.lock"))).toBe(true);
    expect(await w.stop()).toBe(0);
    expect(existsSync(join(p.stateDir, "tick.lock"))).toBe(false);
    // finished, not half-done: the stuck one stopped, its successor journaled
    expect(ofType(p.stateDir, "manager_stopped")).toHaveLength(1);
    expect(ofType(p.stateDir, "manager_started")).toHaveLength(1);
    expect(ofType(p.stateDir, "tick_failed")).toEqual([]);
  });

  it("a pass past its deadline ends the watcher, the one shutdown a signal takes: tick_failed, lock released, exit 1", {
    timeout: 120_000,
  }, async () => {
    const p = t.program([], { stale_after: "1s", interval: "1s" });
    await stuckHolder(p.env);
    // The stuck holder ignores TERM, so its stop takes the 10 s grace: past a 3 s deadline.
    const w = startWatch({ ...p.env, SHEEPDOG_TICK_DEADLINE_MS: "3000" }, [], t.cleanups);
    expect(await w.exited).toBe(1);
    expect(w.stderr()).toContain("sheepdog watch: demo: the pass passed its deadline (3s)");
    expect(ofType(p.stateDir, "tick_failed")).toEqual([
      expect.objectContaining({ error: "demo: the pass passed its deadline (3s)" }),
    ]);
    expect(existsSync(join(p.stateDir, "tick.lock"))).toBe(false);
    // Given up, it acted no more: no successor started beside the stuck one.
    expect(ofType(p.stateDir, "manager_started")).toEqual([]);
  });

  it("SIGTERM mid-pass past the stop wait: tick_failed, lock released, exit 1", {
    timeout: 120_000,
  }, async () => {
    const p = t.program([], { stale_after: "1s", interval: "1s" });
    await stuckHolder(p.env);
    const w = startWatch({ ...p.env, SHEEPDOG_WATCH_STOP_MS: "300" }, [], t.cleanups);
    await waitFor("the pass to be mid-stop", () => existsSync(join(p.stateDir, "evidence")), LONG);
    expect(await w.stop()).toBe(1);
    expect(existsSync(join(p.stateDir, "tick.lock"))).toBe(false);
    expect(String(ofType(p.stateDir, "tick_failed")[0]?.error)).toMatch(/SIGTERM/);
    expect(ofType(p.stateDir, "manager_started")).toEqual([]);
  });
});

describe("watch: the records of watchers that are over", () => {
  it("a starting watcher removes the records of stopped and dead watchers, not of live or foreign ones", {
    timeout: 120_000,
  }, async () => {
    const p = t.program(["--save-every", "3600"]);
    const dir = join(p.env.SHEEPDOG_STATE_DIR as string, "watchers");
    mkdirSync(dir, { recursive: true });
    const dead = spawn(process.execPath, ["-e", "0"]);
    const deadId = await waitFor("its identity", () => identityOf(dead.pid as number));
    await new Promise((r) => (dead.exitCode === null ? dead.once("exit", r) : r(null)));
    const liveId = identityOf(t.live().pid as number);
    const base = {
      started_at: "2026-11-30T00:00:00.000Z",
      last_pass_at: null,
      passes: 0,
      programs: [],
    };
    const here = { start_time: "linux:x:1", machine_id: machineId() };
    const records = {
      dead: { ...base, ...deadId, stopped_at: null },
      stopped: { ...base, ...here, pid: 9_999_991, stopped_at: "2026-11-30T01:00:00.000Z" },
      live: { ...base, ...liveId, stopped_at: null },
      foreign: { ...base, ...here, pid: 9_999_992, machine_id: "another", stopped_at: null },
    };
    for (const r of Object.values(records))
      writeFileSync(join(dir, `${r.pid}.json`), JSON.stringify(r));
    const w = startWatch(p.env, ["--json"], t.cleanups);
    await watchReady(w);
    await waitFor("its own record", () => existsSync(join(dir, `${w.child.pid}.json`)));
    const kept = (r: { pid?: number }) => existsSync(join(dir, `${r.pid}.json`));
    expect(kept(records.dead)).toBe(false);
    expect(kept(records.stopped)).toBe(false);
    expect(kept(records.live)).toBe(true);
    expect(kept(records.foreign)).toBe(true);
    expect(await w.stop()).toBe(0);
  });
});
