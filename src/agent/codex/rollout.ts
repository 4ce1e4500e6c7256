// What a Codex CLI rollout says, read from its end (DESIGN §19): the context tokens, the usage
// readings, a usage-limit refusal and where the turn stands. Pure: the lines come in newest
// first (`linesBackward(path)` from src/usage/backward.ts), the zone as an argument.
//
// Shapes as Codex 0.171.0 writes them (test/fixtures/codex-0.171.0/): each line is
// `{timestamp, ordinal, type, payload}`. A turn is `event_msg` task_started, the prompt
// (`response_item` message role user), per model response its items (`function_call`,
// `message` role assistant…), a `token_usage_record` and an `event_msg` token_count (after the
// calls' outputs), and last `event_msg` task_complete (or turn_aborted). Bookkeeping lines
// (`item_completed`, `world_state`, `turn_context`…) fall anywhere, even after task_complete (a
// command a turn left running ends later).
import type { BackLine } from "../../usage/backward.js";
import type { UsageWindow } from "../../usage/readings.js";
import type { OpenTool, TailState, TurnError } from "../../usage/transcript-tail.js";
import { plausibleReset, RESET_SLACK_MS, WINDOW_MS } from "../../usage/window-bounds.js";
import { instantOfWallTime, validZone, wallTimeOf } from "../../util/wall-clock.js";

/** How far back one read goes, at most: the cost never grows with the rollout. */
const MAX_LINES = 400;
const MAX_BYTES = 8 * 1024 * 1024;

/** One window of a `rate_limits` reading. */
export interface CodexWindow {
  window: UsageWindow;
  used_percentage: number;
  /** Epoch seconds, or null when the backend named none. */
  resets_at: number | null;
  window_minutes: number;
}

/** The newest `rate_limits` that name a window (an API-key seat has none). */
export interface CodexReadings {
  /** The token_count line's own time. */
  at: string | null;
  limit_id: string | null;
  windows: CodexWindow[];
}

/** A usage-limit refusal: the shape of src/usage/transcript.ts's `Refusal`, window always set. */
export interface CodexRefusal {
  /** `error.message`: "You’ve hit your usage limit. … try again at 2:04 PM." */
  text: string;
  /** Epoch seconds the limit ends, or null (the caller's `usage.pause_fallback`). */
  resets_at: number | null;
  /** The task_complete line's time. */
  at: string | null;
  window: UsageWindow;
  /** Where `resets_at` came from: the 100 % window's `resets_at` (exact), the text, or nowhere. */
  source: "rate_limits" | "message" | "none";
  /** A reset the text named that did not fit its window (DESIGN §5): not trusted. */
  untrusted_reset?: string;
}

export interface RolloutState {
  /** The context the next request carries; null when unknown (right after a compaction). */
  context_tokens: number | null;
  /** The time of the line `context_tokens` was read from (a token_count or token_usage_record). */
  context_at?: string | null;
  /** `model_context_window` (Codex's own: 95 % of the configured window). */
  model_context_window: number | null;
  readings: CodexReadings | null;
  /** Set when the newest turn ended on the usage limit. */
  refusal: CodexRefusal | null;
  /**
   * Where the turn stands, in the shape src/usage/transcript-tail.ts gives for Claude. Codex
   * writes nothing per request try, so `requesting.tries` is 1. An open call's `timeout_ms` is
   * when Codex hands the model its output at the latest (exec_command's `yield_time_ms`: the
   * command goes on in the background after it), not when the command is killed.
   */
  activity: TailState;
}

// biome-ignore lint/suspicious/noExplicitAny: rollout lines are read loosely
type Json = any;

interface Line {
  /** The line's `type`: event_msg, response_item, compacted, session_meta… */
  type: string;
  /** `payload.type`: task_complete, token_count, function_call, message… */
  kind: string | null;
  at: string | null;
  /** The payload, or null for an over-sized line (only its kind and call id are known). */
  p: Json | null;
  callId: string | null;
}

const str = (v: unknown): string | null => (typeof v === "string" ? v : null);
const num = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);

