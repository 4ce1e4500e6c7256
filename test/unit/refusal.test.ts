// Usage-limit refusals (DESIGN §5): every text Claude Code 2.1.328 and 2.1.332 print
// (test/fixtures/claude-limits/texts.json, including the ones that could not be produced
// offline), the structured reading that comes before the text, the newest refusal at the end of
// a transcript, and the structured reading replacing the StopFailure hook's text reading.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { judgeReadings, recordedRefusal, refusalReading } from "../../src/usage/limit.js";
import type { Reading } from "../../src/usage/readings.js";
import {
  isLimitText,
  parseRefusal,
  structuredRefusal,
  windowOfLimitType,
} from "../../src/usage/refusal.js";
import { readStopFailure, refusalOfStopFailure } from "../../src/usage/stop-failure.js";
import { refusalAtEnd } from "../../src/usage/transcript.js";
import { tempDir } from "../helpers/cli.js";
import {
  apiErrorLine,
  assistantLine,
  FIXTURES,
  limitLine,
  userLine,
  writeTranscript,
} from "../helpers/usage.js";

const table = JSON.parse(readFileSync(join(FIXTURES, "claude-limits", "texts.json"), "utf8")) as {
  entry_time: string;
  local_zone: string;
  is: { case: string; text: string; window: string; reset: string | null; needs_person?: string }[];
  is_not: { case: string; text: string }[];
};
const AT = Date.parse(table.entry_time);
/** The session test/helpers/usage.ts writes its lines in. */
const SESSION = "5c0f4a7e-2b1d-4c55-9a53-0f1e2d3c4b5a";
const iso = (s: number | null | undefined) =>
  s === null || s === undefined ? null : new Date(s * 1000).toISOString();

describe("every limit text of 2.1.328 and 2.1.332", () => {
  it.each(table.is)("$case is: $text", (row) => {
    const r = parseRefusal(row.text, AT, table.local_zone);
    expect(r).not.toBeNull();
    expect(r?.window).toBe(row.window);
    expect(iso(r?.resets_at)).toBe(row.reset);
    expect(r?.needs_person).toBe(row.needs_person);
    expect(r?.untrusted_reset).toBeUndefined();
  });
  it.each(table.is_not)("$case is not: $text", (row) => {
    expect(isLimitText(row.text)).toBe(false);
    expect(parseRefusal(row.text, AT, table.local_zone)).toBeNull();
  });
});

describe("the structured reading (apiErrorParams.rate_limit_info) before the text", () => {
  const R = Math.floor(AT / 1000) + 25 * 60 + 25; // 12:25:34, the text says 12:25pm
  it.each([
    ["five_hour", "five_hour"],
    ["seven_day", "seven_day"],
    ["seven_day_opus", "seven_day"],
    ["seven_day_sonnet", "seven_day"],
    ["seven_day_overage_included", "seven_day"],
    ["overage", "seven_day"],
    [null, "seven_day"],
    ["a_type_from_a_later_version", "seven_day"],
  ])("rateLimitType %s is the %s window", (type, window) => {
    expect(windowOfLimitType(type)).toBe(window);
  });

  it("the reset is resetsAt to the second, not the text's minute", () => {
    const text = "You've hit your 5-hour limit · resets 12:25pm (UTC)";
    expect(parseRefusal(text, AT, "UTC")?.resets_at).toBe(R - 34);
    expect(
      structuredRefusal({ status: "rejected", resets_at: R, type: "five_hour" }, text, AT),
    ).toEqual({
      resets_at: R,
      window: "five_hour",
    });
  });

  it("a text naming no reset pauses for the fallback and needs a person, whatever resetsAt says (c11, c13)", () => {
    for (const [text, type, advice] of [
      [
        "You've hit your org's monthly spend limit · ask your admin to raise it at https://claude.ai/admin-settings/usage",
        "overage",
        "ask your admin to raise it at https://claude.ai/admin-settings/usage",
      ],
      [
        "Usage is paused for your organization. For help, please contact support.",
        null,
        "For help, please contact support.",
      ],
    ] as const)
      expect(structuredRefusal({ status: "rejected", resets_at: R, type }, text, AT)).toEqual({
        resets_at: null,
        window: "seven_day",
        needs_person: advice,
      });
  });

  it("a resetsAt further than its window is not trusted (DESIGN §5)", () => {
    const far = Math.floor(AT / 1000) + 8 * 86_400;
    const r = structuredRefusal({ status: "rejected", resets_at: far, type: "seven_day" }, "", AT);
    expect(r).toEqual({ resets_at: null, window: "seven_day", untrusted_reset: iso(far) });
    const five = structuredRefusal(
      { status: "rejected", resets_at: Math.floor(AT / 1000) + 6 * 3600, type: "five_hour" },
      "",
      AT,
    );
    expect(five.resets_at).toBeNull();
  });

  it("an unrecognised text with a structured refusal is still a limit until resetsAt", () => {
    const r = structuredRefusal(
      { status: "rejected", resets_at: R, type: "seven_day_opus" },
      "Something new a later version prints",
      AT,
    );
    expect(r).toEqual({ resets_at: R, window: "seven_day" });
  });
});

