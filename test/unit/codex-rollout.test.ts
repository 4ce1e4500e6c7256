// The Codex rollout reader (src/agent/codex/rollout.ts) on the real rollouts of Codex 0.171.0
// (test/fixtures/codex-0.171.0/, captured by `npm run capture:codex`: see its README). A rollout
// is append-only, so a prefix of a captured one is the same session at an earlier moment; a
// rollout moved in time has every time in it shifted, and its refusal's text printed again
// the way Codex prints it, in the zone the test names.
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readRollout, retryAtOf } from "../../src/agent/codex/rollout.js";
import { LINE_CAP, linesBackward } from "../../src/usage/backward.js";
import { instantOfWallTime, wallTimeOf } from "../../src/util/wall-clock.js";
import { tempDir } from "../helpers/cli.js";
import { FIXTURES } from "../helpers/fixtures.js";

const DIR = join(FIXTURES, "codex-0.171.0");
const fixture = (name: string) => readFileSync(join(DIR, name), "utf8");
// biome-ignore lint/suspicious/noExplicitAny: rollout lines as written
type Entry = { timestamp: string; type: string; payload: any };
const entries = (text: string): Entry[] =>
  text
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l));
const toText = (es: Entry[]) => `${es.map((e) => JSON.stringify(e)).join("\n")}\n`;

/** The rollout through the last line `keep` takes (the session as it stood then). */
function cut(text: string, keep: (e: Entry) => boolean, nth = -1): string {
  const es = entries(text);
  const at = es.map((e, i) => (keep(e) ? i : -1)).filter((i) => i >= 0);
  const i = nth < 0 ? at.at(nth) : at[nth];
  if (i === undefined) throw new Error("no such line");
  return toText(es.slice(0, i + 1));
}

const kind = (k: string) => (e: Entry) => e.payload?.type === k;
const tokenCounts = (text: string) => entries(text).filter(kind("token_count"));
const taskComplete = (text: string) => entries(text).filter(kind("task_complete")).at(-1) as Entry;

const TMP = tempDir("codex-rollout-");
afterAll(() => rmSync(TMP, { recursive: true, force: true }));
let n = 0;
/** Reads `text` the way the watchdog would: from a file, backwards. */
function read(text: string, localZone = "UTC") {
  const file = join(TMP, `rollout-${n++}.jsonl`);
  writeFileSync(file, text);
  return readRollout(linesBackward(file), { localZone });
}

const SUFFIX = (d: number) =>
  d >= 11 && d <= 13
    ? "th"
    : (({ 1: "st", 2: "nd", 3: "rd" } as Record<number, string>)[d % 10] ?? "th");
const MON = "Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec".split(" ");

/**
 * A reset as Codex 0.171.0 prints it (codex-rs `format_retry_timestamp`): in the local zone,
 * truncated to the minute, `2:04 PM` on the day it is printed, else `Dec 7th, 2026 1:24 AM`.
 */
function codexTime(resetMs: number, nowMs: number, zone: string): string {
  const r = wallTimeOf(resetMs, zone);
  const now = wallTimeOf(nowMs, zone);
  const clock = `${r.h % 12 === 0 ? 12 : r.h % 12}:${String(r.mi).padStart(2, "0")} ${r.h < 12 ? "AM" : "PM"}`;
  if (r.y === now.y && r.mo === now.mo && r.d === now.d) return clock;
  return `${MON[r.mo - 1]} ${r.d}${SUFFIX(r.d)}, ${r.y} ${clock}`;
}

const MS_KEYS = /"(started_at_ms|completed_at_ms|turn_started_at_unix_ms)":(\d+)/g;
const S_KEYS = /"(started_at|completed_at|resets_at)":(\d+)/g;

/**
 * The rollout `deltaMs` later: every timestamp and epoch in it shifted, and a refusal's
 * `try again at …` printed anew in `zone` from `resetMs` (its reset before the move).
 */
function moved(text: string, deltaMs: number, zone = "UTC", resetMs?: number): string {
  const es = entries(
    text
      .replace(/"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)"/g, (_, t) =>
        JSON.stringify(new Date(Date.parse(t) + deltaMs).toISOString()),
      )
      .replace(MS_KEYS, (_, k, v) => `"${k}":${Number(v) + deltaMs}`)
      .replace(S_KEYS, (_, k, v) => `"${k}":${Number(v) + Math.round(deltaMs / 1000)}`),
  );
  if (resetMs !== undefined)
    for (const e of es) {
      const err = e.payload?.error;
      if (e.payload?.type === "task_complete" && typeof err?.message === "string")
        err.message = err.message.replace(
          /try again at [^.]+\./,
          `try again at ${codexTime(resetMs + deltaMs, Date.parse(e.timestamp), zone)}.`,
        );
    }
  return toText(es);
}