function classify(raw: BackLine | string): Line | null {
  const text = typeof raw === "string" ? raw : raw.text;
  if (text !== null) {
    let e: Json;
    try {
      e = JSON.parse(text);
    } catch {
      return null; // torn
    }
    if (!e || typeof e !== "object" || typeof e.type !== "string") return null;
    const p = e.payload && typeof e.payload === "object" ? e.payload : {};
    return { type: e.type, kind: str(p.type), at: str(e.timestamp), p, callId: str(p.call_id) };
  }
  // An over-sized line (a huge command output, a compaction's whole history): its kind is in
  // its head; a call id in its head (outputs) or tail (calls: it follows the arguments).
  const head = typeof raw === "string" ? raw : raw.head;
  const tail = typeof raw === "string" ? raw : raw.tail;
  const outer = /"type"\s*:\s*"(\w+)"\s*,\s*"payload"\s*:\s*\{(?:\s*"type"\s*:\s*"(\w+)")?/.exec(
    head,
  );
  if (!outer?.[1]) return null;
  const id = /"call_id"\s*:\s*"([^"]+)"/;
  return {
    type: outer[1],
    kind: outer[2] ?? null,
    at: /"timestamp"\s*:\s*"([^"]+)"/.exec(head)?.[1] ?? null,
    p: null,
    callId: id.exec(head)?.[1] ?? id.exec(tail)?.[1] ?? null,
  };
}

const CALLS = new Set(["function_call", "custom_tool_call", "local_shell_call"]);
const OUTPUTS = new Set(["function_call_output", "custom_tool_call_output"]);

/** The window a `rate_limits` entry's length names. */
function windowOfMinutes(minutes: number | null): UsageWindow | null {
  if (minutes === 300) return "five_hour";
  if (minutes === 10080) return "seven_day";
  return null;
}

function readingsOf(rateLimits: Json, at: string | null): CodexReadings | null {
  if (!rateLimits || typeof rateLimits !== "object") return null;
  const windows: CodexWindow[] = [];
  for (const w of [rateLimits.primary, rateLimits.secondary]) {
    if (!w || typeof w !== "object") continue;
    const minutes = num(w.window_minutes);
    const window = windowOfMinutes(minutes);
    const used = num(w.used_percent);
    if (!window || minutes === null || used === null) continue;
    windows.push({
      window,
      used_percentage: used,
      resets_at: num(w.resets_at),
      window_minutes: minutes,
    });
  }
  return windows.length ? { at, limit_id: str(rateLimits.limit_id), windows } : null;
}

/** The error a turn ended on: `codex_error_info` is a string or `{kind: {http_status_code}}`. */
function turnErrorOf(error: Json): TurnError | null {
  if (!error || typeof error !== "object") return null;
  const info = error.codex_error_info;
  let kind: string | null = str(info);
  let status: number | null = null;
  if (info && typeof info === "object") {
    kind = Object.keys(info)[0] ?? null;
    status = num(kind ? info[kind]?.http_status_code : null);
  }
  return {
    status,
    error: kind,
    text: (str(error.message) ?? "").slice(0, 300),
    cause: causeOf(kind, status),
  };
}

/**
 * What a turn's error calls for (codex-rs `CodexErrorInfo`, snake_case): the usage limit is
 * the refusal rule's; credentials a restart cannot fix; anything else passes (Codex has already
 * retried it: a plain 429 is `response_too_many_failed_attempts`, not a limit).
 */
function causeOf(kind: string | null, status: number | null): TurnError["cause"] {
  if (kind === "usage_limit_exceeded") return "usage_limit";
  if (kind === "unauthorized" || status === 401 || status === 402 || status === 403) return "auth";
  return "transient";
}

/**
 * When an open call's output is due at the latest (ms): exec_command yields after
 * `yield_time_ms` (default 10 s, 250 ms–30 s), write_stdin after its own (an empty poll up to
 * 300 s), the JavaScript `exec` tool after 30 s (tool descriptions of 0.171.0).
 */
function dueMs(name: string, args: Json): number | null {
  const y = num(args?.yield_time_ms);
  const clamp = (v: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, v));
  if (name === "exec_command") return clamp(y ?? 10_000, 250, 30_000);
  if (name === "write_stdin")
    return typeof args?.chars === "string" && args.chars !== ""
      ? clamp(y ?? 250, 250, 30_000)
      : clamp(y ?? 300_000, 5_000, 300_000);
  if (name === "exec") return 30_000;
  return null;
}

function openToolOf(l: Line): OpenTool {
  const name = str(l.p?.name) ?? "?";
  let args: Json = null;
  try {
    args = typeof l.p?.arguments === "string" ? JSON.parse(l.p.arguments) : null;
  } catch {}
  const due = dueMs(name, args);
  return {
    name,
    id: l.callId ?? "",
    since: l.at ?? "",
    timeout_ms: due,
    ...(typeof args?.cmd === "string" ? { command: args.cmd } : {}),
    // Past its yield time the output is overdue: Codex itself is stuck, not the command.
    ...(due !== null ? { limit_ms: due } : {}),
  };
}

