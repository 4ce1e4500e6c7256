// Whether a seat is limited (DESIGN §5), judged from its merged usage readings.
import { iso } from "../util/time.js";
import {
  appendReadings,
  type Merged,
  mergeReadings,
  type NewReading,
  type Reading,
  readReadings,
  type UsageWindow,
  WINDOWS,
} from "./readings.js";
import type { Refusal } from "./refusal.js";
import { refusalWindow } from "./refusal.js";

export type { UsageWindow } from "./readings.js";

/** Whether a seat is limited now (DESIGN §5), and until when. */
export interface SeatLimit {
  limited: boolean;
  /** ISO time the limiting window resets, or null when unknown. */
  until: string | null;
  reason: string;
  window: UsageWindow | null;
}

function pct(n: number): string {
  return `${Number.isInteger(n) ? n : n.toFixed(1)}%`;
}

/** A reset time in a reason: `2026-12-03T14:00:00Z`. */
export function shortTime(ms: number): string {
  // Whole seconds, UTC: human output shows it in the local zone (util/local-time.ts).
  return iso(ms).replace(/\.\d{3}Z$/, "Z");
}

/** One reason a seat is limited: a merged statusline window, or a refusal reading. */
interface Limiting {
  window: UsageWindow;
  resets_at: number;
  why: string;
}

/**
 * Judges a seat (DESIGN §5): limited while a merged statusline window is at `pauseAtPercent` or
 * more before its reset, or while a usage-limit refusal reading (`refusals`, any window) has
 * not reached its own reset. A refusal is evidence about the whole seat: it limits until the
 * reset it names whatever the statusline's readings say (their merge keeps only the latest
 * reset, which would drop it). `until` is the latest reset among what limits. Pure.
 */
export function judgeSeat(
  merged: Merged,
  pauseAtPercent: number,
  now: number,
  refusals: readonly Reading[] = [],
): SeatLimit {
  const limiting: Limiting[] = WINDOWS.flatMap((w) => {
    const m = merged[w];
    return m && !m.reset && now < m.resets_at && m.used_percentage >= pauseAtPercent
      ? [
          {
            window: w,
            resets_at: m.resets_at,
            why: `${w} window at ${pct(m.used_percentage)} until ${shortTime(m.resets_at)}`,
          },
        ]
      : [];
  });
  // Per window, the unexpired refusal that resets last; a text reading that a structured one of
  // the same refusal replaced does not count (its minute may lie past the exact reset).
  const counted = withoutReplaced(refusals);
  for (const w of WINDOWS) {
    let last = Number.NEGATIVE_INFINITY;
    for (const r of counted) {
      const resets = Date.parse(r.resets_at);
      if (r.source === "refusal" && r.window === w && now < resets && resets > last) last = resets;
    }
    if (last > now)
      limiting.push({
        window: w,
        resets_at: last,
        why: `${w} usage-limit refusal until ${shortTime(last)}`,
      });
  }
  if (limiting.length > 0) {
    const last = limiting.reduce((a, b) => (b.resets_at > a.resets_at ? b : a));
    return {
      limited: true,
      until: iso(last.resets_at),
      window: last.window,
      reason: limiting.map((l) => l.why).join("; "),
    };
  }
  const seen = WINDOWS.flatMap((w) => {
    const m = merged[w];
    if (!m) return [];
    return [
      m.reset ? `${w} reset at ${shortTime(m.resets_at)}` : `${w} at ${pct(m.used_percentage)}`,
    ];
  });
  return {
    limited: false,
    until: null,
    window: null,
    reason: seen.length
      ? `below ${pct(pauseAtPercent)}: ${seen.join(", ")}`
      : "no usage readings yet",
  };
}

/** Judges a seat's readings: the statusline's merged per window, refusals on their own. Pure. */
export function judgeReadings(
  readings: readonly Reading[],
  pauseAtPercent: number,
  now: number,
): SeatLimit {
  return judgeSeat(
    mergeReadings(readings, now),
    pauseAtPercent,
    now,
    readings.filter((r) => r.source === "refusal"),
  );
}

/** Judges the seat's recorded readings and says whether it is limited at `pauseAtPercent`. */
export function seatLimit(
  seat: string,
  pauseAtPercent: number,
  now: number = Date.now(),
  env: NodeJS.ProcessEnv = process.env,
  /** Readings not (yet) on disk, judged with the recorded ones (a dry run's refusal). */
  extra: Reading[] = [],
  /** A person's unpause (epoch ms): readings and refusals from before it do not count. */
  notBefore?: number,
): SeatLimit {
  const all = [...readReadings(seat, env), ...extra];
  const counted = notBefore === undefined ? all : all.filter((r) => newerThan(r, notBefore));
  return judgeReadings(counted, pauseAtPercent, now);
}

