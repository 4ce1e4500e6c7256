// Issue 30, part 2: one journal vocabulary (src/journal/events.ts). Every list of event names is
// derived from it (the watcher's own events had drifted: four a pass writes woke another pass),
// and a line that does not fit is skipped, counted and said, never fatal.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  checkEvent,
  compileCheck,
  EVENT_TYPES,
  EVENTS,
  journalEventSchema,
  PASS_EVENT_TYPES,
  schemaOf,
} from "../../src/journal/events.js";
import { describeSkipped, parseJournalText, readJournal } from "../../src/journal/journal.js";
import { STATE_EVENT_TYPES } from "../../src/journal/replay.js";
import { PAGE_KINDS } from "../../src/page/compose.js";
import { OWN_EVENT_TYPES } from "../../src/resident/relevance.js";
import { tempDir } from "../helpers/cli.js";

const AT = "2026-12-01T10:00:00.000Z";
const line = (v: unknown) => `${JSON.stringify(v)}\n`;

describe("the vocabulary", () => {
  it("the watcher's own events are the pass-written ones, the four that had drifted among them", () => {
    expect(OWN_EVENT_TYPES).toBe(PASS_EVENT_TYPES);
    for (const t of ["manager_starting", "sleep_gap", "nudged", "lease_acquired", "lock_busy"])
      expect(OWN_EVENT_TYPES.has(t as never), t).toBe(true);
    // What a manager or a person writes wakes a pass.
    for (const t of ["claimed", "saved", "hand_over", "released", "finished", "cleared", "paused"])
      expect(OWN_EVENT_TYPES.has(t as never), t).toBe(false);
  });

  it("replay's and the pages' lists are names of the vocabulary", () => {
    for (const t of STATE_EVENT_TYPES) expect(EVENT_TYPES).toContain(t);
    expect(PAGE_KINDS.length).toBeGreaterThan(0);
  });

  it("the discriminated union and each type's schema agree on every type", () => {
    const union = journalEventSchema();
    for (const type of EVENT_TYPES) {
      // The least a line of this type can be: its required fields, from its own schema.
      const required = Object.entries(EVENTS[type].fields)
        .filter(([, s]) => !(s as { _zod: { optin?: string } })._zod.optin)
        .map(([k]) => k);
      const least: Record<string, unknown> = { at: AT, type };
      for (const k of required) least[k] = k === "pid" ? 1 : "x";
      expect(checkEvent(least), type).toEqual({ event: least });
      expect(union.safeParse(least).success, type).toBe(true);
    }
  });

  it.each([
    [{ at: AT, type: "claimed" }, "claimed: pid: expected number"],
    [{ at: AT, type: "saved", pid: "4242" }, "saved: pid: expected number"],
    [{ at: AT, type: "paused", reason: "x" }, "paused: until: expected string"],
    [
      { at: AT, type: "manager_stopped", evidence: 3 },
      "manager_stopped: evidence: expected string",
    ],
    [{ type: "saved" }, "saved: at: expected string"],
    [{ at: AT, type: "a_newer_sheepdogs_event" }, 'unknown event type "a_newer_sheepdogs_event"'],
    [{ at: AT }, "no type"],
    [[1, 2], "not a JSON object"],
  ])("%j is no event: %s", (raw, problem) => {
    expect(checkEvent(raw)).toEqual({ problem });
  });

  it("the compiled check answers as zod's parse does, for every type (property test)", () => {
    const value = fc.oneof(
      fc.string({ maxLength: 3 }),
      fc.integer(),
      fc.double({ noNaN: true, noDefaultInfinity: true }),
      fc.boolean(),
      fc.constant(null),
      fc.array(fc.string({ maxLength: 2 }), { maxLength: 2 }),
      fc.constantFrom(1, 2, 3, 4, 5, 6),
      fc.record({
        title: fc.string(),
        message: fc.string(),
        priority: fc.integer({ min: 0, max: 6 }),
        tags: fc.array(fc.string(), { maxLength: 1 }),
      }),
    );
    for (const type of EVENT_TYPES) {
      const schema = schemaOf(type);
      const check = compileCheck(schema);
      const keys = ["at", ...Object.keys(EVENTS[type].fields), "extra"];
      const line = fc.dictionary(fc.constantFrom(...keys), value, { maxKeys: keys.length });
      fc.assert(
        fc.property(line, fc.boolean(), (fields, typed) => {
          const v = typed ? { ...fields, type } : fields;
          expect(check(v), JSON.stringify(v)).toBe(schema.safeParse(v).success);
        }),
        { numRuns: 300 },
      );
    }
  });

  it("a line keeps the fields it was written with, known or not", () => {
    const raw = { at: AT, type: "saved", pid: 1, from_a_newer_version: true };
    expect(checkEvent(raw)).toEqual({ event: raw });
  });
});

describe("an old journal whose lines do not fit", () => {
  it("they are skipped and counted, the first one named; torn lines are not counted", () => {
    const text = [
      line({ at: AT, type: "claimed", pid: 7 }),
      line({ at: AT, type: "saved", pid: "7" }),
      '{"at":"2026-12-01T10:00:00.000Z","type":"sav',
      "\n",
      line({ at: AT, type: "bulk" }),
      line({ at: AT, type: "hand_over", pid: 7, note: "n" }),
    ].join("");
    const read = parseJournalText(text);
    expect(read.events.map((e) => e.type)).toEqual(["claimed", "hand_over"]);
    expect(read.skipped).toEqual({
      lines: 2,
      first: "journal.jsonl line 2: saved: pid: expected number",
    });
    expect(describeSkipped(read.skipped)).toBe(
      "the journal has 2 lines that are not an event sheepdog knows, skipped (journal.jsonl line 2: saved: pid: expected number)",
    );
  });

  it("a reader of a few types checks only those", () => {
    const text =
      line({ at: AT, type: "saved", pid: "7" }) + line({ at: AT, type: "paused", until: AT });
    const read = parseJournalText(text, { types: STATE_EVENT_TYPES });
    expect(read.events.map((e) => e.type)).toEqual(["paused"]);
    expect(read.skipped.lines).toBe(0);
  });

  it("the count covers both files replay reads", () => {
    const dir = join(tempDir(), ".sheepdog");
    mkdirSync(dir);
    writeFileSync(join(dir, "journal.1.jsonl"), line({ at: AT, type: "finished", note: 3 }));
    writeFileSync(
      join(dir, "journal.jsonl"),
      line({ at: AT, type: "cleared" }) + line({ at: AT, type: "x" }),
    );
    const read = readJournal(dir);
    expect(read.events.map((e) => e.type)).toEqual(["cleared"]);
    expect(read.skipped).toEqual({
      lines: 2,
      first: "journal.1.jsonl line 1: finished: note: expected string",
    });
  });
});