const RETRY_AT =
  /\btry again at (?:([A-Z][a-z]{2}) (\d{1,2})(?:st|nd|rd|th), (\d{4}) )?(\d{1,2}):(\d{2}) ([AP]M)\b/i;
const MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];

/**
 * The reset a refusal's text names (epoch ms), or null. Codex 0.171.0 prints the reset in the
 * host's zone, truncated to the minute: `2:04 PM` when it is on the day the message was made,
 * else `Dec 7th, 2026 1:24 AM`. The end of the named minute is the first moment surely past it.
 */
export function retryAtOf(text: string, entryMs: number, zone: string): number | null {
  const m = RETRY_AT.exec(text);
  if (!m || !Number.isFinite(entryMs) || !validZone(zone)) return null;
  const hour12 = Number(m[4]);
  const minute = Number(m[5]);
  if (hour12 < 1 || hour12 > 12 || minute > 59) return null;
  const hour = (hour12 % 12) + (m[6]?.toUpperCase() === "PM" ? 12 : 0);
  let day: { y: number; mo: number; d: number };
  if (m[1]) {
    const mo = MONTHS.indexOf(m[1].toLowerCase()) + 1;
    const d = Number(m[2]);
    if (mo === 0 || d < 1 || d > 31) return null;
    day = { y: Number(m[3]), mo, d };
  } else {
    const w = wallTimeOf(entryMs, zone);
    day = { y: w.y, mo: w.mo, d: w.d };
  }
  return instantOfWallTime(day, hour, minute, zone) + 60_000;
}

/** The refusal a usage-limit task_complete stands for, given the token_count before it. */
function refusalOf(done: Line, before: Json, zone: string): CodexRefusal {
  const text = str(done.p?.error?.message) ?? "";
  const at = done.at;
  const entryMs = at ? Date.parse(at) : Number.NaN;
  // Exact: the window the backend reported at 100 % (the latest reset when both are).
  const full = (readingsOf(before, null)?.windows ?? [])
    .filter((w) => w.used_percentage >= 100 && w.resets_at !== null)
    .sort((a, b) => (b.resets_at ?? 0) - (a.resets_at ?? 0))[0];
  if (full)
    return { text, resets_at: full.resets_at, at, window: full.window, source: "rate_limits" };
  const resetMs = retryAtOf(text, entryMs, zone);
  if (resetMs === null) return { text, resets_at: null, at, window: "five_hour", source: "none" };
  // The text names no window: one that ends within five hours is the five-hour one.
  const window: UsageWindow =
    resetMs - entryMs <= WINDOW_MS.five_hour + RESET_SLACK_MS ? "five_hour" : "seven_day";
  if (!plausibleReset(window, resetMs, entryMs))
    return {
      text,
      resets_at: null,
      at,
      window,
      source: "message",
      untrusted_reset: new Date(resetMs).toISOString(),
    };
  return { text, resets_at: Math.floor(resetMs / 1000), at, window, source: "message" };
}

/** The activity a line decides when nothing newer did; null for bookkeeping. */
function decides(l: Line): TailState | "call" | "output" | null {
  const at = l.at;
  if (l.type === "event_msg") {
    if (l.kind === "task_complete") {
      const error = turnErrorOf(l.p?.error);
      return error ? { state: "ended", at, error } : { state: "ended", at };
    }
    if (l.kind === "turn_aborted") {
      const reason = str(l.p?.reason) ?? "aborted";
      // A person's Esc in the TUI (0.171.0: `reason: "interrupted"`): someone is at the keyboard.
      if (reason === "interrupted")
        return { state: "interrupted", at, text: "turn aborted: interrupted" };
      return {
        state: "ended",
        at,
        error: { status: null, error: reason, text: `turn aborted: ${reason}`, cause: "transient" },
      };
    }
    if (l.kind === "task_started" || l.kind === "user_message")
      return { state: "requesting", at, tries: 1, first_try: at };
    return null; // token_count, item_completed, thread_settings_applied…
  }
  if (l.type === "response_item") {
    if (l.kind && CALLS.has(l.kind)) return "call";
    if (l.kind && OUTPUTS.has(l.kind)) return "output";
    if (l.kind === "message") {
      const role = str(l.p?.role);
      // An over-sized message (p null) is a reply being written or a prompt: unknown which.
      if (role === "assistant" || l.p === null) return { state: "replying", at };
      return { state: "requesting", at, tries: 1, first_try: at };
    }
    if (l.kind === "reasoning") return { state: "replying", at };
    return null; // additional_tools…
  }
  if (l.type === "compacted") return { state: "requesting", at, tries: 1, first_try: at };
  if (l.type === "session_meta") return { state: "unknown", at: null };
  return null; // token_usage_record, world_state, turn_context
}

