// Every lock of src/lock/dir-lock.ts appears whole, so one without a readable holder is never
// "being made": a mutex whose maker is gone, or that names no maker at all, is taken at once
// (no age rule); one whose maker lives is busy and names it. Breaking a lock seen stale never
// moves the successor a faster breaker put in its place, and old leftovers are swept.
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  breakSeen,
  LEFTOVER_MS,
  LockBusy,
  placeWhole,
  readHolderFile,
  sweepLeftovers,
  withMutex,
} from "../../src/lock/dir-lock.js";
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

  it("a maker still alive keeps it, and the busy answer names it", () => {
    const at = "2026-12-01T10:00:00.000Z";
    const path = leftMutex(JSON.stringify({ ...me, at }));
    const out = withMutex(path, () => "mine");
    expect(out).toBeInstanceOf(LockBusy);
    expect((out as LockBusy).describe()).toBe(`x.lock is held by pid ${me.pid} since ${at}`);
  });

  // No maker: a lock appears whole, so nobody is still making it. Taken at once, no age rule.
  it.each([
    ["no holder.json", null],
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
  ])("%s: no maker, taken at once", (_what, text) => {
    expect(withMutex(leftMutex(text), () => "mine")).toBe("mine");
  });

  it("inside its section the mutex holds this process's identity, whole; after it, nothing is left", () => {
    const path = leftMutex(null);
    const seen = withMutex(path, () => JSON.parse(readFileSync(join(path, "holder.json"), "utf8")));
    expect(seen).toMatchObject({ pid: me.pid, start_time: me.start_time, at: expect.any(String) });
    expect(existsSync(path)).toBe(false);
    expect(readdirSync(join(path, "..")).filter((n) => !n.endsWith(".tmp"))).toEqual([]);
  });
});

describe("placing and breaking a lock", () => {
  it("an existing directory, even an empty one, is never taken over unjudged", () => {
    const dir = tempDir();
    mkdirSync(join(dir, "claim"));
    expect(placeWhole(dir, "claim", { pid: 1 }, "t")).toBe(false);
    expect(readHolderFile(dir, "claim")).toMatchObject({ state: "unreadable" });
  });

  it.each([
    ["a dead holder's lock", JSON.stringify(gone)],
    ["an empty lock", null],
  ])("%s broken by two breakers: the second never moves the first one's successor", (_w, text) => {
    const dir = tempDir();
    mkdirSync(join(dir, "m.lock"));
    if (text !== null) writeFileSync(join(dir, "m.lock", "holder.json"), text);
    const seen = readHolderFile(dir, "m.lock");
    if (seen.state === "absent") throw new Error("no lock");
    expect(breakSeen(dir, "m.lock", seen)).toBe(true);
    expect(placeWhole(dir, "m.lock", { successor: true }, "t")).toBe(true);
    // The slower breaker acts on what it saw before: the successor stays.
    expect(breakSeen(dir, "m.lock", seen)).toBe(false);
    expect(JSON.parse(readFileSync(join(dir, "m.lock", "holder.json"), "utf8"))).toEqual({
      successor: true,
    });
  });

  it("sweeps `.….tmp` leftovers older than an hour, and nothing else", () => {
    const dir = tempDir();
    const old = (Date.now() - LEFTOVER_MS - 60_000) / 1000;
    const made = (name: string, dirToo: boolean, aged: boolean) => {
      const path = join(dir, name);
      if (dirToo) {
        mkdirSync(path);
        writeFileSync(join(path, ".holder.json.1.x.tmp"), "{");
      } else writeFileSync(path, "x");
      if (aged) utimesSync(path, old, old);
    };
    made(".claim.break.lock.take.1.2.3.tmp", true, true);
    made(".heartbeat.json.1.abc.tmp", false, true);
    made(".claim.removed.12.34", true, true);
    made(".tick.lock.take.9.9.9.tmp", true, false);
    made("journal.jsonl", false, true);
    made(".gitignore", false, true);
    expect(sweepLeftovers(dir)).toBe(3);
    expect(readdirSync(dir).sort()).toEqual([
      ".gitignore",
      ".tick.lock.take.9.9.9.tmp",
      "journal.jsonl",
    ]);
  });
});
