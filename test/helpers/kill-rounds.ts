// Kill -9 at every step (issue 14), shared by test/faults-kill-*.test.ts: each manager-side and
// watchdog command is SIGKILLed at named
// steps (SHEEPDOG_FAULT_POINT stops it there) and after random delays (a seeded PRNG), against a
// real program: the fake manager under the command launcher, real git with bare remotes for the
// ledger and the merge lock. After every kill the invariants of test/helpers/invariants.ts must
// hold, and the ticks that follow must converge to one healthy manager.
//   SHEEPDOG_FAULT_ROUNDS=N   random-delay rounds per command (default 1)
//   SHEEPDOG_FAULT_SEED=S     replay a run (the seed is printed, and named in every failure)
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appendEvent } from "../../src/journal/journal.js";
import { CLI, sheepdog, tempDir } from "./cli.js";
import { armFaultPoint } from "./fault-point.js";
import {
  checkAfterKill,
  checkLocks,
  converge,
  healthy,
  killManagers,
  unpushed,
  type Watched,
} from "./invariants.js";
import { bareRemote, gitEnv, gitTry, workRepo } from "./manager-side.js";
import { waitFor } from "./poll.js";
import { startWatch } from "./watch.js";
import { holder, isAlive, managerProgram } from "./watchdog.js";

export const SEED = Number(process.env.SHEEPDOG_FAULT_SEED) || Date.now() % 2 ** 31;
const ROUNDS = Number(process.env.SHEEPDOG_FAULT_ROUNDS) || 1;

/** mulberry32: a small seeded PRNG, so a failing run can be replayed. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
/** Seeded per file in killSuite, so a seed replays each file's rounds exactly. */
let random = prng(SEED);

interface World extends Watched {
  ledger: string;
  ledgerRemote: string;
  shas: Set<string>;
  sleepers: ChildProcess[];
}

function world(): World {
  const home = tempDir("sheepdog-faults-");
  const genv = gitEnv(home);
  const ledgerRemote = bareRemote(genv);
  const appRemote = bareRemote(genv);
  const app = workRepo(join(home, "app"), genv, appRemote);
  const p = managerProgram(
    ["--save-every", "2"],
    { crash_loop: { starts: 1000, within: "1h" }, no_progress_hand_overs: 1000 },
    { ledger: { repo: "ledger" }, merge_lock: { repo: app, remote: "origin" } },
  );
  const ledger = workRepo(join(p.root, "ledger"), genv, ledgerRemote);
  writeFileSync(join(ledger, "LEDGER.md"), "# ledger\n");
  const clockFile = join(home, "clock-step");
  writeFileSync(clockFile, "0");
  const env = { ...p.env, ...genv, SHEEPDOG_CLOCK_FILE: clockFile };
  return { ...p, env, clockFile, ledger, ledgerRemote, shas: new Set(), sleepers: [] };
}

/** The worlds of the file running now (a worker runs files one after another). */
const worlds: World[] = [];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A live process to hold a claim or a merge lock (it never saves). */
function sleeper(w: World): ChildProcess {
  const s = spawn("sleep", ["600"], { stdio: "ignore" });
  w.sleepers.push(s);
  return s;
}
async function endSleepers(w: World): Promise<void> {
  for (const s of w.sleepers.splice(0)) {
    s.kill("SIGKILL");
    if (s.exitCode === null && s.signalCode === null) await new Promise((r) => s.once("exit", r));
  }
}

/** Kills the claim holder (a fake manager) and waits until it is dead. */
async function killHolder(w: World): Promise<void> {
  const h = holder(w.stateDir);
  if (!h) return;
  try {
    process.kill(h.pid, "SIGKILL");
  } catch {
    return;
  }
  await waitFor("the holder to die", () => !isAlive(h.pid, h.start_time), 2000, 20).catch(() => {});
}

type Kill = { point: string } | { delayMs: number };

/**
 * Runs `sheepdog ARGS` and SIGKILLs it: at the named fault point (it stops itself there), or
 * after a delay. Returns whether it was killed (false: it finished first / never got there).
 */
async function runKilled(w: World, args: string[], kill: Kill): Promise<boolean> {
  const armed = "point" in kill ? armFaultPoint(kill.point) : null;
  const child = spawn(process.execPath, [CLI, ...args], {
    env: { ...process.env, ...w.env, ...armed?.env },
    stdio: "ignore",
  });
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  let done = false;
  void exited.then(() => {
    done = true;
  });
  if ("delayMs" in kill) await Promise.race([exited, sleep(kill.delayMs)]);
  else if (!(await armed?.reached(child, 12_000))) return false;
  if (done) return false;
  child.kill("SIGKILL");
  await exited;
  return true;
}

export interface Op {
  name: string;
  /** Sets the program up for the command and returns its argv. */
  prepare(w: World): Promise<string[]>;
  /** Puts things right the way a person or the manager would (after the checks at the kill). */
  after?(w: World): Promise<void> | void;
  points: string[];
  maxDelayMs: number;
}