/**
 * Reads a rollout from its end (`lines` newest first): context tokens, the context window, the
 * newest usage readings, the refusal the newest turn ended on, and where the turn stands.
 * `localZone` is the zone Codex printed a refusal's reset in (the host's).
 */
export function readRollout(
  lines: Iterable<BackLine | string>,
  o: { localZone?: string } = {},
): RolloutState {
  const zone = o.localZone ?? Intl.DateTimeFormat().resolvedOptions().timeZone;
  let context: number | null | undefined;
  let contextAt: string | null = null;
  /** A newer token_count with no input tokens: the estimate right after a compaction? */
  let zeroInput: number | null | undefined;
  let window: number | null = null;
  let readings: CodexReadings | null = null;
  let activity: TailState | null = null;
  let refusal: CodexRefusal | null = null;
  /** A usage-limit task_complete whose token_count (older) is still to be read. */
  let limitDone: Line | null = null;
  const open: Line[] = [];
  const outputs = new Set<string>();
  let newestOutputAt: string | null | undefined;
  let count = 0;
  let bytes = 0;

  const settleActivity = (decided: TailState) => {
    if (open.length) {
      const first = open[open.length - 1] as Line; // the oldest open call
      activity = { state: "tool_open", at: first.at, tool: openToolOf(first) };
    } else if (newestOutputAt !== undefined) {
      activity = { state: "requesting", at: newestOutputAt, tries: 1, first_try: newestOutputAt };
    } else activity = decided;
  };

  for (const raw of lines) {
    if (++count > MAX_LINES) break;
    bytes +=
      typeof raw === "string"
        ? raw.length
        : (raw.text?.length ?? raw.head.length + raw.tail.length);
    if (bytes > MAX_BYTES) break;
    const l = classify(raw);
    if (!l) continue;
    const isCount = l.type === "event_msg" && l.kind === "token_count";

    if (isCount && l.p) {
      const info = l.p.info;
      if (!readings) readings = readingsOf(l.p.rate_limits, l.at);
      if (limitDone) {
        refusal = refusalOf(limitDone, l.p.rate_limits, zone);
        limitDone = null;
      }
      if (info && typeof info === "object") {
        if (window === null) window = num(info.model_context_window);
        if (context === undefined) {
          const last = info.last_token_usage ?? {};
          const input = num(last.input_tokens);
          if (zeroInput !== undefined)
            context = null; // zero input with no compaction before it
          else if (input !== null && input > 0) {
            context = input;
            contextAt = l.at;
          } else zeroInput = num(last.total_tokens);
        }
      }
    }
    // The usage of a response whose token_count is not written yet (Codex writes that after
    // the calls' outputs): a save in the middle of its own call reads the context it was sent.
    if (l.type === "token_usage_record" && l.p && context === undefined) {
      const input = num(l.p.usage?.input_tokens);
      if (input !== null && input > 0) {
        context = zeroInput !== undefined ? null : input;
        contextAt = l.at;
      }
    }
    if (l.type === "compacted" && context === undefined)
      // Right after a compaction the next token_count's total is Codex's own estimate; with no
      // token_count after it yet, the older counts are from before it: unknown.
      context = zeroInput !== undefined ? zeroInput : null;
    if (l.type === "event_msg" && l.kind === "task_started") {
      if (window === null) window = num(l.p?.model_context_window);
      if (limitDone) {
        refusal = refusalOf(limitDone, null, zone);
        limitDone = null;
      }
    }

    if (!activity) {
      const d = decides(l);
      if (d === "output") {
        if (l.callId) outputs.add(l.callId);
        newestOutputAt ??= l.at;
      } else if (d === "call") {
        if (!l.callId || !outputs.has(l.callId)) open.push(l);
      } else if (d) {
        settleActivity(d);
        const a = activity as TailState | null;
        if (
          a?.state === "ended" &&
          l.kind === "task_complete" &&
          a.error?.error === "usage_limit_exceeded"
        )
          limitDone = l;
      }
    }
    if (activity && context !== undefined && window !== null && readings && !limitDone) break;
  }
  if (!activity && (open.length || newestOutputAt !== undefined))
    settleActivity({ state: "unknown", at: null });
  if (limitDone) refusal = refusalOf(limitDone, null, zone);
  return {
    context_tokens: context ?? null,
    context_at: context === undefined || context === null ? null : contextAt,
    model_context_window: window,
    readings,
    refusal,
    activity: activity ?? { state: "unknown", at: null },
  };
}