/** The rollout with every `rate_limits` window's `resets_at` dropped (no reset header). */
function withoutHeaderResets(text: string): string {
  const es = entries(text);
  for (const e of es)
    for (const w of ["primary", "secondary"])
      if (e.payload?.rate_limits?.[w]) e.payload.rate_limits[w].resets_at = null;
  return toText(es);
}

describe("context tokens and the window", () => {
  it("a tool turn: the last response's input tokens, Codex's window", () => {
    // The fake answered the tool call with input 2500, then the text with input 2600.
    const r = read(fixture("rollout-tool-turn.jsonl"));
    expect(r.context_tokens).toBe(2600);
    expect(r.model_context_window).toBe(475000);
  });

  it("before the first response's usage, none; the window from task_started", () => {
    const r = read(cut(fixture("rollout-tool-turn.jsonl"), kind("function_call")));
    expect(r.context_tokens).toBeNull();
    expect(r.model_context_window).toBe(475000);
  });

  it("during a call, before its token_count: the response's token_usage_record (a save in its own call)", () => {
    // The captured open call: function_call, then the response's token_usage_record (input
    // 2500); the token_count comes only after the call's output.
    const open = fixture("rollout-call-open.jsonl");
    expect(tokenCounts(open)).toEqual([]);
    expect(read(open).context_tokens).toBe(2500);
    const second = cut(fixture("rollout-tool-turn.jsonl"), (e) => e.type === "token_usage_record");
    expect(read(second).context_tokens).toBe(2600);
  });

  it("a record before a compaction does not count after it", () => {
    const es = entries(fixture("rollout-after-compaction.jsonl"));
    const c = es.findIndex((e) => e.type === "compacted");
    const estimate = es.slice(c).find(kind("token_count")) as Entry;
    const until = toText(es.slice(0, es.indexOf(estimate) + 1));
    expect(read(until).context_tokens).toBe(estimate.payload.info.last_token_usage.total_tokens);
    const next = es.slice(es.indexOf(estimate)).find((e) => e.type === "token_usage_record");
    expect(read(toText(es.slice(0, es.indexOf(next as Entry) + 1))).context_tokens).toBe(1500);
  });

  it("after an auto-compaction: the next response's input", () => {
    const r = read(fixture("rollout-after-compaction.jsonl"));
    expect(r.context_tokens).toBe(1500);
    // model_context_window = 12000 configured gives 11400 (95 %).
    expect(r.model_context_window).toBe(11400);
  });

  it("right after the compacted line's token_count: its total_tokens, Codex's estimate", () => {
    const text = fixture("rollout-after-compaction.jsonl");
    const es = entries(text);
    const c = es.findIndex((e) => e.type === "compacted");
    const next = es.slice(c).find(kind("token_count")) as Entry;
    expect(next.payload.info.last_token_usage.input_tokens).toBe(0);
    const r = read(toText(es.slice(0, es.indexOf(next) + 1)));
    expect(r.context_tokens).toBe(next.payload.info.last_token_usage.total_tokens);
    expect(r.context_tokens).toBeGreaterThan(0);
  });

  it("between the compacted line and its token_count: unknown, not the count before it", () => {
    const r = read(cut(fixture("rollout-after-compaction.jsonl"), (e) => e.type === "compacted"));
    expect(r.context_tokens).toBeNull();
    expect(r.model_context_window).toBe(11400);
  });

  it("before the compaction: the summary request's own input", () => {
    const text = fixture("rollout-after-compaction.jsonl");
    const es = entries(text);
    const c = es.findIndex((e) => e.type === "compacted");
    expect(read(toText(es.slice(0, c))).context_tokens).toBe(6100);
  });

  it("a zero-input count with no compaction before it is unknown", () => {
    const es = entries(fixture("rollout-tool-turn.jsonl"));
    const last = es.filter(kind("token_count")).at(-1) as Entry;
    last.payload.info.last_token_usage.input_tokens = 0;
    expect(read(toText(es)).context_tokens).toBeNull();
  });

  it("a resumed session: the second turn's", () => {
    expect(read(fixture("rollout-resumed.jsonl")).context_tokens).toBe(2700);
  });
});