describe("refusalAtEnd: the newest refusal at the end wins", () => {
  const t = (s: number) => new Date(AT + s * 1000).toISOString();
  const five = "You've hit your 5-hour limit · resets 12:25pm (UTC)";
  const fable = "You've hit your Fable limit · resets Dec 5, 6:58pm (UTC)";
  const fableReset = Date.parse("2026-12-05T18:58:25Z") / 1000;
  const file = (lines: string[]) => writeTranscript(join(tempDir(), "t.jsonl"), lines);
  const work = assistantLine({ input: 4, cc: 200, cr: 14_000 }, { timestamp: t(-60) });

  it("a Fable refusal after a cancelled 5-hour one is the Fable one (structured: exact)", () => {
    const path = file([
      work,
      limitLine(five, t(0), { resetsAt: AT / 1000 + 1525, rateLimitType: "five_hour" }),
      userLine("go on"),
      limitLine(fable, t(30), {
        resetsAt: fableReset,
        rateLimitType: "seven_day_overage_included",
      }),
    ]);
    expect(refusalAtEnd(path, "UTC")).toEqual({
      text: fable,
      at: t(30),
      resets_at: fableReset,
      window: "seven_day",
      exact: true,
      limit_type: "seven_day_overage_included",
      session: SESSION,
      from: "transcript",
    });
  });

  it("the same, text only (an older CLI): the Fable one, to its minute", () => {
    const path = file([
      work,
      apiErrorLine(five, t(0)),
      userLine("go on"),
      apiErrorLine(fable, t(30)),
    ]);
    expect(refusalAtEnd(path, "UTC")).toMatchObject({
      text: fable,
      window: "seven_day",
      resets_at: Date.parse("2026-12-05T18:58:00Z") / 1000,
    });
  });

  it("a newer API error that is no limit (not your usage limit) means the older refusal is over", () => {
    const c14 = JSON.stringify({
      ...JSON.parse(
        apiErrorLine(
          "API Error: Server is temporarily limiting requests (not your usage limit) · This request would exceed your account's rate limit. Please try again later.",
          t(30),
        ),
      ),
      error: "rate_limit",
      apiErrorStatus: 429,
      apiErrorIsTransient: true,
    });
    const path = file([
      work,
      limitLine(five, t(0), { resetsAt: AT / 1000 + 1525, rateLimitType: "five_hour" }),
      userLine("go on"),
      c14,
    ]);
    expect(refusalAtEnd(path, "UTC")).toBeNull();
  });

  it("c13 (dailyCapPaused, no rateLimitType): no reset, a person must act", () => {
    const text = "Usage is paused for your organization. For help, please contact support.";
    const path = file([
      work,
      limitLine(text, t(0), { resetsAt: AT / 1000 + 600, dailyCapPaused: true }),
    ]);
    expect(refusalAtEnd(path, "UTC")).toEqual({
      text,
      at: t(0),
      resets_at: null,
      window: "seven_day",
      needs_person: "For help, please contact support.",
      session: SESSION,
      from: "transcript",
    });
  });
});

describe("the structured reading replaces the hook's text reading of the same refusal", () => {
  // The refusal at 12:25:03; the header's reset at 12:25:40, printed "resets 12:25pm": the
  // text read alone is the end of that minute (12:26:00), past the real reset.
  const at = Date.parse("2026-12-03T12:25:03Z");
  const exactReset = Date.parse("2026-12-03T12:25:40Z") / 1000;
  const text = "You've hit your 5-hour limit · resets 12:25pm (UTC)";
  const hook = refusalOfStopFailure(
    readStopFailure({
      hook_event_name: "StopFailure",
      error: "rate_limit",
      last_assistant_message: text,
    }) as NonNullable<ReturnType<typeof readStopFailure>>,
    at + 300,
    "UTC",
  );
  const seat = "/home/u/.claude";
  const hookReading = refusalReading(seat, hook as NonNullable<typeof hook>, 3600_000, at + 300);
  const structured = {
    text,
    at: new Date(at).toISOString(),
    resets_at: exactReset,
    window: "five_hour" as const,
    exact: true as const,
    limit_type: "five_hour",
  };

  it("a second refusal of the same session and text, seconds later, is a refusal of its own", () => {
    const first = { ...structured, session: "s1", from: "transcript" as const };
    const recorded = refusalReading(seat, first, 3600_000, at + 2000);
    const second = { ...first, at: new Date(at + 20_000).toISOString() };
    expect(recordedRefusal([recorded], second)).toBeNull();
    expect(recordedRefusal([recorded], first)).toBe(recorded);
    // Another session's hook reading of the same text is not this refusal's.
    const textOnly = { text, at: structured.at, resets_at: null, session: "s1" };
    expect(recordedRefusal([{ ...hookReading, session: "s1" }], textOnly)).not.toBeNull();
    expect(recordedRefusal([{ ...hookReading, session: "s2" }], textOnly)).toBeNull();
  });

  it("the hook alone: the end of the text's minute", () => {
    expect(hookReading.resets_at).toBe("2026-12-03T12:26:00.000Z");
    expect(hookReading.exact).toBeUndefined();
    expect(judgeReadings([hookReading], 100, at + 1000).until).toBe("2026-12-03T12:26:00.000Z");
  });

  it("with the transcript's structured entry: the hook's reading does not count as recorded, and the pause ends at the exact reset", () => {
    expect(recordedRefusal([hookReading], structured)).toBeNull();
    const exact = refusalReading(seat, structured, 3600_000, at + 2000);
    expect(exact).toMatchObject({ exact: true, limit_type: "five_hour" });
    const readings: Reading[] = [hookReading, exact];
    expect(judgeReadings(readings, 100, at + 3000).until).toBe("2026-12-03T12:25:40.000Z");
    expect(recordedRefusal(readings, structured)).toBe(exact);
    // After the exact reset, the hook's later minute no longer limits the seat.
    expect(judgeReadings(readings, 100, exactReset * 1000 + 1000).limited).toBe(false);
  });
});
