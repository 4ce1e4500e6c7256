// The mutex of every lock (src/lock/dir-lock.ts) and the holder.json its maker writes: a maker
// whose identity reads whole and who is gone gives the mutex up at once; a holder.json that is
// torn, foreign or malformed names no maker, and the mutex waits out MUTEX_STALE_MS.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BUSY, MUTEX_STALE_MS, withMutex } from "../../src/lock/dir-lock.js";
import { identityOf, type ProcessIdentity } from "../../src/process/identity.js";
import { tempDir } from "../helpers/cli.js";

const me = identityOf(process.pid) as ProcessIdentity;
/** This process's pid with another start time: a maker that is gone (its pid reused). */
const gone: ProcessIdentity = { ...me, start_time: `${me.start_time}-gone` };

/** A mutex directory left behind just now, holding `text` as its holder.json. */
function leftMutex(text: string | null): string {
  const path = join(tempDir(), "x.lock");
  mkdirSync(path);
  if (text !== null) writeFileSync(join(path, "holder.json"), text);
  return path;
}

const holder = (patch: Record<string, unknown>) => JSON.stringify({ ...gone, ...patch });
const without = (key: keyof ProcessIdentity) => {
  const { [key]: _, ...rest } = gone;
  return JSON.stringify(rest);
};

describe("the mutex's holder.json", () => {
  it.each([
    ["its maker, gone", JSON.stringify(gone)],
    ["its maker, gone, with extra fields", holder({ extra: 1, at: "2026-12-01T00:00:00Z" })],
  ])("%s: taken at once", (_what, text) => {
    expect(withMutex(leftMutex(text), () => "mine")).toBe("mine");
  });

  it("a maker still alive keeps it", () => {
    expect(withMutex(leftMutex(JSON.stringify(me)), () => "mine")).toBe(BUSY);
  });

  // No maker: nobody can say it is gone, so a fresh mutex is waited out.
  it.each([
    ["no holder.json yet", null],
    ["a torn file", JSON.stringify(gone).slice(0, 30)],
    ["empty", ""],
    ["null", "null"],
    ["an array", JSON.stringify([gone])],
    ["a pid that is text", holder({ pid: String(gone.pid) })],
    ["a pid of 0", holder({ pid: 0 })],
    ["a negative pid", holder({ pid: -1 })],
    ["a pid that is no whole number", holder({ pid: 1.5 })],
    ["no pid", without("pid")],
    ["a start time that is a number", holder({ start_time: 5 })],
    ["no start time", without("start_time")],
    ["a machine id that is null", holder({ machine_id: null })],
    ["no machine id", without("machine_id")],
  ])("%s: no maker, busy until stale, then taken", (_what, text) => {
    const path = leftMutex(text);
    expect(withMutex(path, () => "mine")).toBe(BUSY);
    expect(withMutex(path, () => "mine", { now: Date.now() + MUTEX_STALE_MS + 1000 })).toBe("mine");
  });
});