describe("usage readings", () => {
  it("from the newest rate_limits: primary 300 min → five_hour, secondary 10080 → seven_day", () => {
    const text = fixture("rollout-tool-turn.jsonl");
    const rl = (tokenCounts(text).at(-1) as Entry).payload.rate_limits;
    const r = read(text);
    expect(r.readings?.windows).toEqual([
      {
        window: "five_hour",
        used_percentage: 42.5,
        resets_at: rl.primary.resets_at,
        window_minutes: 300,
      },
      {
        window: "seven_day",
        used_percentage: 12,
        resets_at: rl.secondary.resets_at,
        window_minutes: 10080,
      },
    ]);
    expect(r.readings?.limit_id).toBe("codex");
  });

  it("the TUI's second response moved the five-hour window to 43 %", () => {
    const r = read(fixture("rollout-tui-turn.jsonl"));
    expect(r.readings?.windows.map((w) => [w.window, w.used_percentage])).toEqual([
      ["five_hour", 43],
      ["seven_day", 12],
    ]);
  });

  it("an API-key seat's responses carry none: no readings", () => {
    expect(read(fixture("rollout-after-compaction.jsonl")).readings).toBeNull();
    expect(read(fixture("rollout-rate-limit-429.jsonl")).readings).toBeNull();
  });

  it("a window of another length is not a five-hour or weekly one", () => {
    const es = entries(fixture("rollout-tool-turn.jsonl"));
    for (const e of es.filter(kind("token_count")))
      e.payload.rate_limits.primary.window_minutes = 60;
    expect(read(toText(es)).readings?.windows.map((w) => w.window)).toEqual(["seven_day"]);
  });
});

