// Issue 11, bug 3: a release is compare-and-set under the mutex a break takes. Here a watchdog's
// break and a successor's acquire are interleaved with a release at every point of its window
// (before its read, between its read and its remove, after it), many rounds: the successor's
// claim is never lost. The same rounds with the old read-compare-remove lose it.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  breakStaleClaim,
  type ClaimState,
  readClaim,
  releaseClaimIf,
  removeClaimDir,
  sameProcess,
  tryAcquire,
} from "../../src/claim/claim.js";
import { identityOf, type ProcessIdentity } from "../../src/process/identity.js";
import { tempDir } from "../helpers/cli.js";

const me = identityOf(process.pid) as ProcessIdentity;
// The releasing manager as the watchdog sees it: its start time no longer matches (stopped, pid
// reused), so a break is allowed. The successor is this live test process.
const old: ProcessIdentity = { ...me, start_time: `${me.start_time}-gone` };
const successor = me;

const isHeldBy = (c: ClaimState, id: ProcessIdentity) =>
  c.held && c.holder !== null && sameProcess(c.holder, id);

/** The watchdog breaks the stale claim, then the successor tries to take it. */
function breakAndAcquire(stateDir: string): boolean {
  breakStaleClaim(stateDir, readClaim(stateDir), "holder gone");
  return tryAcquire(stateDir, successor).ok;
}

type Release = (stateDir: string, interleave: () => void) => void;

const locked: Release = (stateDir, interleave) => {
  releaseClaimIf(
    stateDir,
    (c) => isHeldBy(c, old),
    () => ({ type: "released", pid: old.pid }),
    { interleave },
  );
};

// What `claim release`, `finish` and `hand-over` did before: read, compare, remove.
const unlocked: Release = (stateDir, interleave) => {
  const c = readClaim(stateDir);
  interleave();
  if (isHeldBy(c, old)) removeClaimDir(stateDir);
};

/** Runs the rounds; returns how many lost the successor's claim. */
function rounds(release: Release, n: number): number {
  let lost = 0;
  for (let round = 0; round < n; round++) {
    const stateDir = join(tempDir(), ".sheepdog");
    mkdirSync(stateDir, { recursive: true });
    expect(tryAcquire(stateDir, old).ok).toBe(true);
    const where = round % 3; // 0: before the read, 1: inside the window, 2: after the remove
    let acquired = false;
    if (where === 0) acquired = breakAndAcquire(stateDir);
    release(stateDir, () => {
      if (where === 1) acquired = breakAndAcquire(stateDir) || acquired;
    });
    if (where === 2) acquired = breakAndAcquire(stateDir);
    // The successor retries until it holds the claim, as a started manager does.
    if (!acquired) acquired = tryAcquire(stateDir, successor).ok;
    expect(acquired).toBe(true);
    if (!isHeldBy(readClaim(stateDir), successor)) lost++;
  }
  return lost;
}

describe("claim release races a break and a successor's acquire", () => {
  it("compare-and-set under the break mutex never loses the successor's claim (150 rounds)", () => {
    expect(rounds(locked, 150)).toBe(0);
  });

  it("the old read-compare-remove loses it whenever the break lands inside its window", () => {
    expect(rounds(unlocked, 30)).toBe(10);
  });

  it("a release waits for a breaker holding the mutex, then compares", () => {
    const stateDir = join(tempDir(), ".sheepdog");
    mkdirSync(stateDir, { recursive: true });
    tryAcquire(stateDir, old);
    // A mutex left without a holder (an older sheepdog killed while making it): broken at once.
    mkdirSync(join(stateDir, "claim.break.lock"));
    const out = releaseClaimIf(
      stateDir,
      (c) => isHeldBy(c, old),
      () => ({ type: "released", pid: old.pid }),
      { now: Date.now() + 60_000 },
    );
    expect(out.released).toBe(true);
    expect(readClaim(stateDir).held).toBe(false);
  });
});
