// Issue 30: a lock appears whole in one step (src/lock/dir-lock.ts), so whatever a killed process
// leaves is broken by the very next tick. Every fault point on the way into and out of each lock
// (the claim, tick.lock/, their breakers' mutexes, the journal's rotation mutex) is reached by a
// real command, SIGKILLed there, and followed at once (no clock step, no wait) by one clean tick
// that must act: not locked, the dead holder's claim broken, a manager started.
import { appendFileSync, existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { tryAcquire } from "../src/claim/claim.js";
import { readHolderFile } from "../src/lock/dir-lock.js";
import { livenessOf } from "../src/process/identity.js";
import {
  cleanTick,
  deadClaim,
  deadClaimLeft,
  endStandIns,
  endWorld,
  killedAt,
  type LockWorld,
  lockWorld,
  standIn,
} from "./helpers/lock-world.js";
import { ofType } from "./helpers/watchdog.js";

const worlds: LockWorld[] = [];
afterEach(() => {
  for (const w of worlds.splice(0)) endWorld(w);
  endStandIns();
});

function world(env: NodeJS.ProcessEnv = {}): LockWorld {
  const w = lockWorld(env);
  worlds.push(w);
  return w;
}

/** A live stand-in holding the claim (what `claim release` releases). */
async function liveClaim(w: LockWorld): Promise<number> {
  const { id } = await standIn();
  expect(tryAcquire(w.stateDir, id).ok).toBe(true);
  return id.pid;
}

/** A mutex `name` left whole by a process that is now dead (what `broken-aside` breaks). */
async function deadMutex(w: LockWorld, name: string): Promise<void> {
  const { child, id } = await standIn();
  const gone = new Promise((r) => child.once("exit", r));
  child.kill("SIGKILL");
  await gone;
  mkdirSync(join(w.stateDir, name));
  writeFileSync(
    join(w.stateDir, name, "holder.json"),
    JSON.stringify({ ...id, at: new Date().toISOString() }),
  );
}

/**
 * The clean tick after the kill acts at once: it breaks the dead holder's claim (when there is
 * one) and starts a manager.
 */
function actsAtOnce(w: LockWorld, what: string): void {
  const broke = deadClaimLeft(w) !== null ? ["broke the claim"] : [];
  const t = cleanTick(w);
  expect(t.code, `${what}: ${t.stderr}`).toBe(0);
  expect(t.lockedOut, `${what}: ${JSON.stringify(t.report)}`).toBe(false);
  expect(t.report.actions, what).toEqual(
    expect.arrayContaining([...broke, expect.stringMatching(/^started pid \d+/)]),
  );
  expect(deadClaimLeft(w), what).toBeNull();
  // It leaves no lock behind: its own are released. A mutex the kill left and this tick did not
  // need may stay: its maker is dead, so whoever needs it next breaks it at once.
  expect(existsSync(join(w.stateDir, "tick.lock")), what).toBe(false);
  for (const mutex of ["tick.lock.break", "claim.break.lock", "journal.rotate.lock"]) {
    const m = readHolderFile(w.stateDir, mutex);
    if (m.state === "absent") continue;
    expect(m.state, `${what}: ${mutex} is unreadable`).toBe("text");
    if (m.state === "text")
      expect(livenessOf(JSON.parse(m.text)), `${what}: ${mutex} is held`).not.toBe("alive");
  }
}

/** Fills the journal past SHEEPDOG_JOURNAL_MAX_BYTES, so the next append rotates it. */
function fillJournal(w: LockWorld): void {
  const line = `${JSON.stringify({ at: new Date().toISOString(), type: "cleared" })}\n`;
  appendFileSync(join(w.stateDir, "journal.jsonl"), line.repeat(60));
}

const TICK = ["tick", "--json"];

describe("killed at a lock's fault point, the next tick acts at once", () => {
  it.each([
    // tick.lock/: taking it, holding it, and the release under its breakers' mutex.
    "tick.lock.before-rename",
    "tick.locked",
    "tick.lock.break.before-rename",
    "tick.lock.break.held",
    "tick.lock.removed-aside",
    "tick.lock.break.removed-aside",
    // The claim's break under claim.break.lock.
    "claim.break.before-mutex",
    "claim.break.lock.before-rename",
    "claim.break.lock.held",
    "claim.removed-aside",
    "claim.break.after-remove",
    "claim.break.lock.removed-aside",
  ])("a tick killed at %s", async (point) => {
    const w = world();
    await deadClaim(w);
    expect(await killedAt(w, TICK, point), `${point} was never reached`).toBe(true);
    await deadClaim(w);
    actsAtOnce(w, point);
  });

  it.each([
    ["claim.break.lock", "claim.break.lock.broken-aside"],
    ["tick.lock.break", "tick.lock.break.broken-aside"],
  ])("a tick killed while breaking a dead process's %s (%s)", async (mutex, point) => {
    const w = world();
    await deadClaim(w);
    await deadMutex(w, mutex);
    expect(await killedAt(w, TICK, point), `${point} was never reached`).toBe(true);
    await deadClaim(w);
    actsAtOnce(w, point);
  });

  it.each([
    "journal.rotate.lock.before-rename",
    "journal.rotate.lock.held",
    "journal.rotate.lock.removed-aside",
  ])("a tick killed rotating the journal at %s", async (point) => {
    // Past 2 KB an append rotates, so the tick's first journal line takes the mutex. Nothing
    // in this process appends after the kill: the clean tick is the one to find the mutex.
    const w = world({ SHEEPDOG_JOURNAL_MAX_BYTES: "2048" });
    await deadClaim(w);
    fillJournal(w);
    expect(await killedAt(w, TICK, point), `${point} was never reached`).toBe(true);
    actsAtOnce(w, point);
  });

  it.each(["claim.break.lock.held", "claim.before-rename", "claim.after-rename"])(
    "claim acquire --break-stale killed at %s",
    async (point) => {
      const w = world();
      await deadClaim(w);
      const { id } = await standIn();
      const args = ["claim", "acquire", "--break-stale", "--pid", String(id.pid)];
      expect(await killedAt(w, args, point), `${point} was never reached`).toBe(true);
      await deadClaim(w);
      actsAtOnce(w, point);
    },
  );

  it.each([
    "claim.break.lock.before-rename",
    "claim.break.lock.held",
    "claim.removed-aside",
    "claim.release.before-journal",
    "claim.break.lock.removed-aside",
  ])("claim release killed at %s", async (point) => {
    const w = world();
    const pid = await liveClaim(w);
    expect(
      await killedAt(w, ["claim", "release", "--pid", String(pid)], point),
      `${point} was never reached`,
    ).toBe(true);
    await deadClaim(w);
    actsAtOnce(w, point);
  });
});

describe("a lock left half-made by an older sheepdog, or by hand, is broken at once", () => {
  it("an empty tick.lock/ (mkdir .sheepdog/tick.lock; sheepdog tick): broken, journaled, and the tick acts", async () => {
    const w = world();
    await deadClaim(w);
    mkdirSync(join(w.stateDir, "tick.lock"));
    actsAtOnce(w, "an empty tick.lock/");
    expect(ofType(w.stateDir, "tick_lock_broken")).toEqual([
      expect.objectContaining({
        reason: "it has no readable holder (tick.lock/holder.json is missing)",
      }),
    ]);
  });

  it("claim.break.lock/ holding only a temp file of a holder.json never written whole", async () => {
    const w = world();
    await deadClaim(w);
    mkdirSync(join(w.stateDir, "claim.break.lock"));
    writeFileSync(join(w.stateDir, "claim.break.lock", ".holder.json.4242.x1.tmp"), '{"pid": 42');
    actsAtOnce(w, "a half-made claim.break.lock/");
  });

  it("an empty tick.lock.break/ and an empty journal.rotate.lock/", async () => {
    const w = world({ SHEEPDOG_JOURNAL_MAX_BYTES: "2048" });
    await deadClaim(w);
    fillJournal(w);
    mkdirSync(join(w.stateDir, "tick.lock.break"));
    mkdirSync(join(w.stateDir, "journal.rotate.lock"));
    actsAtOnce(w, "empty mutexes");
  });
});
