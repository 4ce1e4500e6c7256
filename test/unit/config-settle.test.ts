// sightOf (DESIGN §16, §18): a broken program.json is journaled once per text; with a settle
// time (watch) only once read the same twice that far apart.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { type ConfigInvalid, sightOf, sightPending } from "../../src/config/last-valid.js";
import { tempDir } from "../helpers/cli.js";

const A: ConfigInvalid = { file: "/p/program.json", error: "bad", sha: "aaa" };
const B: ConfigInvalid = { ...A, sha: "bbb" };
const T = Date.parse("2026-12-01T00:00:00.000Z");

describe("sightOf", () => {
  it("a tick (no settle): news at first sight, never again for the same text", () => {
    const dir = tempDir();
    expect(sightOf(dir, A, { now: T })).toBe(true);
    expect(sightOf(dir, A, { now: T + 10 })).toBe(false);
    expect(sightOf(dir, B, { now: T + 20 })).toBe(true); // another text is news again
  });

  it("watch (2 s): the first read waits, a read of the same text 2 s on is news, once", () => {
    const dir = tempDir();
    const w = { settleMs: 2000 };
    expect(sightOf(dir, A, { now: T, ...w })).toBe(false);
    expect(sightPending(dir, A)).toBe(true);
    expect(sightOf(dir, A, { now: T + 1999, ...w })).toBe(false);
    expect(sightOf(dir, A, { now: T + 2000, ...w })).toBe(true);
    expect(sightPending(dir, A)).toBe(false);
    expect(sightOf(dir, A, { now: T + 9000, ...w })).toBe(false);
  });

  it("watch: a text that changed in between starts over (an editor's two steps)", () => {
    const dir = tempDir();
    const w = { settleMs: 2000 };
    expect(sightOf(dir, A, { now: T, ...w })).toBe(false);
    expect(sightOf(dir, B, { now: T + 2500, ...w })).toBe(false); // B first read now
    expect(sightOf(dir, B, { now: T + 4500, ...w })).toBe(true);
  });

  it("a marker an older version wrote (no `journaled`) counts as journaled", () => {
    const dir = tempDir();
    writeFileSync(join(dir, "config-invalid.json"), JSON.stringify({ sha: "aaa", error: "bad" }));
    expect(sightOf(dir, A, { now: T, settleMs: 2000 })).toBe(false);
    expect(sightOf(dir, A, { now: T })).toBe(false);
  });
});
