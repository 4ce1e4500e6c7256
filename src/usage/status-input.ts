// What Claude Code pipes to its statusLine command, validated piece by piece with zod/mini:
// one malformed field must not cost the rest of the line.
import * as z from "zod/mini";
import { strippedLine } from "../util/sanitize.js";
import { contextOfUsage, type Usage } from "./context-usage.js";
import type { NewReading, UsageWindow } from "./readings.js";
import { plausibleReset } from "./window-bounds.js";

const finite = z.number().check(z.refine(Number.isFinite));
// resets_at is epoch seconds; an ISO string (or epoch ms) is taken too rather than dropped.
// used_percentage is a share of the window's limit, 0–100 (Claude Code ≥ 2.1.80 statusLine
// input, rate_limits.{five_hour,seven_day}); anything else is garbage, not a reading: a 5000
// would pause every program on the seat, a -5 would hide a real limit in the merge.
const percentage = z.number().check(z.gte(0), z.lte(100));
const rateWindow = z.object({
  used_percentage: percentage,
  resets_at: z.optional(z.nullable(z.union([finite, z.string()]))),
});

/** The latest instant a Date can hold (ms): past it a time is invalid (`↻NaN:NaN`). */
const LAST_DATE = 8.64e15;

/**
 * Epoch seconds of a window's reset, or null when unknown: missing, unparseable, ≤ 0, past a
 * Date, or further ahead than the window is long (DESIGN §5: it would win its window's merge
 * for ever).
 */
function epochSeconds(v: number | string | null | undefined, window: UsageWindow): number | null {
  if (v === null || v === undefined) return null;
  const ms = typeof v === "string" ? Date.parse(v) : v > 1e12 ? v : v * 1000;
  const valid = Number.isFinite(ms) && ms > 0 && ms <= LAST_DATE;
  return valid && plausibleReset(window, ms, Date.now(), { pastIsFine: true })
    ? Math.floor(ms / 1000)
    : null;
}
const model = z.object({ id: z.optional(z.string()), display_name: z.optional(z.string()) });
const currentUsage = z.object({
  input_tokens: finite,
  cache_creation_input_tokens: z.optional(finite),
  cache_read_input_tokens: z.optional(finite),
  cache_creation: z.optional(z.nullable(z.unknown())),
});
const contextWindow = z.object({
  context_window_size: z.optional(z.nullable(finite)),
  // null before the first API call and right after /compact (Claude Code 2.1.x).
  used_percentage: z.optional(z.nullable(finite)),
  current_usage: z.optional(z.nullable(z.unknown())),
});
const text = z.string();

export interface RateWindow {
  used_percentage: number;
  /** Epoch seconds, or null when not given. */
  resets_at: number | null;
}

export interface StatusInput {
  model: string | null;
  transcript_path: string | null;
  session_id: string | null;
  cwd: string | null;
  /** input + cache creation + cache read of the current context, when Claude Code gave it. */
  context_tokens: number | null;
  context_size: number | null;
  windows: Partial<Record<UsageWindow, RateWindow>>;
}

function pick<T>(schema: z.ZodMiniType<T>, value: unknown): T | null {
  const r = schema.safeParse(value);
  return r.success ? r.data : null;
}

/**
 * The context the input reports (DESIGN §4): `current_usage`, unless that is null or all zeros
 * (before the first call, and right after `/compact`: Claude Code 2.1.328 sends zeros there and
 * `used_percentage` 0); then the used share of the window when that is above 0; else null (the
 * statusline reads the transcript).
 */
function contextOfInput(cu: unknown, usedPct: number | null, size: number | null): number | null {
  const tokens = cu ? contextOfUsage(cu as Usage) : null;
  if (tokens !== null && tokens > 0) return tokens;
  if (usedPct !== null && usedPct > 0 && size !== null && size > 0)
    return Math.round((usedPct / 100) * size);
  return null;
}