function ledgerChange(w: World): void {
  writeFileSync(join(w.ledger, `item-${Math.floor(random() * 1e9)}.md`), "done\n");
}

const mergeLockShow = (w: World) =>
  JSON.parse(sheepdog(["merge-lock", "show", "--json"], { env: w.env }).stdout) as {
    held: boolean;
    liveness?: string;
  };

/** A merge lock left by a dead holder is never in the way for good: release --stale clears it. */
async function mergeLockClears(w: World): Promise<void> {
  await endSleepers(w);
  const seen = mergeLockShow(w);
  if (seen.held) {
    expect(seen.liveness).toBe("dead");
    const r = sheepdog(["merge-lock", "release", "--stale"], { env: w.env });
    expect(r.code, r.stderr).toBe(0);
  }
  expect(mergeLockShow(w).held).toBe(false);
}

/** Waits (up to 60 s) for one live manager holding the claim; returns what still stands in the way. */
async function settled(w: World): Promise<string[]> {
  // 60 s: the whole suite runs beside it, and a loaded host is slow to start a node process.
  await waitFor("one healthy manager", () => healthy(w).length === 0, 60_000).catch(() => {});
  return healthy(w);
}

/** The journal's last lines, for a failure's message. */
function journalEnd(w: World): string {
  try {
    const lines = readFileSync(join(w.stateDir, "journal.jsonl"), "utf8").trimEnd().split("\n");
    return `\nthe journal's end:\n${lines.slice(-15).join("\n")}`;
  } catch {
    return "";
  }
}

/**
 * A watcher started after the kill settles the program by itself (no tick), and brings the next
 * killed holder back; then it stops cleanly.
 */
async function watcherConverges(w: World): Promise<void> {
  const cleanups: (() => void)[] = [];
  const watch = startWatch(w.env, ["--json"], cleanups);
  try {
    expect(await settled(w), `a watcher after the kill: ${watch.stderr()}${journalEnd(w)}`).toEqual(
      [],
    );
    const before = holder(w.stateDir)?.pid;
    await killHolder(w);
    expect(await settled(w), `the watcher's restart: ${watch.stderr()}${journalEnd(w)}`).toEqual(
      [],
    );
    expect(holder(w.stateDir)?.pid, "a new holder").not.toBe(before);
    expect(await watch.stop(), `the watcher's stop: ${watch.stderr()}`).toBe(0);
  } finally {
    for (const c of cleanups) c();
  }
}

const OPS: Op[] = [
  {
    name: "tick",
    async prepare(w) {
      await killHolder(w); // so the tick acts: break the claim, start a manager
      return ["tick", "--json"];
    },
    points: [
      "tick.lock.before-rename",
      "tick.locked",
      "tick.after-decide",
      "claim.break.after-remove",
      "claim.removed-aside",
      "act.before-start",
      "act.after-start",
      "journal.torn.manager_started",
      "tick.before-last-tick",
    ],
    maxDelayMs: 900,
  },
  {
    // The watcher's pass is the tick's: killed in it, at the tick's own steps or the watcher's.
    name: "watch",
    async prepare(w) {
      await killHolder(w);
      return ["watch", "--json"];
    },
    after: watcherConverges,
    points: [
      "watch.pass.before-tick",
      "tick.locked",
      "act.after-start",
      "watch.pass.after-tick",
      "watch.after-pass",
    ],
    maxDelayMs: 1500,
  },
  {
    name: "save",
    async prepare(w) {
      ledgerChange(w);
      return ["save", "--pid", String(holder(w.stateDir)?.pid)];
    },
    points: [
      "write.before-rename",
      "ledger.after-commit",
      "ledger.after-push",
      "save.before-journal",
      "journal.torn.saved",
    ],
    maxDelayMs: 700,
  },
  {
    name: "hand-over",
    async prepare(w) {
      ledgerChange(w);
      const pid = String(holder(w.stateDir)?.pid);
      return ["hand-over", "--note", "fault test", "--pid", pid, "--progress", `p${random()}`];
    },
    // ledger.after-commit and claim.removed-aside are the save's and claim release's steps too.
    points: ["hand-over.after-event", "hand-over.after-release", "journal.torn.released"],
    maxDelayMs: 700,
  },
  {
    name: "claim acquire",
    async prepare(w) {
      await killHolder(w);
      return ["claim", "acquire", "--break-stale", "--pid", String(sleeper(w).pid)];
    },
    after: endSleepers,
    points: [
      "claim.break.after-remove",
      "claim.before-rename",
      "claim.after-rename",
      "journal.torn.claimed",
    ],
    maxDelayMs: 400,
  },
  {
    name: "claim release",
    async prepare(w) {
      await killHolder(w);
      const pid = String(sleeper(w).pid);
      const r = sheepdog(["claim", "acquire", "--break-stale", "--pid", pid], { env: w.env });
      expect(r.code, r.stderr).toBe(0);
      return ["claim", "release", "--pid", pid];
    },
    after: endSleepers,
    points: ["claim.release.after-journal", "claim.removed-aside", "journal.torn.released"],
    maxDelayMs: 400,
  },
  {
    name: "merge-lock acquire",
    async prepare(w) {
      return ["merge-lock", "acquire", "--pid", String(sleeper(w).pid), "--item", "i-1"];
    },
    after: mergeLockClears,
    points: ["merge-lock.acquired", "journal.torn.merge_lock_acquired"],
    maxDelayMs: 600,
  },
  {
    name: "merge-lock release",
    async prepare(w) {
      const pid = String(sleeper(w).pid);
      const r = sheepdog(["merge-lock", "acquire", "--pid", pid], { env: w.env });
      expect(r.code, r.stderr).toBe(0);
      return ["merge-lock", "release", "--pid", pid];
    },
    after: mergeLockClears,
    points: ["merge-lock.released", "journal.torn.merge_lock_released"],
    maxDelayMs: 600,
  },
  {
    name: "pause",
    async prepare() {
      return ["pause", "--until", "1h"];
    },
    after(w) {
      const r = sheepdog(["unpause"], { env: w.env });
      expect(r.code, r.stderr).toBe(0);
    },
    points: ["journal.torn.paused"],
    maxDelayMs: 300,
  },
  {
    name: "resume",
    async prepare(w) {
      appendEvent(w.stateDir, { type: "stood_down", reason: "fault test" });
      return ["resume"];
    },
    after(w) {
      const r = sheepdog(["resume"], { env: w.env });
      expect(r.code, r.stderr).toBe(0);
      expect(sheepdog(["resume", "--json"], { env: w.env }).stdout).toContain('"cleared":false');
    },
    points: ["journal.torn.cleared"],
    maxDelayMs: 300,
  },
];