/** Whether a reading, and the refusal it stands for, came after `ms` (DESIGN §5's override). */
export function newerThan(r: Reading, ms: number): boolean {
  const at = Date.parse(r.at);
  const refusal = r.refusal_at ? Date.parse(r.refusal_at) : at;
  return at > ms && refusal > ms;
}

/**
 * The 100 % reading a usage-limit refusal stands for: its window until the reset it names, or
 * now + `fallbackMs`. A structured refusal's reading is `exact`. Pure.
 */
export function refusalReadingOf(refusal: Refusal, fallbackMs: number, now: number): NewReading {
  const resetsMs = refusal.resets_at !== null ? refusal.resets_at * 1000 : now + fallbackMs;
  return {
    window: refusal.window ?? refusalWindow(refusal.text),
    used_percentage: 100,
    resets_at: iso(resetsMs),
    source: "refusal",
    text: refusal.text,
    refusal_at: refusal.at,
    ...(refusal.exact ? { exact: true } : {}),
    ...(refusal.limit_type ? { limit_type: refusal.limit_type } : {}),
    ...(refusal.needs_person ? { needs_person: refusal.needs_person } : {}),
    ...(refusal.session ? { session: refusal.session } : {}),
    ...(refusal.from ? { from: refusal.from } : {}),
  };
}

/** The reading `recordRefusalReading` would write, built in memory (a dry run's view). Pure. */
export function refusalReading(
  seat: string,
  refusal: Refusal,
  fallbackMs: number,
  now: number,
): Reading {
  return { at: iso(now), seat, ...refusalReadingOf(refusal, fallbackMs, now) };
}

/**
 * How far apart one refusal's times may be: the transcript entry's and the StopFailure hook's
 * (the hook records at once with its own time, a moment after the entry is written).
 */
const SAME_REFUSAL_MS = 120_000;

/**
 * Whether a reading stands for this refusal: the same text, session (when both name one) and
 * time. Two readings of transcript entries are one refusal only at the entry's own time (a
 * session refused twice in a minute is refused twice); the StopFailure hook records with its
 * own time, a moment after the entry's, so it matches within 2 min.
 */
function sameRefusal(
  r: Reading,
  o: { text?: string; at?: string | null; session?: string; from?: "transcript" | "hook" },
): boolean {
  if (r.source !== "refusal" || r.text !== o.text) return false;
  if (typeof r.refusal_at !== "string" || typeof o.at !== "string") return false;
  if (r.session && o.session && r.session !== o.session) return false;
  if (r.from === "transcript" && o.from === "transcript") return r.refusal_at === o.at;
  return Math.abs(Date.parse(r.refusal_at) - Date.parse(o.at)) <= SAME_REFUSAL_MS;
}

/**
 * The reading already recorded for this refusal (same text, entry times within 2 min), if any.
 * For a structured refusal only a structured reading counts: the StopFailure hook's reading of
 * the same refusal (its text, rounded to the minute) is replaced, not kept (DESIGN §5).
 */
export function recordedRefusal(readings: Reading[], refusal: Refusal): Reading | null {
  if (!refusal.at) return null;
  return (
    readings.find((r) => sameRefusal(r, refusal) && (!refusal.exact || r.exact === true)) ?? null
  );
}

/** Refusal readings less the text readings a structured reading of the same refusal replaced. */
export function withoutReplaced(refusals: readonly Reading[]): Reading[] {
  const exact = refusals.filter((r) => r.source === "refusal" && r.exact === true);
  if (exact.length === 0) return [...refusals];
  return refusals.filter(
    (r) =>
      r.exact === true ||
      !exact.some((e) =>
        sameRefusal(e, {
          text: r.text,
          at: r.refusal_at,
          ...(r.session ? { session: r.session } : {}),
          ...(r.from ? { from: r.from } : {}),
        }),
      ),
  );
}

/**
 * Records a usage-limit refusal as a 100 % reading for the whole seat, so every program on it
 * pauses alike (see `refusalReading`). One refusal (same text and entry time) is recorded
 * once: a fallback reset is fixed when first seen, so the pause ends and is re-checked.
 * Returns the reading in effect for it.
 */
export function recordRefusalReading(
  seat: string,
  refusal: Refusal,
  fallbackMs: number,
  now: number = Date.now(),
  env: NodeJS.ProcessEnv = process.env,
): Reading {
  const same = recordedRefusal(readReadings(seat, env), refusal);
  if (same) return same;
  const reading = refusalReadingOf(refusal, fallbackMs, now);
  const [written] = appendReadings(seat, [reading], now, env);
  return written ?? { at: iso(now), seat, ...reading };
}