/** Reads whatever is usable out of the statusline input (any JSON value, or undefined). */
export function readStatusInput(raw: unknown): StatusInput {
  const o =
    raw && typeof raw === "object" && !Array.isArray(raw) ? (raw as Record<string, unknown>) : {};
  const m = pick(model, o.model);
  const cw = pick(contextWindow, o.context_window);
  const cu = cw?.current_usage ? pick(currentUsage, cw.current_usage) : null;
  const size = cw?.context_window_size ?? null;
  const usedPct = cw?.used_percentage ?? null;
  const windows: StatusInput["windows"] = {};
  const limits =
    o.rate_limits && typeof o.rate_limits === "object"
      ? (o.rate_limits as Record<string, unknown>)
      : {};
  for (const w of ["five_hour", "seven_day"] as const) {
    const r = pick(rateWindow, limits[w]);
    if (r)
      windows[w] = { used_percentage: r.used_percentage, resets_at: epochSeconds(r.resets_at, w) };
  }
  const workspace =
    o.workspace && typeof o.workspace === "object" ? (o.workspace as Record<string, unknown>) : {};
  return {
    model: m?.display_name ?? m?.id ?? (typeof o.model === "string" ? o.model : null),
    transcript_path: pick(text, o.transcript_path),
    session_id: pick(text, o.session_id),
    cwd: pick(text, o.cwd) ?? pick(text, workspace.current_dir),
    context_tokens: contextOfInput(cu, usedPct, size),
    context_size: size !== null && size > 0 ? size : null,
    windows,
  };
}

/** The readings a statusline input carries: one per window that names its reset. */
export function readingsOf(input: StatusInput): NewReading[] {
  const out: NewReading[] = [];
  for (const w of ["five_hour", "seven_day"] as const) {
    const r = input.windows[w];
    const resets = r && r.resets_at !== null ? new Date(r.resets_at * 1000) : null;
    if (!r || !resets || Number.isNaN(resets.getTime())) continue; // no reading at no time
    out.push({
      window: w,
      used_percentage: r.used_percentage,
      resets_at: resets.toISOString(),
      source: "statusline",
      // Readings merge per session (DESIGN §5): each session's newest reading counts.
      ...(input.session_id ? { session: input.session_id } : {}),
    });
  }
  return out;
}

/** `143k`, `1.2M`, `950`. */
export function formatTokens(n: number): string {
  if (n < 1000) return String(Math.round(n));
  if (n < 999_500) return `${Math.round(n / 1000)}k`;
  const m = n / 1_000_000;
  return `${Number.isInteger(m) ? m : m.toFixed(1)}M`;
}

/** ` ↻14:00` (local time), or nothing for an unknown or invalid time. */
function resetMark(epochSeconds: number | null): string {
  if (epochSeconds === null) return "";
  const d = new Date(epochSeconds * 1000);
  if (Number.isNaN(d.getTime())) return "";
  return ` ↻${String(d.getHours()).padStart(2, "0")}:${String(d.getMinutes()).padStart(2, "0")}`;
}

/** A model name longer than this is cut with `…`: the line is one row of a terminal. */
export const MODEL_NAME_MAX = 40;

/** The model name as shown: at most MODEL_NAME_MAX characters (statusLine removes controls). */
function shownModel(name: string): string {
  const chars = [...name.slice(0, 4 * MODEL_NAME_MAX).trim()];
  return chars.length > MODEL_NAME_MAX
    ? `${chars.slice(0, MODEL_NAME_MAX - 1).join("")}…`
    : chars.join("");
}

/** The one line: `Opus 4.6 · ctx 143k/200k · 5h 30% ↻14:00 · 7d 81%` (reset as local time). */
export function statusLine(input: StatusInput, contextTokens: number | null): string {
  const parts: string[] = [];
  if (input.model) parts.push(shownModel(input.model));
  if (contextTokens !== null) {
    parts.push(
      `ctx ${formatTokens(contextTokens)}${input.context_size ? `/${formatTokens(input.context_size)}` : ""}`,
    );
  }
  const five = input.windows.five_hour;
  if (five) {
    parts.push(`5h ${Math.floor(five.used_percentage)}%${resetMark(five.resets_at)}`);
  }
  const seven = input.windows.seven_day;
  if (seven) parts.push(`7d ${Math.floor(seven.used_percentage)}%`);
  // One line, whatever the input holds: a newline or a terminal escape in a model name (C0, DEL,
  // C1, U+2028/9) is a space.
  return strippedLine(parts.join(" · "));
}