/** What the testing doc's numbers come from (per file). */
const tally = {
  rounds: 0,
  kills: 0,
  finishedFirst: 0,
  violations: 0,
};

async function round(w: World, op: Op, kill: Kill, kills: { n: number }): Promise<void> {
  const what = `${op.name} killed ${"point" in kill ? `at ${kill.point}` : `after ${kill.delayMs} ms`} (seed ${SEED})`;
  await converge(w);
  const args = await op.prepare(w);
  const killed = await runKilled(w, args, kill);
  tally.rounds++;
  if ("point" in kill) expect(killed, `${what}: the point was never reached`).toBe(true);
  if (killed) {
    kills.n++;
    tally.kills++;
  } else tally.finishedFirst++;
  const atKill = checkAfterKill(w, kills.n);
  tally.violations += atKill.length;
  expect(atKill, what).toEqual([]);
  await op.after?.(w);
  const c = await converge(w);
  const after = [...healthy(w), ...checkLocks(w)];
  tally.violations += after.length;
  expect(after, `${what}: after ${c.decisions.join(", ")}`).toEqual([]);
  // No ledger commit is lost: whatever the killed command committed, the manager's next save pushes.
  const head = gitTry(w.ledger, ["rev-parse", "-q", "--verify", "HEAD"], w.env);
  if (head.code === 0) w.shas.add(head.stdout);
  const pushed = () => unpushed(w.ledger, w.ledgerRemote, w.shas).length === 0;
  await waitFor("the ledger commits pushed", pushed, 10_000).catch(() => {});
  expect(unpushed(w.ledger, w.ledgerRemote, w.shas), `${what}: ledger commits lost`).toEqual([]);
}

/** The kill rounds of the commands named, as one describe block of a test file. */
export function killSuite(names: readonly string[]): void {
  const ops = names.map((n) => {
    const op = OPS.find((o) => o.name === n);
    if (!op) throw new Error(`no kill rounds for ${n}`);
    return op;
  });
  describe(`kill -9 at every step (seed ${SEED}, ${ROUNDS} random round(s) per command)`, () => {
    beforeAll(() => {
      random = prng(
        SEED ^
          [...names.join()].reduce((h, c) => Math.imul(h ^ c.charCodeAt(0), 16777619), 2166136261),
      );
      for (const k of Object.keys(tally) as (keyof typeof tally)[]) tally[k] = 0;
    });
    afterAll(() => {
      process.stdout.write(
        `faults-kill (${names.join(", ")}): seed ${SEED}: ${tally.rounds} rounds, ${tally.kills} kills (${tally.finishedFirst} finished before their kill), ${tally.violations} violations\n`,
      );
      for (const w of worlds.splice(0)) {
        killManagers(w.root);
        for (const sl of w.sleepers) sl.kill("SIGKILL");
      }
    });
    it.each(ops.map((op) => [op.name, op] as const))(
      "%s: killed at each named step and at random moments, the program stays consistent",
      async (_name, op) => {
        const w = world();
        worlds.push(w);
        const kills = { n: 0 };
        for (const point of op.points) await round(w, op, { point }, kills);
        for (let i = 0; i < ROUNDS; i++)
          await round(w, op, { delayMs: Math.floor(50 + random() * op.maxDelayMs) }, kills);
        killManagers(w.root);
        rmSync(w.clockFile, { force: true });
      },
      300_000,
    );
  });
}
