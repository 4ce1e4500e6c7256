import { appendFileSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { judgeSeat, recordRefusalReading, seatLimit, shortTime } from "../src/usage/limit.js";
import {
  appendReadings,
  mergeReadings,
  type NewReading,
  parseReadings,
  pruneReadings,
  type Reading,
  readingsPath,
  readReadings,
} from "../src/usage/readings.js";
import { refusalAtEnd } from "../src/usage/transcript.js";
import { sheepdog, tempDir } from "./helpers/cli.js";
import { FIXTURES } from "./helpers/usage.js";

const H = 3600_000;
const NOW = Date.parse("2026-11-30T12:00:00Z");
const at = (ms: number) => new Date(ms).toISOString();

function reading(
  window: Reading["window"],
  used: number,
  resetsMs: number,
  atMs = NOW - H,
  session?: string,
): Reading {
  return {
    at: at(atMs),
    seat: "/s",
    window,
    used_percentage: used,
    resets_at: at(resetsMs),
    source: "statusline",
    ...(session ? { session } : {}),
  };
}
/** A reading of one Claude Code session. */
const of = (session: string, window: Reading["window"], used: number, resetsMs: number) =>
  reading(window, used, resetsMs, NOW - H, session);

describe("mergeReadings", () => {
  const cases: [string, Reading[], ReturnType<typeof mergeReadings>][] = [
    ["no readings", [], { five_hour: null, seven_day: null }],
    [
      "one session: its newest reading counts",
      [of("a", "five_hour", 40, NOW + H), of("a", "five_hour", 55, NOW + H)],
      { five_hour: { used_percentage: 55, resets_at: NOW + H, reset: false }, seven_day: null },
    ],
    [
      "the highest of each session's newest reading",
      [
        of("a", "five_hour", 40, NOW + H),
        of("b", "five_hour", 70, NOW + H),
        of("a", "five_hour", 50, NOW + H),
      ],
      { five_hour: { used_percentage: 70, resets_at: NOW + H, reset: false }, seven_day: null },
    ],
    [
      "an idle session's stale low reading never hides another session's 100 %",
      [of("busy", "five_hour", 100, NOW + 2 * H), of("idle", "five_hour", 12, NOW + 2 * H)],
      {
        five_hour: { used_percentage: 100, resets_at: NOW + 2 * H, reset: false },
        seven_day: null,
      },
    ],
    [
      "a newer reading whose reset moved earlier is taken",
      [of("a", "seven_day", 30, NOW + 72 * H), of("a", "seven_day", 45, NOW + 24 * H)],
      {
        five_hour: null,
        seven_day: { used_percentage: 45, resets_at: NOW + 24 * H, reset: false },
      },
    ],
    [
      "a session whose reset has passed counts as reset beside one still ahead",
      [of("a", "five_hour", 100, NOW - 60_000), of("b", "five_hour", 20, NOW + 2 * H)],
      { five_hour: { used_percentage: 20, resets_at: NOW + 2 * H, reset: false }, seven_day: null },
    ],
    [
      "at the same use, the latest reset",
      [of("a", "five_hour", 100, NOW + H), of("b", "five_hour", 100, NOW + 2 * H)],
      {
        five_hour: { used_percentage: 100, resets_at: NOW + 2 * H, reset: false },
        seven_day: null,
      },
    ],
    [
      "old readings with no session are one session",
      [reading("five_hour", 90, NOW + H), reading("five_hour", 10, NOW + H)],
      { five_hour: { used_percentage: 10, resets_at: NOW + H, reset: false }, seven_day: null },
    ],
    [
      "an older window's higher percentage is ignored",
      [reading("five_hour", 100, NOW - 2 * H), reading("five_hour", 5, NOW + 3 * H)],
      { five_hour: { used_percentage: 5, resets_at: NOW + 3 * H, reset: false }, seven_day: null },
    ],
    [
      "a window whose reset has passed reads as reset",
      [reading("five_hour", 100, NOW - 60_000), reading("seven_day", 81, NOW + 48 * H)],
      {
        five_hour: { used_percentage: 100, resets_at: NOW - 60_000, reset: true },
        seven_day: { used_percentage: 81, resets_at: NOW + 48 * H, reset: false },
      },
    ],
    [
      "reset exactly now counts as reset",
      [reading("seven_day", 100, NOW)],
      { five_hour: null, seven_day: { used_percentage: 100, resets_at: NOW, reset: true } },
    ],
  ];
  it.each(cases)("%s", (_name, input, expected) => {
    expect(mergeReadings(input, NOW)).toEqual(expected);
  });
});

describe("judgeSeat / seatLimit thresholds", () => {
  const merged = (used: number, resets = NOW + 2 * H) =>
    mergeReadings([reading("five_hour", used, resets)], NOW);
  it.each([
    [75, 90, true],
    [90, 90, true],
    [100, 90, false],
    [75, 74.9, false],
    [100, 100, true],
  ])("pause_at %d%% with use %d%% → limited %s", (pauseAt, used, limited) => {
    const r = judgeSeat(merged(used), pauseAt, NOW);
    expect(r.limited).toBe(limited);
    if (limited) {
      expect(r).toMatchObject({ until: at(NOW + 2 * H), window: "five_hour" });
      expect(r.reason).toBe(`five_hour window at ${used}% until 2026-11-30T14:00:00Z`);
    } else expect(r).toMatchObject({ until: null, window: null });
  });

  it("is not limited once the window has reset; with both windows, until is the later", () => {
    expect(judgeSeat(merged(100, NOW - 1), 100, NOW).limited).toBe(false);
    const both = mergeReadings(
      [reading("five_hour", 100, NOW + 2 * H), reading("seven_day", 100, NOW + 50 * H)],
      NOW,
    );
    expect(judgeSeat(both, 100, NOW)).toEqual({
      limited: true,
      until: at(NOW + 50 * H),
      window: "seven_day",
      reason:
        "five_hour window at 100% until 2026-11-30T14:00:00Z; seven_day window at 100% until 2026-12-02T14:00:00Z",
    });
  });

  it("reads the seat's real readings file", () => {
    const env = { ...process.env, SHEEPDOG_STATE_DIR: tempDir() };
    const seat = "/home/ops/.claude-loop";
    expect(seatLimit(seat, 100, NOW, env)).toMatchObject({
      limited: false,
      reason: "no usage readings yet",
    });
    appendReadings(
      seat,
      [{ window: "five_hour", used_percentage: 90, resets_at: at(NOW + H), source: "statusline" }],
      NOW,
      env,
    );
    expect(seatLimit(seat, 75, NOW, env).limited).toBe(true);
    expect(seatLimit(seat, 90, NOW, env).limited).toBe(true);
    expect(seatLimit(seat, 100, NOW, env)).toMatchObject({ limited: false, until: null });
    expect(seatLimit("/another/seat", 75, NOW, env).limited).toBe(false);
  });
});

describe("refusal readings limit the seat until their own reset", () => {
  const refusal = (
    resetsMs: number,
    window: Reading["window"] = "five_hour",
    atMs = NOW - 60_000,
  ): Reading => ({
    at: at(atMs),
    seat: "/s",
    window,
    used_percentage: 100,
    resets_at: at(resetsMs),
    source: "refusal",
    text: "You've hit your limit",
    refusal_at: at(atMs),
  });
  const cases: [
    string,
    Reading[],
    number,
    { limited: boolean; until: string | null; window: Reading["window"] | null; reason: RegExp },
  ][] = [
    [
      "80% resetting in 3h plus a refusal naming no time (fallback 1h)",
      [reading("five_hour", 80, NOW + 3 * H), refusal(NOW + H)],
      100,
      {
        limited: true,
        until: at(NOW + H),
        window: "five_hour",
        reason: /^five_hour usage-limit refusal until 2026-11-30T13:00:00Z$/,
      },
    ],
    [
      "the refusal recorded before the statusline reading",
      [refusal(NOW + H), reading("five_hour", 80, NOW + 3 * H)],
      100,
      { limited: true, until: at(NOW + H), window: "five_hour", reason: /usage-limit refusal/ },
    ],
    [
      "a named refusal reset a minute earlier than the statusline's",
      [reading("five_hour", 97, NOW + 3 * H), refusal(NOW + 3 * H - 60_000)],
      100,
      {
        limited: true,
        until: at(NOW + 3 * H - 60_000),
        window: "five_hour",
        reason: /^five_hour usage-limit refusal until 2026-11-30T14:59:00Z$/,
      },
    ],
    [
      "a weekly refusal while the five-hour window reads 10%",
      [reading("five_hour", 10, NOW + 3 * H), refusal(NOW + 30 * H, "seven_day")],
      100,
      {
        limited: true,
        until: at(NOW + 30 * H),
        window: "seven_day",
        reason: /^seven_day usage-limit refusal until 2026-12-01T18:00:00Z$/,
      },
    ],
    [
      "both a refusal and a full window: until is the later reset, the reason names both",
      [reading("five_hour", 100, NOW + 3 * H), refusal(NOW + H)],
      100,
      {
        limited: true,
        until: at(NOW + 3 * H),
        window: "five_hour",
        reason:
          /^five_hour window at 100% until 2026-11-30T15:00:00Z; five_hour usage-limit refusal until 2026-11-30T13:00:00Z$/,
      },
    ],
    [
      "a refusal limits whatever pause_at_percent is",
      [reading("five_hour", 20, NOW + 3 * H), refusal(NOW + H)],
      50,
      { limited: true, until: at(NOW + H), window: "five_hour", reason: /usage-limit refusal/ },
    ],
    [
      "an expired refusal no longer limits",
      [reading("five_hour", 80, NOW + 3 * H), refusal(NOW - 1, "five_hour", NOW - 2 * H)],
      100,
      { limited: false, until: null, window: null, reason: /^below 100%: five_hour at 80%$/ },
    ],
    [
      "a refusal expiring exactly now no longer limits",
      [refusal(NOW)],
      100,
      { limited: false, until: null, window: null, reason: /no usage readings yet/ },
    ],
    [
      "an older window's higher percentage is still ignored",
      [reading("five_hour", 100, NOW - 2 * H), reading("five_hour", 5, NOW + 3 * H)],
      100,
      { limited: false, until: null, window: null, reason: /five_hour at 5%/ },
    ],
    [
      "75% and 90% are never a limit",
      [reading("five_hour", 75, NOW + 3 * H), reading("seven_day", 90, NOW + 30 * H)],
      100,
      {
        limited: false,
        until: null,
        window: null,
        reason: /^below 100%: five_hour at 75%, seven_day at 90%$/,
      },
    ],
  ];
  it.each(cases)("%s", (_name, readings, pauseAt, expected) => {
    const env = { ...process.env, SHEEPDOG_STATE_DIR: tempDir() };
    const r = seatLimit("/s", pauseAt, NOW, env, readings);
    expect(r).toEqual({ ...expected, reason: expect.stringMatching(expected.reason) });
  });

  it("the merged windows stay the statusline's view", () => {
    expect(
      mergeReadings([reading("five_hour", 80, NOW + 3 * H), refusal(NOW + 4 * H)], NOW),
    ).toEqual({
      five_hour: { used_percentage: 80, resets_at: NOW + 3 * H, reset: false },
      seven_day: null,
    });
  });

  it("pruning keeps an unexpired refusal reading", () => {
    const r = refusal(NOW + H, "five_hour", NOW - 2 * H);
    const later: Reading[] = [];
    for (let i = 0; i < 60; i++)
      later.push(reading("five_hour", 80, NOW + 3 * H, NOW - H + i * 1000));
    const kept = pruneReadings([r, ...later], NOW);
    expect(kept).toContain(r);
    expect(kept.length).toBeLessThan(30);
    const env = { ...process.env, SHEEPDOG_STATE_DIR: tempDir() };
    expect(seatLimit("/s", 100, NOW, env, kept)).toMatchObject({
      limited: true,
      until: at(NOW + H),
    });
  });
});

describe("pruning", () => {
  it("keeps the newest reading of every window and what the merge needs", () => {
    const old: Reading[] = [];
    for (let i = 0; i < 50; i++)
      old.push(reading("five_hour", i, NOW - 10 * 24 * H, NOW - 11 * 24 * H));
    // An idle session's last reading sets the merged value; a busy one reads lower since.
    const peak = reading("seven_day", 97, NOW + 24 * H, NOW - 3 * H, "idle");
    const later: Reading[] = [];
    for (let i = 0; i < 30; i++)
      later.push(reading("seven_day", 60, NOW + 24 * H, NOW - 2 * H + i, "busy"));
    const all = [...old, peak, ...later];
    const kept = pruneReadings(all, NOW);
    expect(kept.length).toBeLessThan(30);
    expect(kept).toContain(old.at(-1)); // the only five_hour proof left: its newest
    expect(kept).toContain(peak); // sets the merged seven_day value
    expect(kept).toContain(later.at(-1));
    expect(kept.filter((r) => r.window === "five_hour")).toHaveLength(1);
    expect(mergeReadings(kept, NOW)).toEqual(mergeReadings(all, NOW));
  });

  it("prunes the file as it grows, keeping the merged values", () => {
    const env = { ...process.env, SHEEPDOG_STATE_DIR: tempDir() };
    const seat = "/seat";
    for (let i = 0; i < 700; i++) {
      const t = NOW - (700 - i) * 30 * 60_000; // one reading every half hour, over two weeks
      const windowEnd = t - (t % (5 * H)) + 5 * H;
      appendReadings(
        seat,
        [
          {
            window: "five_hour",
            used_percentage: i % 97,
            resets_at: at(windowEnd),
            source: "statusline",
          },
          {
            window: "seven_day",
            used_percentage: i % 89,
            resets_at: at(t + 3 * 24 * H),
            source: "statusline",
          },
        ],
        t,
        env,
      );
    }
    const path = readingsPath(seat, env);
    expect(statSync(path).size).toBeLessThan(100 * 1024);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const rows = readReadings(seat, env);
    expect(rows.at(-1)?.used_percentage).toBe(699 % 89);
    const fh = rows.filter((r) => r.window === "five_hour").at(-1);
    expect(fh?.used_percentage).toBe(699 % 97);
  });
});

describe("appendReadings", () => {
  it("starts a new line after a torn last line, and skips a repeat of the newest value", () => {
    const env = { ...process.env, SHEEPDOG_STATE_DIR: tempDir() };
    const r = {
      window: "five_hour" as const,
      used_percentage: 10,
      resets_at: at(NOW + H),
      source: "statusline" as const,
    };
    appendReadings("/seat", [r], NOW, env);
    appendFileSync(readingsPath("/seat", env), '{"at":"2026-11-30T12:00:00Z","seat":"/se');
    expect(appendReadings("/seat", [{ ...r, used_percentage: 20 }], NOW, env)).toHaveLength(1);
    expect(appendReadings("/seat", [{ ...r, used_percentage: 20 }], NOW, env)).toHaveLength(0);
    expect(readReadings("/seat", env).map((x) => x.used_percentage)).toEqual([10, 20]);
  });
});

describe("readings files: a malformed line is skipped, a malformed field dropped", () => {
  const good: Reading = {
    at: at(NOW - H),
    seat: "/s",
    window: "five_hour",
    used_percentage: 40,
    resets_at: at(NOW + H),
    source: "statusline",
    session: "a",
  };
  const line = (patch: Record<string, unknown>) => JSON.stringify({ ...good, ...patch });
  const without = (key: keyof Reading) => {
    const { [key]: _, ...rest } = good;
    return JSON.stringify(rest);
  };
  // [what, line, the reading kept or null when the line is skipped]
  const cases: [string, string, Reading | null][] = [
    ["a whole reading", JSON.stringify(good), good],
    ["a torn line", JSON.stringify(good).slice(0, 40), null],
    ["not JSON at all", "garbage{", null],
    ["null", "null", null],
    ["an array", JSON.stringify([good]), null],
    ["a number", "42", null],
    ["a string", JSON.stringify(JSON.stringify(good)), null],
    ["an unknown window", line({ window: "daily" }), null],
    ["no window", without("window"), null],
    ["a use that is text", line({ used_percentage: "40" }), null],
    ["no use", without("used_percentage"), null],
    ["a reset Date cannot read", line({ resets_at: "soon" }), null],
    ["a reset that is a number", line({ resets_at: NOW + H }), null],
    ["no reset", without("resets_at"), null],
    ["a seat that is a number", line({ seat: 5 }), null],
    ["no seat", without("seat"), null],
    ["a time that is a number: an unknown time", line({ at: 5 }), { ...good, at: "" }],
    ["no time: an unknown time", without("at"), { ...good, at: "" }],
    ["an unknown source: a statusline reading", line({ source: "bogus" }), good],
    ["no source: a statusline reading", without("source"), good],
    [
      "a session that is a number: no session",
      line({ session: 7 }),
      { ...good, session: undefined },
    ],
    ["a text that is an object: no text", line({ text: {} }), good],
    ["a refusal time that is a number: none", line({ refusal_at: 5 }), good],
    ["extra fields: kept without them", line({ extra: 1, nested: { a: 1 } }), good],
    [
      "a refusal reading, whole",
      line({ source: "refusal", text: "limit", refusal_at: at(NOW), session: undefined }),
      { ...good, source: "refusal", text: "limit", refusal_at: at(NOW), session: undefined },
    ],
  ];
  it.each(cases)("%s", (_what, text, expected) => {
    const other = { ...good, used_percentage: 1, session: "b" };
    const file = `${JSON.stringify(other)}\n${text}\n${JSON.stringify(other)}\n`;
    const parsed = parseReadings(file);
    // The good lines around it are kept whatever the line in the middle is.
    expect(parsed[0]).toEqual(other);
    expect(parsed.at(-1)).toEqual(other);
    expect(parsed.slice(1, -1)).toEqual(expected ? [expected] : []);
    // What is kept is a reading, field for field: nothing the schema does not know.
    for (const r of parsed)
      for (const key of Object.keys(r))
        expect(Object.keys(good).concat("text", "refusal_at")).toContain(key);
  });

  it("a malformed newest reading does not count as the newest: the next value is written", () => {
    const env = { ...process.env, SHEEPDOG_STATE_DIR: tempDir() };
    const r: NewReading = {
      window: "five_hour",
      used_percentage: 10,
      resets_at: at(NOW + H),
      source: "statusline",
      session: "a",
    };
    appendReadings("/seat", [r], NOW, env);
    // A newer line of the same series that is no reading (a use that is text), then a torn one.
    appendFileSync(
      readingsPath("/seat", env),
      `${JSON.stringify({ at: at(NOW), seat: "/seat", ...r, used_percentage: "20" })}\n{"at":"2026`,
    );
    expect(appendReadings("/seat", [{ ...r, used_percentage: 10 }], NOW, env)).toHaveLength(0);
    expect(appendReadings("/seat", [{ ...r, used_percentage: 20 }], NOW, env)).toHaveLength(1);
    expect(readReadings("/seat", env).map((x) => x.used_percentage)).toEqual([10, 20]);
  });

  it("the appender's newest reading of a series is the full parse's, whatever the lines hold", () => {
    // Mostly the good value (so most lines are readings), sometimes a wrong or missing one.
    const mostly = (good: unknown, ...bad: unknown[]) =>
      fc.oneof({ arbitrary: fc.constant(good), weight: 4 }, fc.constantFrom(...bad));
    // undefined leaves the field out of the line.
    const rawLine = fc.record({
      at: mostly(at(NOW - H), 5, undefined),
      seat: mostly("/seat", 5, undefined),
      window: fc.constantFrom("five_hour", "seven_day", "daily", undefined),
      used_percentage: fc.constantFrom(10, 20, "20", undefined),
      resets_at: mostly(at(NOW + H), "soon", undefined),
      source: fc.constantFrom("statusline", "refusal", "bogus", undefined, 3),
      session: fc.oneof(
        fc.constantFrom("a", "b", undefined, null, 5, "", {}, []),
        fc.anything({ maxDepth: 1 }),
      ),
      text: mostly(undefined, "limit", 5),
    });
    // What a statusline appends: one reading per window, of one session (or none).
    const incoming = fc.record({
      windows: fc.constantFrom(
        ["five_hour" as const],
        ["five_hour" as const, "seven_day" as const],
      ),
      used_percentage: fc.constantFrom(10, 20),
      session: fc.constantFrom("a", "b", undefined),
    });
    fc.assert(
      fc.property(fc.array(rawLine, { maxLength: 12 }), incoming, (lines, inc) => {
        const env = { ...process.env, SHEEPDOG_STATE_DIR: tempDir() };
        const news: NewReading[] = inc.windows.map((window) => ({
          window,
          used_percentage: inc.used_percentage,
          resets_at: at(NOW + H),
          source: "statusline",
          ...(inc.session === undefined ? {} : { session: inc.session }),
        }));
        // A first reading of each series, then the lines.
        appendReadings(
          "/seat",
          news.map((r) => ({ ...r, used_percentage: 1 })),
          NOW,
          env,
        );
        appendFileSync(
          readingsPath("/seat", env),
          lines.map((l) => `${JSON.stringify(l)}\n`).join(""),
        );
        // The reference: the whole file parsed, each series' last reading.
        const all = readReadings("/seat", env);
        const unchanged = news.filter((r) => {
          const newest = all
            .filter(
              (x) =>
                x.window === r.window &&
                x.source !== "refusal" &&
                (x.session ?? "") === (r.session ?? ""),
            )
            .at(-1);
          return (
            newest?.used_percentage === r.used_percentage &&
            newest.resets_at === r.resets_at &&
            newest.source === r.source &&
            newest.session === r.session &&
            newest.text === undefined &&
            newest.refusal_at === undefined
          );
        });
        expect(appendReadings("/seat", news, NOW, env)).toHaveLength(
          news.length - unchanged.length,
        );
      }),
      { numRuns: 300 },
    );
  });
});

describe("recordRefusalReading", () => {
  it("records the limit fixture's refusal once, as a 100% five_hour reading until its reset", () => {
    const env = { ...process.env, SHEEPDOG_STATE_DIR: tempDir() };
    const refusal = refusalAtEnd(join(FIXTURES, "transcript-limit.jsonl"));
    expect(refusal).not.toBeNull();
    const now = 1794506400 * 1000 - H;
    const r = recordRefusalReading("/seat", refusal as NonNullable<typeof refusal>, H, now, env);
    expect(r).toMatchObject({
      window: "five_hour",
      used_percentage: 100,
      resets_at: "2026-11-12T18:00:00.000Z",
      source: "refusal",
    });
    recordRefusalReading("/seat", refusal as NonNullable<typeof refusal>, H, now + 60_000, env);
    expect(readReadings("/seat", env)).toHaveLength(1);
    expect(seatLimit("/seat", 100, now, env)).toMatchObject({
      limited: true,
      until: "2026-11-12T18:00:00.000Z",
      window: "five_hour",
    });
  });

  it("uses the fallback when the text names no reset, and seven_day for a weekly text", () => {
    const env = { ...process.env, SHEEPDOG_STATE_DIR: tempDir() };
    const r = recordRefusalReading(
      "/seat",
      { text: "You've hit your weekly limit", resets_at: null, at: null },
      2 * H,
      NOW,
      env,
    );
    expect(r).toMatchObject({ window: "seven_day", resets_at: at(NOW + 2 * H) });
    expect(seatLimit("/seat", 100, NOW, env)).toMatchObject({ limited: true, window: "seven_day" });
    expect(seatLimit("/seat", 100, NOW + 2 * H, env).limited).toBe(false);
  });
});

describe("sheepdog usage", () => {
  const input = readFileSync(join(FIXTURES, "statusline-input.json"), "utf8");

  it("--json gives the merged windows per seat", () => {
    const state = tempDir();
    const seatA = join(state, "seat-a");
    const seatB = join(state, "seat-b");
    const soon = Math.floor(Date.now() / 1000) + 3600;
    const live = JSON.parse(input);
    live.rate_limits.five_hour = { used_percentage: 100, resets_at: soon };
    for (const [seat, body] of [
      [seatA, input],
      [seatB, JSON.stringify(live)],
    ] as const) {
      const r = sheepdog(["statusline"], {
        env: { SHEEPDOG_STATE_DIR: state, CLAUDE_CONFIG_DIR: seat },
        input: body,
      });
      expect(r.code).toBe(0);
    }
    const r = sheepdog(["usage", "--json"], { env: { SHEEPDOG_STATE_DIR: state } });
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out).toEqual({
      seats: [
        {
          seat: seatA,
          limited: false,
          reason: expect.stringContaining("five_hour reset"),
          windows: {
            five_hour: { used_percentage: 30, resets_at: "2025-11-13T10:00:00.000Z", reset: true },
            seven_day: { used_percentage: 81, resets_at: "2025-11-18T10:00:00.000Z", reset: true },
          },
        },
        {
          seat: seatB,
          limited: true,
          reason: expect.stringMatching(
            /^five_hour window at 100% until \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/,
          ),
          windows: {
            five_hour: { used_percentage: 100, resets_at: at(soon * 1000), reset: false },
            seven_day: { used_percentage: 81, resets_at: "2025-11-18T10:00:00.000Z", reset: true },
          },
        },
      ],
    });
    const one = sheepdog(["usage", "--seat", seatB, "--json"], {
      env: { SHEEPDOG_STATE_DIR: state },
    });
    expect(JSON.parse(one.stdout).seats.map((s: { seat: string }) => s.seat)).toEqual([seatB]);
    const human = sheepdog(["usage"], { env: { SHEEPDOG_STATE_DIR: state } });
    expect(human.code).toBe(0);
    const lines = human.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^seat\s+window\s+used\s+resets\s+state$/);
    expect(lines).toContainEqual(
      expect.stringMatching(/five_hour\s+100%\s+\d{4}-\d\d-\d\d \d\d:\d\d \S+\s+limited$/),
    );
    expect(lines.at(-1)).toMatch(/seat-b: limited: five_hour window at 100%/);
  });

  it("--json: a refusal limits the seat until its own reset, over a later statusline reset", () => {
    const state = tempDir();
    const seat = join(state, "seat");
    const env = { ...process.env, SHEEPDOG_STATE_DIR: state };
    const now = Date.now();
    const later = Math.floor(now / 1000) + 3 * 3600;
    const live = JSON.parse(input);
    live.rate_limits.five_hour = { used_percentage: 80, resets_at: later };
    live.rate_limits.seven_day = { used_percentage: 40, resets_at: later + 24 * 3600 };
    const r = sheepdog(["statusline"], {
      env: { SHEEPDOG_STATE_DIR: state, CLAUDE_CONFIG_DIR: seat },
      input: JSON.stringify(live),
    });
    expect(r.code).toBe(0);
    const report = () => {
      const u = sheepdog(["usage", "--seat", seat, "--json"], {
        env: { SHEEPDOG_STATE_DIR: state },
      });
      expect(u.code).toBe(0);
      return JSON.parse(u.stdout).seats[0];
    };
    const windows = {
      five_hour: { used_percentage: 80, resets_at: at(later * 1000), reset: false },
      seven_day: { used_percentage: 40, resets_at: at((later + 24 * 3600) * 1000), reset: false },
    };
    expect(report()).toEqual({
      seat,
      limited: false,
      reason: "below 100%: five_hour at 80%, seven_day at 40%",
      windows,
    });

    // An expired refusal (its fallback passed) changes nothing.
    const text = "You've hit your limit";
    recordRefusalReading(seat, { text, resets_at: null, at: at(now - 3 * H) }, H, now - 2 * H, env);
    expect(report()).toMatchObject({ limited: false, windows });

    // A refusal naming no time: limited for the fallback, the windows unchanged.
    recordRefusalReading(seat, { text, resets_at: null, at: at(now - 1000) }, H, now, env);
    expect(report()).toEqual({
      seat,
      limited: true,
      reason: expect.stringMatching(
        /^five_hour usage-limit refusal until \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/,
      ),
      windows,
    });
    const human = sheepdog(["usage", "--seat", seat], { env: { SHEEPDOG_STATE_DIR: state } });
    expect(human.stdout).toMatch(/five_hour\s+80%\s+\d{4}-\d\d-\d\d \d\d:\d\d \S+\s+limited\n/);
    expect(human.stdout).toMatch(/seat: limited: five_hour usage-limit refusal until/);
  });

  it("--json: a named refusal reset a minute before the statusline's still limits", () => {
    const state = tempDir();
    const seat = join(state, "seat");
    const env = { ...process.env, SHEEPDOG_STATE_DIR: state };
    const later = Math.floor(Date.now() / 1000) + 3 * 3600;
    const live = JSON.parse(input);
    live.rate_limits.five_hour = { used_percentage: 95, resets_at: later };
    sheepdog(["statusline"], {
      env: { SHEEPDOG_STATE_DIR: state, CLAUDE_CONFIG_DIR: seat },
      input: JSON.stringify(live),
    });
    const refusal = {
      text: "You've hit your limit · resets 3pm",
      resets_at: later - 60,
      at: at(Date.now() - 1000),
    };
    recordRefusalReading(seat, refusal, H, Date.now(), env);
    const u = sheepdog(["usage", "--seat", seat, "--json"], { env: { SHEEPDOG_STATE_DIR: state } });
    const out = JSON.parse(u.stdout).seats[0];
    expect(out).toMatchObject({
      limited: true,
      reason: `five_hour usage-limit refusal until ${shortTime((later - 60) * 1000)}`,
    });
    expect(out.windows.five_hour).toEqual({
      used_percentage: 95,
      resets_at: at(later * 1000),
      reset: false,
    });
    expect(seatLimit(seat, 100, Date.now(), env)).toMatchObject({
      limited: true,
      until: at((later - 60) * 1000),
      window: "five_hour",
    });
  });

  it("an unknown seat has no windows; bad flags exit 2", () => {
    const state = tempDir();
    const r = sheepdog(["usage", "--seat", "/nowhere", "--json"], {
      env: { SHEEPDOG_STATE_DIR: state },
    });
    expect(JSON.parse(r.stdout)).toEqual({
      seats: [
        {
          seat: "/nowhere",
          limited: false,
          reason: "no usage readings yet",
          windows: { five_hour: null, seven_day: null },
        },
      ],
    });
    expect(sheepdog(["usage"], { env: { SHEEPDOG_STATE_DIR: state } }).stdout).toMatch(
      /no usage readings yet/,
    );
    const bad = sheepdog(["usage", "--bogus"], { env: { SHEEPDOG_STATE_DIR: state } });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--bogus/);
    expect(sheepdog(["usage", "--seat", ""], { env: { SHEEPDOG_STATE_DIR: state } }).code).toBe(2);
  });
});
