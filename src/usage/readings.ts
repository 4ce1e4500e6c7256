// Usage readings per seat (DESIGN §5): one JSONL file per seat under the host state dir,
// appended by every statusline update and by the watchdog when it sees a refusal.
import { closeSync, fstatSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import * as z from "zod/mini";
import { openStateFile, writeFileAtomic } from "../util/fs.js";
import { appendLines, jsonValues, parseJsonlWith, readRange } from "../util/jsonl.js";
import { onFirstUse, orElse } from "../util/lenient.js";
import { iso } from "../util/time.js";
import { ensureHostDir, hostDir, hostStateDir, seatKey } from "./host-state.js";

export type UsageWindow = "five_hour" | "seven_day";
export const WINDOWS: readonly UsageWindow[] = ["five_hour", "seven_day"];

export interface Reading {
  at: string;
  seat: string;
  window: UsageWindow;
  used_percentage: number;
  /** ISO time the window resets. */
  resets_at: string;
  /** `rollout`: a Codex manager's rate_limits, recorded by save and the tick (DESIGN §19). */
  source: "statusline" | "refusal" | "rollout";
  /**
   * The agent session that rendered it (statusline and rollout readings; absent in old files),
   * or that was refused.
   */
  session?: string;
  /** For a refusal: its text and the entry's own time (so one refusal is recorded once). */
  text?: string;
  refusal_at?: string | null;
  /**
   * A refusal read from Claude Code's structured fields: its reset is the header's, to the
   * second, and it replaces a text reading of the same refusal (DESIGN §5).
   */
  exact?: boolean;
  /** The structured `rateLimitType` (`seven_day_opus`, `overage`, …). */
  limit_type?: string;
  /**
   * Where a refusal was read: its transcript entry (`refusal_at` is the entry's own time) or the
   * StopFailure hook (`refusal_at` is when the hook ran, a moment after).
   */
  from?: "transcript" | "hook";
  /** A refusal naming no reset: what Claude Code told a person to do. */
  needs_person?: string;
}

export type NewReading = Omit<Reading, "at" | "seat">;

/** The merged state of one window (DESIGN §5): the highest current use among sessions. */
export interface MergedWindow {
  used_percentage: number;
  /** Epoch ms. */
  resets_at: number;
  reset: boolean;
}

export type Merged = Record<UsageWindow, MergedWindow | null>;

const USAGE = "usage";
/** Past this size the file is pruned on the next append. */
const PRUNE_AT = 64 * 1024;
/** Readings kept per window when pruning, besides the ones that must stay. */
const KEEP_PER_WINDOW = 20;
/** How much of the file's end is read to find the newest reading of each window. */
const TAIL = 8 * 1024;
const WEEK = 7 * 24 * 3600 * 1000;

export function readingsPath(seat: string, env: NodeJS.ProcessEnv = process.env): string {
  return join(hostStateDir(env), USAGE, `${seatKey(seat)}.jsonl`);
}

/**
 * One line of a readings file. What the merge stands on (seat, window, use, a reset Date can
 * read) must be there, or the line is skipped; the rest is dropped field by field: a malformed
 * `at` reads as an unknown time (""), a missing or unknown source as a statusline reading (the
 * merge's own reading of anything not a refusal), a malformed session, text or refusal_at as
 * absent. Unknown keys are dropped. Built on first use (the Stop hook never reads readings).
 */
const readingSchema = onFirstUse(() => {
  const text = z.string();
  const absentIfBad = orElse(z.optional(text), undefined);
  return z.object({
    at: orElse(text, ""),
    seat: text,
    window: z.enum(["five_hour", "seven_day"]),
    used_percentage: z.number().check(z.refine(Number.isFinite)),
    resets_at: text.check(z.refine((t) => Number.isFinite(Date.parse(t)))),
    source: orElse(z.enum(["statusline", "refusal", "rollout"]), "statusline"),
    session: absentIfBad,
    text: absentIfBad,
    refusal_at: orElse(z.optional(z.nullable(text)), undefined),
    exact: orElse(z.optional(z.boolean()), undefined),
    limit_type: absentIfBad,
    needs_person: absentIfBad,
    from: orElse(z.optional(z.enum(["transcript", "hook"])), undefined),
  });
});

/** Parses a readings file's text; lines that are not whole readings (a torn last line) are skipped. */
export function parseReadings(text: string): Reading[] {
  return parseJsonlWith<Reading>(text, readingSchema());
}

export function readReadings(seat: string, env: NodeJS.ProcessEnv = process.env): Reading[] {
  hostDir(USAGE, env); // forged readings from a folder others can write would pause the seat
  try {
    return parseReadings(readFileSync(readingsPath(seat, env), "utf8"));
  } catch {
    return [];
  }
}

/** Every seat that has readings on this host. */
export function seatsWithReadings(env: NodeJS.ProcessEnv = process.env): string[] {
  const dir = hostDir(USAGE, env);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const seats = new Set<string>();
  for (const name of names) {
    if (!/^[0-9a-f]{16}\.jsonl$/.test(name)) continue;
    try {
      const readings = parseReadings(readFileSync(join(dir, name), "utf8"));
      const seat = readings.at(-1)?.seat;
      if (seat) seats.add(seat);
    } catch {
      // vanished meanwhile
    }
  }
  return [...seats].sort();
}

/** Which session a reading belongs to (readings written before sessions were recorded: one). */
function sessionOf(r: Reading): string {
  return r.session ?? "";
}

/** Per window, each session's newest statusline reading (readings are in file order). */
function newestPerSession(readings: readonly Reading[]): Record<UsageWindow, Reading[]> {
  const by: Record<UsageWindow, Map<string, Reading>> = {
    five_hour: new Map(),
    seven_day: new Map(),
  };
  for (const r of readings) if (r.source !== "refusal") by[r.window].set(sessionOf(r), r);
  return { five_hour: [...by.five_hour.values()], seven_day: [...by.seven_day.values()] };
}

/**
 * Merges the statusline's readings per window (DESIGN §5): each session's newest reading counts
 * (its reset may have moved, earlier as well as later); the window's use is the highest among
 * those whose reset is still ahead, and its reset the latest among the readings at that use.
 * When every session's reset has passed, the window has reset. Refusal readings are left out:
 * each limits the seat until its own reset (see `judgeSeat`). Pure.
 */
export function mergeReadings(readings: readonly Reading[], now: number): Merged {
  const merged: Merged = { five_hour: null, seven_day: null };
  const newest = newestPerSession(readings);
  for (const w of WINDOWS) {
    let best: MergedWindow | null = null;
    let lastPassed: MergedWindow | null = null;
    for (const r of newest[w]) {
      const resets = Date.parse(r.resets_at);
      if (now >= resets) {
        if (!lastPassed || resets > lastPassed.resets_at)
          lastPassed = { used_percentage: r.used_percentage, resets_at: resets, reset: true };
        continue;
      }
      if (
        !best ||
        r.used_percentage > best.used_percentage ||
        (r.used_percentage === best.used_percentage && resets > best.resets_at)
      )
        best = { used_percentage: r.used_percentage, resets_at: resets, reset: false };
    }
    merged[w] = best ?? lastPassed;
  }
  return merged;
}

/**
 * Drops old readings while keeping what the judgement needs: per window each session's newest
 * statusline reading until its reset has passed (the proof the window reopened for it), the
 * newest of all, and the last few of windows that reset less than a week ago; every refusal
 * reading not yet reset, and the last few recorded within a week (so a refusal still at the
 * end of a transcript is known as recorded and not recorded again). Keeps file order. Pure.
 */
export function pruneReadings(readings: Reading[], now: number): Reading[] {
  const keep = new Set<number>();
  const indexed = readings.map((r, i) => [r, i] as const);
  for (const w of WINDOWS) {
    const idx = indexed.filter(([r]) => r.window === w && r.source !== "refusal");
    const last = idx.at(-1);
    if (last) keep.add(last[1]);
    const newest = new Map<string, readonly [Reading, number]>();
    for (const e of idx) newest.set(sessionOf(e[0]), e);
    for (const [r, i] of newest.values()) if (Date.parse(r.resets_at) > now) keep.add(i);
    const recent = idx.filter(([r]) => Date.parse(r.resets_at) > now - WEEK);
    for (const [, i] of recent.slice(-KEEP_PER_WINDOW)) keep.add(i);
  }
  const refusals = indexed.filter(([r]) => r.source === "refusal");
  for (const [r, i] of refusals) if (Date.parse(r.resets_at) > now) keep.add(i);
  const recent = refusals.filter(([r]) => !(Date.parse(r.at) <= now - WEEK));
  for (const [, i] of recent.slice(-KEEP_PER_WINDOW)) keep.add(i);
  return readings.filter((_, i) => keep.has(i));
}

function sameValue(a: Reading | undefined, b: NewReading): boolean {
  return (
    !!a &&
    a.used_percentage === b.used_percentage &&
    Date.parse(a.resets_at) === Date.parse(b.resets_at) &&
    a.source === b.source &&
    a.session === b.session &&
    a.text === b.text &&
    a.refusal_at === b.refusal_at
  );
}

/**
 * Appends readings for a seat, skipping one identical to the newest reading of its window
 * (keeps the file small), and prunes the file when it has grown. Returns what was appended.
 */
export function appendReadings(
  seat: string,
  readings: NewReading[],
  now: number = Date.now(),
  env: NodeJS.ProcessEnv = process.env,
): Reading[] {
  if (readings.length === 0) return [];
  ensureHostDir(USAGE, env); // checked (and made 0700 when absent): one lstat a level
  const path = readingsPath(seat, env);
  const fd = openStateFile(path, "a+");
  let size: number;
  let written: Reading[];
  try {
    size = fstatSync(fd).size;
    // The newest reading of each window is near the end: read the tail, the rest only if needed.
    const wanted = new Set(readings.map(keyOf));
    let text = size > 0 ? readRange(fd, Math.max(0, size - TAIL), Math.min(size, TAIL)) : "";
    let newest = newestOf(text, wanted);
    if (size > TAIL && newest.size < wanted.size) newest = newestOf(readRange(fd, 0, size), wanted);
    written = readings
      .filter((r) => !sameValue(newest.get(keyOf(r)), r))
      .map((r) => ({ at: iso(now), seat, ...r }));
    if (written.length === 0) return [];
    // One write(2) on an O_APPEND file: concurrent statuslines never interleave lines.
    text = `${written.map((r) => JSON.stringify(r)).join("\n")}\n`;
    size += appendLines(fd, path, text, "the readings are not recorded");
  } finally {
    closeSync(fd);
  }
  if (size > PRUNE_AT) {
    const kept = pruneReadings(readReadings(seat, env), now);
    writeFileAtomic(path, kept.map((r) => `${JSON.stringify(r)}\n`).join(""));
  }
  return written;
}

/** A reading's series: its window and session (refusals are a series of their own). */
function keyOf(r: NewReading): string {
  return `${r.window}\u0000${r.source === "refusal" ? "\u0001refusal" : (r.session ?? "")}`;
}

/** The series a line claims, read off its raw value as `keyOf` reads a parsed reading's. */
function claimedSeries(v: unknown): string | null {
  if (!v || typeof v !== "object") return null;
  const o = v as Record<string, unknown>;
  const session = typeof o.session === "string" ? o.session : undefined; // as the schema reads it
  return keyOf({ window: o.window, source: o.source, session } as NewReading);
}

/**
 * The newest reading of each wanted series in `text`, read from its end until each is found.
 * Only a line of a wanted series pays for the schema (a statusline's start-up: zod parses a line
 * in tens of microseconds, the file holds hundreds, and another session's are of no interest);
 * its claimed series is what the schema makes of it, so nothing the schema keeps is passed over.
 */
function newestOf(text: string, wanted: ReadonlySet<string>): Map<string, Reading> {
  const newest = new Map<string, Reading>();
  for (const v of jsonValues(text, true)) {
    const key = claimedSeries(v);
    if (key === null || !wanted.has(key) || newest.has(key)) continue;
    const parsed = readingSchema().safeParse(v);
    if (!parsed.success) continue;
    newest.set(key, parsed.data);
    if (newest.size === wanted.size) break;
  }
  return newest;
}