describe("the refusal", () => {
  const near = fixture("rollout-usage-limit-near.jsonl");
  const nearReset = (tokenCounts(near).at(-1) as Entry).payload.rate_limits.primary
    .resets_at as number;

  it("usage_limit_exceeded: exact, the resets_at of the window at 100 %", () => {
    const done = taskComplete(near);
    const r = read(near);
    expect(r.refusal).toEqual({
      text: done.payload.error.message,
      resets_at: nearReset,
      at: done.timestamp,
      window: "five_hour",
      source: "rate_limits",
    });
    expect(r.activity).toMatchObject({ state: "ended", error: { error: "usage_limit_exceeded" } });
    expect(r.readings?.windows[0]).toMatchObject({ window: "five_hour", used_percentage: 100 });
  });

  it("the TUI's refusal reads the same", () => {
    expect(read(fixture("rollout-tui-usage-limit.jsonl")).refusal).toMatchObject({
      window: "five_hour",
      source: "rate_limits",
    });
  });

  it("the week at 100 %: seven_day until its reset 3.5 days on", () => {
    const far = fixture("rollout-usage-limit-far.jsonl");
    const rl = (tokenCounts(far).at(-1) as Entry).payload.rate_limits;
    expect(rl.primary.used_percent).toBeLessThan(100);
    expect(read(far).refusal).toMatchObject({
      resets_at: rl.secondary.resets_at,
      window: "seven_day",
      source: "rate_limits",
    });
  });

  it("moved in time, the exact reset moves with it", () => {
    for (const days of [-400, -1, 0.25, 3, 365]) {
      const delta = Math.round(days * 86_400_000);
      expect(read(moved(near, delta)).refusal?.resets_at).toBe(
        nearReset + Math.round(delta / 1000),
      );
    }
  });

  it("no reset header: the text's `try again at 2:04 PM`, the end of that minute, in the host's zone", () => {
    const done = taskComplete(near);
    const r = read(withoutHeaderResets(near));
    const w = wallTimeOf(nearReset * 1000, "UTC");
    const minuteEnd = instantOfWallTime(w, w.h, w.mi, "UTC") / 1000 + 60;
    expect(done.payload.error.message).toMatch(/try again at \d{1,2}:\d\d [AP]M\.$/);
    expect(r.refusal).toMatchObject({
      resets_at: minuteEnd,
      window: "five_hour",
      source: "message",
    });
    // Never before the real reset, at most a minute after it.
    expect(minuteEnd - nearReset).toBeGreaterThan(0);
    expect(minuteEnd - nearReset).toBeLessThanOrEqual(60);
  });

  // Moved to times and zones where the printed clock means something else: across midnight
  // (Codex prints the date then), half-hour and 45-minute zones, a DST change, a year's end.
  const cases: { what: string; at: string; zone: string; ahead: number }[] = [
    { what: "same afternoon, UTC", at: "2026-12-03T13:00:00Z", zone: "UTC", ahead: 40 },
    {
      what: "across local midnight",
      at: "2026-12-03T04:50:00Z",
      zone: "America/New_York",
      ahead: 40,
    },
    { what: "half-hour zone", at: "2026-12-03T18:15:00Z", zone: "Asia/Kolkata", ahead: 90 },
    { what: "45-minute zone", at: "2026-06-01T09:00:00Z", zone: "Pacific/Chatham", ahead: 200 },
    {
      what: "the night clocks go forward",
      at: "2027-03-14T06:30:00Z",
      zone: "America/New_York",
      ahead: 120,
    },
    { what: "New Year's Eve", at: "2026-12-31T22:30:00Z", zone: "Europe/Berlin", ahead: 60 },
  ];
  for (const c of cases)
    it(`the text's reset, moved: ${c.what} (${c.zone})`, () => {
      const done = taskComplete(near);
      const delta = Date.parse(c.at) - Date.parse(done.timestamp);
      // The refusal at c.at, its reset c.ahead minutes on (and 17 s: Codex truncates).
      const reset = Date.parse(done.timestamp) + c.ahead * 60_000 + 17_000;
      const text = moved(withoutHeaderResets(near), delta, c.zone, reset);
      const r = read(text, c.zone);
      const real = Math.floor((reset + delta) / 1000);
      expect(r.refusal?.source).toBe("message");
      expect((r.refusal?.resets_at ?? 0) - real).toBeGreaterThan(0);
      expect((r.refusal?.resets_at ?? 0) - real).toBeLessThanOrEqual(60);
      // Read in another zone, the same text names another instant: the zone matters.
      expect(read(text, c.zone === "UTC" ? "Asia/Tokyo" : "UTC").refusal?.resets_at).not.toBe(
        r.refusal?.resets_at,
      );
    });

  it("the text's date form: `Dec 7th, 2026 1:24 AM` is the week's", () => {
    const far = fixture("rollout-usage-limit-far.jsonl");
    const reset = (tokenCounts(far).at(-1) as Entry).payload.rate_limits.secondary
      .resets_at as number;
    expect(taskComplete(far).payload.error.message).toMatch(
      /try again at [A-Z][a-z]{2} \d{1,2}(st|nd|rd|th), \d{4} /,
    );
    const r = read(withoutHeaderResets(far));
    expect(r.refusal).toMatchObject({ window: "seven_day", source: "message" });
    expect((r.refusal?.resets_at ?? 0) - reset).toBeGreaterThan(0);
    expect((r.refusal?.resets_at ?? 0) - reset).toBeLessThanOrEqual(60);
  });

  it("a text reset past the week is not trusted", () => {
    const far = withoutHeaderResets(fixture("rollout-usage-limit-far.jsonl"));
    const done = taskComplete(far);
    const text = far.replace(/try again at [^.]+\./, "try again at Dec 25th, 2026 1:24 AM.");
    const r = read(text);
    expect(r.refusal).toMatchObject({
      resets_at: null,
      source: "message",
      untrusted_reset: "2026-12-25T01:25:00.000Z",
    });
    expect(Date.parse(done.timestamp)).toBeLessThan(Date.parse("2026-12-25T01:25:00.000Z"));
  });

  it("no reset anywhere (`try again later`): null, for the fallback", () => {
    const r = read(fixture("rollout-usage-limit-no-reset.jsonl"));
    expect(r.refusal).toMatchObject({ resets_at: null, window: "five_hour", source: "none" });
    expect(r.refusal?.text).toMatch(/try again later\.$/);
  });

  it("a plain 429 (response_too_many_failed_attempts) is no limit", () => {
    const r = read(fixture("rollout-rate-limit-429.jsonl"));
    expect(r.refusal).toBeNull();
    expect(r.activity).toMatchObject({
      state: "ended",
      error: { status: 429, error: "response_too_many_failed_attempts" },
    });
  });

  it("a refusal a later turn followed is no longer the state", () => {
    const limited = entries(near);
    const next = entries(fixture("rollout-tool-turn.jsonl")).slice(1); // a turn after it
    expect(read(toText([...limited, ...next])).refusal).toBeNull();
  });
});

