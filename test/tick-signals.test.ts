// A tick stopped from outside (systemd's TimeoutStartSec, launchd unload, a person) is not silent:
// it journals tick_failed naming the signal, releases its tick lock, pages, and exits 1.
import type { ChildProcess } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { sheepdog, sheepdogAsync, spawnCli } from "./helpers/cli.js";
import { armFaultPoint } from "./helpers/fault-point.js";
import { useNtfyServer } from "./helpers/ntfy-server.js";
import { killStarted, managerProgram, ofType, stuckProcess, waitFor } from "./helpers/watchdog.js";

const server = useNtfyServer();

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

function program(watchdog: Record<string, unknown> = {}, name = "demo") {
  const p = managerProgram(
    [],
    { stale_after: "1s", ...watchdog },
    { page: { ntfy: { server: server.url, topic: `${name}-alerts` } } },
    name,
  );
  cleanups.push(() => killStarted(p.stateDir));
  return p;
}

/** Two programs, alpha and beta, under alpha's $SHEEPDOG_HOME (for tick --all). */
function alphaAndBeta() {
  const a = program({}, "alpha");
  const b = program({}, "beta");
  const env = { ...a.env, SHEEPDOG_HOME: a.home };
  const betaRoot = join(a.home, "beta");
  mkdirSync(betaRoot);
  copyFileSync(join(b.root, "program.json"), join(betaRoot, "program.json"));
  const betaState = join(betaRoot, ".sheepdog");
  cleanups.push(() => killStarted(betaState));
  return { a, env, betaRoot, betaState };
}

function track(child: ChildProcess): ChildProcess {
  cleanups.push(() => child.kill("SIGKILL"));
  return child;
}

/**
 * A live process holding the program's claim, already stale. `onTerm`: what it does on
 * SIGTERM (by default nothing: a stuck manager the tick must wait the whole grace for).
 */
async function stuckHolder(env: NodeJS.ProcessEnv, onTerm = "") {
  const child = track(await stuckProcess(onTerm));
  const r = sheepdog(["claim", "acquire", "--pid", String(child.pid)], { env });
  expect(r.code, r.stderr).toBe(0);
  return child;
}

/** `sheepdog tick ARGS` in the background, with its pid and its end. */
function tickInBackground(env: NodeJS.ProcessEnv, args: string[] = []) {
  // Stops itself once it has sent the stuck holder SIGTERM (see signalMidStop).
  const midStop = armFaultPoint("stop.term-sent");
  const run = spawnCli(["tick", ...args], { env: { ...env, ...midStop.env } });
  track(run.child);
  return { child: run.child, done: run.done, midStop };
}

/**
 * The tick mid-act: it holds its lock and has sent the stuck holder SIGTERM (the fault point
 * stops it there, at the start of the 10 s grace). Then it gets `signal` and goes on.
 */
async function signalMidStop(
  t: ReturnType<typeof tickInBackground>,
  stateDir: string,
  signal: NodeJS.Signals,
) {
  expect(await t.midStop.reached(t.child), "the tick reached its stop of the holder").toBe(true);
  expect(existsSync(join(stateDir, "tick.lock"))).toBe(true);
  t.child.kill(signal);
  t.child.kill("SIGCONT");
}

