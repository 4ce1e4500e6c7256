// What sheepdog reads off the real Claude Code 2.1.328's own files (test/fixtures/claude-2.1.328/,
// written by the real CLI against the scripted API: see its README): transcripts, statusline
// inputs and StopFailure payloads, each read the way the watchdog, `save` and the hooks read them.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseRefusal } from "../../src/usage/refusal.js";
import { readingsOf, readStatusInput } from "../../src/usage/status-input.js";
import { readStopFailure, refusalOfStopFailure } from "../../src/usage/stop-failure.js";
import { contextTokensOf, refusalAtEnd } from "../../src/usage/transcript.js";

const DIR = join(__dirname, "../fixtures/claude-2.1.328");
const file = (name: string) => join(DIR, name);
const json = (name: string) => JSON.parse(readFileSync(file(name), "utf8"));

/** The refusal line's own time, text and structured reset in the captured transcript. */
function refusalLine(): { at: number; text: string; resetsAt: number } {
  for (const l of readFileSync(file("transcript-usage-limit.jsonl"), "utf8").split("\n")) {
    if (!l.includes("usage_limit_reached")) continue;
    const e = JSON.parse(l);
    return {
      at: Date.parse(e.timestamp),
      text: e.message.content[0].text,
      resetsAt: e.apiErrorParams.rate_limit_info.resetsAt,
    };
  }
  throw new Error("no refusal line in transcript-usage-limit.jsonl");
}

describe("transcripts", () => {
  it("a tool turn: the context of the last main-thread answer (input + cache writes + reads)", () => {
    // "Done." answered with usage(14,200): input 4 + cache_creation 200 + cache_read 14,200.
    expect(contextTokensOf(file("transcript-tool-turn.jsonl"))).toBe(14_404);
  });

  it("after /compact: the compact_boundary's postTokens", () => {
    const text = readFileSync(file("transcript-after-compact.jsonl"), "utf8");
    const post = /"postTokens":(\d+)/.exec(text)?.[1];
    expect(post).toBeDefined();
    expect(contextTokensOf(file("transcript-after-compact.jsonl"))).toBe(Number(post));
  });

  it("a five-hour limit: the synthetic refusal is found at the end, past the metadata lines after it, its structured reset exact", () => {
    const { at, text, resetsAt } = refusalLine();
    const r = refusalAtEnd(file("transcript-usage-limit.jsonl"), "UTC");
    expect(r).toMatchObject({ text, window: "five_hour", exact: true, limit_type: "five_hour" });
    expect(r?.text).toMatch(/^You've hit your 5-hour limit · resets \d{1,2}:\d\dam \(UTC\)$/);
    // The structured reset (apiErrorParams.rate_limit_info.resetsAt) to the second.
    expect(r?.resets_at).toBe(resetsAt);
    expect(resetsAt * 1000).toBeGreaterThan(at);
    // The text alone names its minute, rounded down: never later than the structured reset.
    const fromText = parseRefusal(text, at, "UTC")?.resets_at ?? 0;
    expect(fromText).toBe(Math.floor(resetsAt / 60) * 60);
  });

  it("a reset in the refusal's own minute is the end of that minute, not tomorrow", () => {
    const { at, text } = refusalLine();
    const d = new Date(at);
    const h = d.getUTCHours();
    const clock = `${h % 12 === 0 ? 12 : h % 12}:${String(d.getUTCMinutes()).padStart(2, "0")}${h < 12 ? "am" : "pm"}`;
    const sameMinute = text.replace(/resets [^(]+\(/, `resets ${clock} (`);
    const r = parseRefusal(sameMinute, at, "UTC");
    const minuteStart = Math.floor(at / 60_000) * 60_000;
    // The end of that minute (a moment ahead), not the same clock time tomorrow.
    expect(r?.resets_at).toBe((minuteStart + 60_000) / 1000);
  });

  it("an API-key session's 529 and 429 are no limit", () => {
    expect(refusalAtEnd(file("transcript-errors-api-key.jsonl"), "UTC")).toBeNull();
  });
});

describe("statusline inputs", () => {
  it("right after /compact current_usage is all zeros and used_percentage 0: unknown, not 0", () => {
    const input = json("statusline-after-compact.json");
    expect(input.context_window.current_usage).toMatchObject({
      input_tokens: 0,
      cache_read_input_tokens: 0,
    });
    expect(readStatusInput(input).context_tokens).toBeNull();
  });

  it("a subscriber's input: context from current_usage, readings 30 % and 81 %", () => {
    const s = readStatusInput(json("statusline-subscriber.json"));
    expect(s.context_tokens).toBe(14_204);
    expect(s.context_size).toBe(1_000_000);
    const readings = readingsOf(s);
    expect(readings.map((r) => [r.window, r.used_percentage])).toEqual([
      ["five_hour", 30],
      ["seven_day", 81],
    ]);
  });

  it("an API-key user's input carries no rate_limits: no readings", () => {
    const s = readStatusInput(json("statusline-api-key.json"));
    expect(readingsOf(s)).toEqual([]);
    expect(s.context_tokens).toBeGreaterThan(0);
  });
});

describe("StopFailure payloads", () => {
  const refusal = (name: string) => {
    const stop = readStopFailure(json(name));
    return stop ? refusalOfStopFailure(stop, Date.now(), "UTC") : null;
  };
  it("a usage limit (rate_limit, You've hit your 5-hour limit · resets …) is a refusal", () => {
    expect(refusal("hook-stop-failure-rate-limit.json")).toMatchObject({
      text: expect.stringMatching(/^You've hit your 5-hour limit/),
      window: "five_hour",
    });
  });
  it("a subscriber's 429 without unified headers is error rate_limit too, but no limit (its text says so)", () => {
    expect(json("hook-stop-failure-429-no-unified.json").error).toBe("rate_limit");
    expect(refusal("hook-stop-failure-429-no-unified.json")).toBeNull();
  });
  it("an API key's 429 (Request rejected) and a 529 (server_error) are no limit", () => {
    expect(refusal("hook-stop-failure-429-api-key.json")).toBeNull();
    expect(refusal("hook-stop-failure-529.json")).toBeNull();
  });
  it("other hooks' payloads are not StopFailure", () => {
    for (const name of ["hook-stop.json", "hook-notification-idle.json", "hook-session-start.json"])
      expect(readStopFailure(json(name))).toBeNull();
  });
});