describe("activity", () => {
  const turn = fixture("rollout-tool-turn.jsonl");

  it("a turn that ended: task_complete", () => {
    const r = read(turn);
    expect(r.activity).toEqual({ state: "ended", at: taskComplete(turn).timestamp });
  });

  it("an exec_command not answered yet: open since its function_call, due by its yield time", () => {
    const text = cut(turn, kind("function_call"));
    const call = entries(text).at(-1) as Entry;
    expect(read(text).activity).toEqual({
      state: "tool_open",
      at: call.timestamp,
      tool: {
        name: "exec_command",
        id: call.payload.call_id,
        since: call.timestamp,
        timeout_ms: 10_000,
        command: "echo hi",
        limit_ms: 10_000,
      },
    });
  });

  it("the captured open call (sleep 600, yield_time_ms 30000): its token_usage_record follows it", () => {
    const text = fixture("rollout-call-open.jsonl");
    expect((entries(text).at(-1) as Entry).type).toBe("token_usage_record");
    expect(read(text).activity).toMatchObject({
      state: "tool_open",
      tool: { name: "exec_command", command: "sleep 600", timeout_ms: 30_000 },
    });
  });

  it("after its yield time the call has its output and the turn ends; a line after task_complete does not reopen it", () => {
    const text = fixture("rollout-call-yielded.jsonl");
    const es = entries(text);
    expect(es.at(-1)?.payload.type).toBe("item_completed"); // the command, ended with exec
    expect(read(text).activity).toMatchObject({ state: "ended", at: taskComplete(text).timestamp });
  });

  it("the call's output written: requesting the next response since then", () => {
    const text = cut(turn, kind("function_call_output"));
    const out = entries(text).at(-1) as Entry;
    expect(read(text).activity).toEqual({
      state: "requesting",
      at: out.timestamp,
      tries: 1,
      first_try: out.timestamp,
    });
  });

  it("the prompt sent and the API silent (hung): requesting since the prompt", () => {
    const text = fixture("rollout-request-hung.jsonl");
    const prompt = entries(text)
      .filter((e) => e.payload?.type === "message" && e.payload.role === "user")
      .at(-1) as Entry;
    expect(read(text).activity).toMatchObject({ state: "requesting", at: prompt.timestamp });
  });

  it("two calls of one response, one answered: the other is open", () => {
    const es = entries(cut(turn, kind("function_call_output")));
    const i = es.findIndex(kind("function_call"));
    const call = es[i] as Entry;
    const other = JSON.parse(JSON.stringify(call));
    other.payload.call_id = "call_second";
    other.payload.arguments = JSON.stringify({ cmd: "make test" });
    es.splice(i + 1, 0, other);
    expect(read(toText(es)).activity).toMatchObject({
      state: "tool_open",
      tool: { id: "call_second", command: "make test" },
    });
  });

  it("an over-sized output (past LINE_CAP) still closes its call", () => {
    const es = entries(cut(turn, kind("function_call_output")));
    (es.at(-1) as Entry).payload.output = "x".repeat(LINE_CAP + 1000);
    expect(read(toText(es)).activity.state).toBe("requesting");
  });

  it("a torn last line is skipped", () => {
    const text = cut(turn, kind("function_call"));
    const tail = JSON.stringify(entries(turn).find(kind("function_call_output")));
    expect(read(text + tail.slice(0, 80)).activity.state).toBe("tool_open");
  });

  it("Esc in the TUI: turn_aborted (interrupted), a person's interruption", () => {
    const text = fixture("rollout-tui-interrupted.jsonl");
    const aborted = entries(text).filter(kind("turn_aborted")).at(-1) as Entry;
    expect(read(text).activity).toEqual({
      state: "interrupted",
      at: aborted.timestamp,
      text: "turn aborted: interrupted",
    });
  });

  it("a session with no turn yet is unknown", () => {
    const text = cut(turn, (e) => e.type === "session_meta");
    expect(read(text).activity).toEqual({ state: "unknown", at: null });
  });
});

describe("retryAtOf (Codex's printed reset)", () => {
  const at = Date.parse("2026-12-03T13:24:00Z");
  const table: [string, string, string | null][] = [
    ["…or try again at 2:04 PM.", "UTC", "2026-12-03T14:05:00.000Z"],
    ["You’ve hit your usage limit. Try again at 12:00 PM.", "UTC", "2026-12-03T12:01:00.000Z"],
    ["…try again at 9:04 PM.", "Asia/Kolkata", "2026-12-03T15:35:00.000Z"],
    ["…try again at Dec 7th, 2026 1:24 AM.", "UTC", "2026-12-07T01:25:00.000Z"],
    ["…try again at Jan 1st, 2027 12:30 AM.", "Europe/Berlin", "2026-12-31T23:31:00.000Z"],
    ["…try again at 13:04 PM.", "UTC", null],
    ["…try again later.", "UTC", null],
    ["…try again at 2:04 PM.", "Not/AZone", null],
  ];
  for (const [text, zone, want] of table)
    it(`${text} (${zone})`, () => {
      const got = retryAtOf(text, at, zone);
      expect(got === null ? null : new Date(got).toISOString()).toBe(want);
    });
});
