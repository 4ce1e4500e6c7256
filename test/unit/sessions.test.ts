// The statusline's session map (`<state>/sessions/<pid>.json`) read through its schema: a file
// that names no process is no entry, a malformed field is dropped on its own.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { lookupSession, recordSession, type SessionEntry } from "../../src/usage/sessions.js";
import { tempDir } from "../helpers/cli.js";

const manager = { pid: process.pid, start_time: "linux:boot:12345" };
const good: SessionEntry = {
  ...manager,
  transcript_path: "/seat/projects/p/abc.jsonl",
  session_id: "abc",
  cwd: "/p",
  seat: "/seat",
  context_window_size: 1_000_000,
  at: "2026-12-01T10:00:00.000Z",
};

function withFile(text: string) {
  const state = tempDir();
  mkdirSync(join(state, "sessions"));
  const path = join(state, "sessions", `${manager.pid}.json`);
  writeFileSync(path, text);
  return { env: { ...process.env, SHEEPDOG_STATE_DIR: state }, path };
}

const line = (patch: Record<string, unknown>) => JSON.stringify({ ...good, ...patch });
const without = (key: keyof SessionEntry) => {
  const { [key]: _, ...rest } = good;
  return JSON.stringify(rest);
};

describe("the session map: a malformed file is no entry, a malformed field is dropped", () => {
  // [what, the file's text, the entry looked up or null when there is none]
  const cases: [string, string, SessionEntry | null][] = [
    ["a whole entry", JSON.stringify(good), good],
    ["a torn file", JSON.stringify(good).slice(0, 50), null],
    ["empty", "", null],
    ["null", "null", null],
    ["an array", JSON.stringify([good]), null],
    ["a pid that is text", line({ pid: String(manager.pid) }), null],
    ["no pid", without("pid"), null],
    ["a start time that is a number", line({ start_time: 12345 }), null],
    ["no start time", without("start_time"), null],
    ["another process's start time (a reused pid)", line({ start_time: "linux:boot:1" }), null],
    [
      "a transcript path that is a number",
      line({ transcript_path: 5 }),
      { ...good, transcript_path: null },
    ],
    ["no transcript path", without("transcript_path"), { ...good, transcript_path: null }],
    ["a session id that is an object", line({ session_id: {} }), { ...good, session_id: null }],
    ["a cwd that is a list", line({ cwd: ["/p"] }), { ...good, cwd: null }],
    ["a seat that is a number", line({ seat: 5 }), { ...good, seat: "" }],
    [
      "a context window that is text",
      line({ context_window_size: "1000000" }),
      { ...good, context_window_size: null },
    ],
    [
      "a context window of 0",
      line({ context_window_size: 0 }),
      { ...good, context_window_size: null },
    ],
    [
      "a negative context window",
      line({ context_window_size: -1 }),
      { ...good, context_window_size: null },
    ],
    [
      "a null context window",
      line({ context_window_size: null }),
      { ...good, context_window_size: null },
    ],
    [
      "no context window (an older statusline)",
      without("context_window_size"),
      { ...good, context_window_size: undefined },
    ],
    ["a time that is a number", line({ at: 1 }), { ...good, at: "" }],
    ["extra fields: kept without them", line({ extra: true, nested: { a: 1 } }), good],
  ];
  it.each(cases)("%s", (_what, text, expected) => {
    const { env } = withFile(text);
    const entry = lookupSession(manager, env);
    expect(entry).toEqual(expected);
    if (entry) expect(Object.keys(entry).every((k) => k in good)).toBe(true);
  });

  it("a malformed context window is not carried into the next update", () => {
    const { env, path } = withFile(line({ context_window_size: "big" }));
    // An update without a context window keeps the last one: here there is none to keep.
    expect(recordSession({ ...good, context_window_size: null, cwd: "/q" }, env)).toBe(true);
    expect(JSON.parse(readFileSync(path, "utf8"))).toEqual({
      ...good,
      context_window_size: null,
      cwd: "/q",
    });
    expect(lookupSession(manager, env)?.context_window_size).toBeNull();
  });

  it("a file that is no entry is written anew by the next update", () => {
    const { env, path } = withFile(line({ start_time: 5 }));
    expect(recordSession(good, env)).toBe(true);
    expect(JSON.parse(readFileSync(path, "utf8"))).toEqual(good);
    expect(recordSession(good, env)).toBe(false); // unchanged now
  });
});