describe("tick: killed from outside", () => {
  it.each(["SIGTERM", "SIGINT", "SIGHUP"] as const)(
    "%s mid-act (stopping a stuck manager): tick_failed naming it, lock released, paged, exit 1",
    async (signal) => {
      const p = program();
      const holder = await stuckHolder(p.env);
      await new Promise((r) => setTimeout(r, 1200)); // the heartbeat goes stale (1s)
      const t = tickInBackground(p.env);
      await signalMidStop(t, p.stateDir, signal);
      const r = await t.done;
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`killed by ${signal}`);
      const failed = ofType(p.stateDir, "tick_failed");
      expect(failed).toHaveLength(1);
      expect(String(failed[0]?.error)).toMatch(new RegExp(`^killed by ${signal}`));
      expect(existsSync(join(p.stateDir, "tick.lock"))).toBe(false);
      // the pages hook was tried: the failure reached the ntfy stand-in
      expect(server.received.some((m) => m.topic === "demo-alerts" && m.priority === 4)).toBe(true);
      // The next tick is not `locked`, and finds no lock to break.
      holder.kill("SIGKILL");
      await waitFor("the holder to die", () => holder.exitCode !== null || holder.signalCode);
      const next = await sheepdogAsync(["tick", "--json"], { env: p.env });
      const decision = JSON.parse(next.stdout).programs[0].decision;
      expect(decision).not.toBe("locked");
      expect(decision).toBe("restart_dead");
      expect(ofType(p.stateDir, "tick_lock_broken")).toEqual([]);
      server.received.length = 0;
    },
  );

  it("the lock is not released when another tick holds it (only our own lock goes)", async () => {
    const p = program();
    await stuckHolder(p.env);
    await new Promise((r) => setTimeout(r, 1200));
    const first = tickInBackground(p.env);
    expect(await first.midStop.reached(first.child), "the first tick reached its stop").toBe(true);
    // A second tick finds the lock held by a live tick, decides `locked`, and is killed after.
    const second = await sheepdogAsync(["tick", "--json"], { env: p.env });
    expect(JSON.parse(second.stdout).programs[0].decision).toBe("locked");
    expect(existsSync(join(p.stateDir, "tick.lock"))).toBe(true);
    first.child.kill("SIGTERM");
    first.child.kill("SIGCONT");
    expect((await first.done).code).toBe(1);
    expect(existsSync(join(p.stateDir, "tick.lock"))).toBe(false);
  });

  it("tick --all: each program pass has its own deadline", async () => {
    // Two programs whose stuck manager takes ~3.5 s to stop: each pass fits a 6 s deadline,
    // the two together do not.
    const { a, env, betaRoot } = alphaAndBeta();
    const slow = "setTimeout(() => process.exit(0), 3500)";
    await stuckHolder({ ...env, SHEEPDOG_PROGRAM: a.root }, slow);
    await stuckHolder({ ...env, SHEEPDOG_PROGRAM: betaRoot }, slow);
    await new Promise((r) => setTimeout(r, 1200));
    // async: the ntfy stand-in in this process must answer the tick's pages meanwhile
    const r = await sheepdogAsync(["tick", "--all", "--json"], {
      env: { ...env, SHEEPDOG_TICK_DEADLINE_MS: "6000" },
    });
    expect(r.stderr).not.toMatch(/deadline/);
    expect(r.code).toBe(0);
    const decisions = JSON.parse(r.stdout).programs.map((x: { decision: string }) => x.decision);
    expect(decisions).toEqual(["restart_stuck", "restart_stuck"]);
    expect(ofType(a.stateDir, "tick_failed")).toEqual([]);
    expect(ofType(join(betaRoot, ".sheepdog"), "tick_failed")).toEqual([]);
  });

  it("tick --all: a pass given up at its deadline is journaled and paged alone; the next program still gets its pass", async () => {
    // One pass at a time: alpha's stuck manager ignores TERM (the full grace), past a 2 s deadline.
    const { a, env, betaState } = alphaAndBeta();
    await stuckHolder({ ...env, SHEEPDOG_PROGRAM: a.root });
    await new Promise((r) => setTimeout(r, 1200));
    const r = await sheepdogAsync(["tick", "--all", "--json"], {
      env: { ...env, SHEEPDOG_TICK_DEADLINE_MS: "2000", SHEEPDOG_TICK_CONCURRENCY: "1" },
    });
    expect(r.code).toBe(1);
    const programs = JSON.parse(r.stdout).programs as { program: string; decision: string }[];
    expect(programs.map((x) => [x.program, x.decision])).toEqual([
      ["alpha", "tick_failed"],
      ["beta", "start"],
    ]);
    expect(ofType(a.stateDir, "tick_failed")).toEqual([
      expect.objectContaining({ error: "the tick passed its deadline (2s)" }),
    ]);
    // Its lock stays for the next tick to break; beta's pass ran whole and released its own.
    expect(existsSync(join(a.stateDir, "tick.lock"))).toBe(true);
    expect(existsSync(join(betaState, "tick.lock"))).toBe(false);
    expect(ofType(betaState, "tick_failed")).toEqual([]);
    expect(ofType(betaState, "manager_started")).toHaveLength(1);
    await waitFor("alpha's page", () =>
      server.received.some((m) => m.topic === "alpha-alerts" && /deadline/.test(m.message)),
    );
    expect(
      server.received.filter((m) => m.topic === "beta-alerts" && /deadline/.test(m.message)),
    ).toEqual([]);
  });

  it("tick --all: a run that gave up a pass ends soon after, whatever is still in flight (the given-up pass may still act, and its lock is broken a minute past its deadline)", async () => {
    // One pass at a time, both stuck managers ignore TERM: alpha is given up at 2 s, beta's pass
    // is still in its stop's grace when the run's grace after the give-up (1 s here) ends.
    const { a, env, betaRoot, betaState } = alphaAndBeta();
    await stuckHolder({ ...env, SHEEPDOG_PROGRAM: a.root });
    await stuckHolder({ ...env, SHEEPDOG_PROGRAM: betaRoot });
    await new Promise((r) => setTimeout(r, 1200));
    const r = await sheepdogAsync(["tick", "--all", "--json"], {
      env: {
        ...env,
        SHEEPDOG_TICK_DEADLINE_MS: "2000",
        SHEEPDOG_TICK_CONCURRENCY: "1",
        SHEEPDOG_TICK_GIVEN_UP_GRACE_MS: "1000",
      },
    });
    expect(r.code).toBe(1);
    expect(ofType(a.stateDir, "tick_failed")).toEqual([
      expect.objectContaining({ error: "the tick passed its deadline (2s)" }),
    ]);
    expect(ofType(betaState, "tick_failed")).toEqual([
      expect.objectContaining({
        error:
          "the tick ended early: alpha's pass, given up at its deadline, was still running 1 s later",
      }),
    ]);
    expect(r.stderr).toMatch(/the tick ended early/);
  });
});
