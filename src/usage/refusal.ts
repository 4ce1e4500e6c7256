// Reading a usage-limit refusal (DESIGN §5): Claude Code's structured fields when the entry has
// them, else its text. Pure: the entry's time and the local zone come in as arguments, so the
// table of texts in the tests pins every case.

import { instantOfWallTime, validZone, wallTimeOf } from "../util/wall-clock.js";
import { plausibleReset } from "./window-bounds.js";

export type RefusalWindow = "five_hour" | "seven_day";

export interface ParsedRefusal {
  /** Epoch seconds the limit resets, or null when the text names no time we can be sure of. */
  resets_at: number | null;
  window: RefusalWindow;
  /**
   * The reset the text named, when it did not fit its window (DESIGN §5: more than the window's
   * length ahead of the entry, or before it) and so was not trusted: `resets_at` is null then.
   */
  untrusted_reset?: string;
  /**
   * The refusal names no reset at all (an org's spend cap, a paused org, no usage left): a
   * person must act. What Claude Code told them to do ("ask your admin to raise it at …",
   * "For help, please contact support."), else the refusal's whole text.
   */
  needs_person?: string;
}

/** The parse, with a named reset that cannot be right dropped (DESIGN §5). */
function sane(window: RefusalWindow, resetsAt: number | null, entryTime: number): ParsedRefusal {
  if (resetsAt === null || plausibleReset(window, resetsAt * 1000, entryTime))
    return { resets_at: resetsAt, window };
  return { resets_at: null, window, untrusted_reset: new Date(resetsAt * 1000).toISOString() };
}

const WEEKDAYS = ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"];
const MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];

/**
 * A warning or a notice is never a limit: "Approaching usage limit · 75% used", and Claude Code
 * 2.1.328/2.1.332's own lists: "You've used 90% of your …", "Over 90% of your … used",
 * "You're close to your …", "You're now using usage credits", "Now using extra usage".
 */
const WARNING =
  /\bapproaching\b|\b\d{1,3}\s*%\s*(?:of\s+\w+\s+)?used\b|^\s*you['’]ve used\b|^\s*over \d{1,3}\s*% of\b|^\s*you['’]re close to\b|^\s*(?:you['’]re )?now using\b/i;

/**
 * The limits an account has (DESIGN §5), by name: never `Rate limit` (a server-side 429 while
 * the account has room) nor `Context limit` (the window is full: /compact).
 */
const KIND = String.raw`(?:usage|session|weekly|opus|sonnet|fable|(?:\d+|five)[- ]hour|daily)`;
const APOS = "['’]";
/**
 * Every usage-limit refusal text: DESIGN §5's list, which holds the prefixes Claude Code
 * 2.1.328 and 2.1.332 themselves test a message against ("You've hit your", "You've reached
 * your", "You're out of usage credits", "Your org is out of usage", "Your seat type doesn't
 * include …", "Your usage allocation has been disabled by your admin", "Your group's usage limit
 * is set to $0", "<Model> requires usage credits.", "You're out of extra usage", "This service
 * is disabled for your org"), and "Usage is paused for your organization".
 */
const LIMIT = new RegExp(
  [
    String.raw`\busage limit reached\b`,
    // `5-hour limit reached`, `Weekly limit reached`, `Opus 4 limit reached`, `Session limit reached`
    String.raw`(?:^|[^\w-])${KIND}(?: [\d.]+)? limit reached\b`,
    // `You've hit your session limit`, `You’ve hit your limit`, `…your individual spend limit`,
    // `…your org's monthly spend limit`, `…your team's pooled group budget`, `You've reached your
    // Fable limit`: any name but a rate or context limit
    String.raw`\b(?:hit|reached) your (?!(?:rate|context)\b)(?:[^\s·∙]+ ){0,5}(?:limit|budget)\b`,
    String.raw`\bout of (?:extra usage|usage credits|usage)\b`,
    String.raw`\busage is paused for your organi[sz]ation\b`,
    String.raw`\bthis service is disabled for your org\b`,
    String.raw`\bseat type doesn${APOS}t include (?:extra usage|usage credits|usage)\b`,
    String.raw`\busage allocation has been disabled\b`,
    String.raw`\bgroup${APOS}s usage limit is set to \$0\b`,
    String.raw`^\s*(?:fable|haiku|mythos|opus|sonnet)(?: [^·∙\n]{1,40})? requires usage credits\b`,
  ].join("|"),
  "i",
);
/** Texts that name a limit but say it is not the account's (`… (not your usage limit)`). */
const NOT_A_LIMIT = /\bnot your usage limit\b|\btemporarily limiting requests\b/i;

/** The window a text speaks of: weekly, Opus, Sonnet and Fable limits are the seven-day window. */
export function refusalWindow(text: string): RefusalWindow {
  return /\bweek(?:ly)?\b|\b7[- ]day\b|\bseven[- ]day\b|\bopus\b|\bsonnet\b|\bfable\b/i.test(text)
    ? "seven_day"
    : "five_hour";
}

/**
 * The window Claude Code's structured `rateLimitType` names (DESIGN §5): `five_hour`; every other
 * type (`seven_day`, `seven_day_opus`, `seven_day_sonnet`, `seven_day_overage_included`,
 * `overage`, none) is bounded like `seven_day`.
 */
export function windowOfLimitType(type: string | null | undefined): RefusalWindow {
  return type === "five_hour" ? "five_hour" : "seven_day";
}

/** A refusal's ` · `-separated parts (`You've hit your … · ask your admin … · your … resets …`). */
function partsOf(text: string): string[] {
  return text
    .split(/\s[·∙](?:\s|$)/)
    .map((p) => p.trim())
    .filter(Boolean);
}

/**
 * What Claude Code told a person to do when a refusal names no reset: the parts after the first
 * (`ask your admin to raise it at …`, `add funds to continue`), or the sentences after the first
 * (`Usage is paused for your organization. For help, please contact support.`), else the text.
 */
export function adviceOf(text: string): string {
  const parts = partsOf(text.trim());
  if (parts.length > 1) return parts.slice(1).join(" · ");
  const sentences = /^(.+?[.!])\s+(\S.*)$/.exec(parts[0] ?? "");
  return sentences?.[2] ?? text.trim();
}

/**
 * Whether `text` is a usage-limit refusal, and until when. `entryTime` (ms) is the refusal
 * entry's own time: a clock time ("resets 3pm") means the next such time after it, in the
 * zone the text names, else `localZone`. Returns null for anything that is not a limit.
 */
export function parseRefusal(
  text: string,
  entryTime: number,
  localZone: string = Intl.DateTimeFormat().resolvedOptions().timeZone,
): ParsedRefusal | null {
  const epoch = /usage limit reached\s*\|\s*(\d{9,13})\b/i.exec(text);
  if (epoch) {
    const n = Number(epoch[1]);
    return sane(refusalWindow(text), n > 1e12 ? Math.floor(n / 1000) : n, entryTime);
  }
  if (!isLimitText(text)) return null;
  const part = resetPart(text);
  if (!part) {
    // Names no reset: pauses for usage.pause_fallback, and a person is told what to do.
    return { resets_at: null, window: refusalWindow(text), needs_person: adviceOf(text) };
  }
  // `… · your 5-hour limit resets 12:25pm (UTC)`: that window's reset (DESIGN §5).
  const named = /\byour (.+?) limit resets?\b/i.exec(part);
  const window = refusalWindow(named ? (named[1] ?? "") : (partsOf(text)[0] ?? text));
  return sane(window, resetOf(part, entryTime, localZone), entryTime);
}

/** Whether a text is a usage-limit refusal (DESIGN §5's is / is-not lists). */
export function isLimitText(text: string): boolean {
  if (!LIMIT.test(text) || NOT_A_LIMIT.test(text)) return false;
  return !(WARNING.test(text) && !/reached|\bhit\b/i.test(text));
}

/** The first ` · `-part that names a reset (`resets 12:25pm (UTC)`), or null. */
function resetPart(text: string): string | null {
  return partsOf(text).find((p) => /\bresets?\b/i.test(p)) ?? null;
}

/** Claude Code's structured reading of a refused turn (`apiErrorParams.rate_limit_info`). */
export interface RateLimitInfo {
  status: string | null;
  /** The header's reset, epoch seconds, exact. */
  resets_at: number | null;
  /** `five_hour`, `seven_day`, `seven_day_opus`, `overage`, …; null when it names none. */
  type: string | null;
}

/**
 * A refusal from the structured fields (DESIGN §5): the reset is `resetsAt` to the second and
 * the window `rateLimitType`'s. A refusal whose text names no reset (an org's spend cap, a
 * paused org) is one that no window's reset ends: it pauses for usage.pause_fallback and a
 * person is told, whatever `resetsAt` says. Pure.
 */
export function structuredRefusal(
  info: RateLimitInfo,
  text: string,
  entryTime: number,
  localZone?: string,
): ParsedRefusal {
  const window = windowOfLimitType(info.type);
  const fromText = text ? parseRefusal(text, entryTime, localZone) : null;
  if (fromText?.needs_person) return { ...fromText, window };
  if (info.resets_at === null)
    return fromText ? { ...fromText, window } : { resets_at: null, window };
  return sane(window, info.resets_at, entryTime);
}

/**
 * The reset phrase (DESIGN §5): what follows `resets` up to the first ` · ` or ` ∙ ` (an upgrade
 * hint or a trailing separator is not part of it); the zone is its first parenthesised group,
 * and whatever follows that group is ignored.
 */
function resetPhrase(text: string): { spec: string; zone: string | null } | null {
  const m = /\bresets?\s+(?:at\s+|on\s+)?([^\n]*)/i.exec(text);
  if (!m) return null;
  let phrase = m[1] ?? "";
  const cut = /\s[·∙](?:\s|$)/.exec(phrase);
  if (cut) phrase = phrase.slice(0, cut.index);
  const paren = /\(([^)]*)\)/.exec(phrase);
  const spec = (paren ? phrase.slice(0, paren.index) : phrase).replace(/[\s.·∙]+$/, "");
  return { spec, zone: paren?.[1]?.trim() || null };
}

function resetOf(text: string, entryTime: number, localZone: string): number | null {
  const m = resetPhrase(text);
  if (!m || !Number.isFinite(entryTime)) return null;
  const spec = m.spec.trim().toLowerCase().replace(/,/g, " ").replace(/\s+/g, " ");
  const zone = m.zone || localZone;
  if (!validZone(zone)) return null;

  const clockRe = /(?:^|\s)(?:at\s+)?(\d{1,2})(?::(\d{2}))?\s*(am|pm)?$/;
  const clock = clockRe.exec(spec);
  let hour = 0;
  let minute = 0;
  let rest = spec;
  if (clock) {
    hour = Number(clock[1]);
    minute = Number(clock[2] ?? 0);
    const ampm = clock[3];
    if (!ampm && clock[2] === undefined) return null; // a bare number is not a time
    if (ampm) {
      if (hour < 1 || hour > 12) return null;
      hour = (hour % 12) + (ampm === "pm" ? 12 : 0);
    }
    if (hour > 23 || minute > 59) return null;
    rest = spec.slice(0, clock.index).trim();
  }
  const start = wallTimeOf(entryTime, zone);
  if (rest === "" || rest === "today" || rest === "tomorrow") {
    if (!clock) return null;
    let day = { y: start.y, mo: start.mo, d: start.d + (rest === "tomorrow" ? 1 : 0) };
    let at = instantOfWallTime(day, hour, minute, zone);
    // Resets are printed rounded down to the minute: the entry's own minute means its end.
    if (rest === "" && at <= entryTime && entryTime < at + 60_000)
      return Math.floor((at + 60_000) / 1000);
    if (rest === "" && at <= entryTime) {
      day = { ...day, d: day.d + 1 };
      at = instantOfWallTime(day, hour, minute, zone);
    }
    return Math.floor(at / 1000);
  }
  const weekday = WEEKDAYS.findIndex((w) => rest === w || rest === w.slice(0, 3));
  if (weekday >= 0) {
    let ahead = (weekday - start.wd + 7) % 7;
    if (ahead === 0) {
      // "resets Tuesday" said on a Tuesday: today later, or a week on? Unsure.
      if (!clock) return null;
      if (instantOfWallTime(start, hour, minute, zone) <= entryTime) ahead = 7;
    }
    const at = instantOfWallTime(
      { y: start.y, mo: start.mo, d: start.d + ahead },
      hour,
      minute,
      zone,
    );
    return Math.floor(at / 1000);
  }
  const date =
    /^([a-z]{3})[a-z]*\.? (\d{1,2})$/.exec(rest) ?? /^(\d{1,2}) ([a-z]{3})[a-z]*\.?$/.exec(rest);
  if (date) {
    const [a, b] = [date[1] ?? "", date[2] ?? ""];
    const monthName = /^\d/.test(a) ? b : a;
    const dayNum = Number(/^\d/.test(a) ? a : b);
    const mo = MONTHS.indexOf(monthName.slice(0, 3)) + 1;
    if (mo === 0 || dayNum < 1 || dayNum > 31) return null;
    let at = instantOfWallTime({ y: start.y, mo, d: dayNum }, hour, minute, zone);
    if (at <= entryTime)
      at = instantOfWallTime({ y: start.y + 1, mo, d: dayNum }, hour, minute, zone);
    return Math.floor(at / 1000);
  }
  return null;
}

/** A usage-limit refusal record found at the end of a transcript. */
export interface Refusal {
  /** The refusal's text, e.g. `Claude AI usage limit reached|1763028000`. */
  text: string;
  /** When the limit resets (epoch seconds), or null when the text names no time. */
  resets_at: number | null;
  /** The entry's own timestamp (ISO), when it has one. */
  at: string | null;
  /** The window the text speaks of (weekly texts: `seven_day`); five_hour when absent. */
  window?: RefusalWindow;
  /** The reset the text named when it did not fit its window (DESIGN §5): not trusted. */
  untrusted_reset?: string;
  /** The reset is Claude Code's structured `resetsAt`, to the second (not a text's minute). */
  exact?: true;
  /** The structured `rateLimitType` (`five_hour`, `seven_day_opus`, `overage`, …). */
  limit_type?: string;
  /** The refusal names no reset: what Claude Code told a person to do (DESIGN §5). */
  needs_person?: string;
  /** The Claude Code session refused (the entry's `sessionId`, the hook's `session_id`). */
  session?: string;
  /** Read from the transcript entry (`at` is its own time) or the StopFailure hook. */
  from?: "transcript" | "hook";
}

/** A refusal found at `at` (ISO, or null), from its parse. */
export function refusalOf(
  text: string,
  at: string | null,
  parsed: ParsedRefusal,
  structured?: RateLimitInfo,
  where: { session?: string | null; from?: "transcript" | "hook" } = {},
): Refusal {
  const exact = structured?.resets_at != null && parsed.resets_at === structured.resets_at;
  return {
    text,
    resets_at: parsed.resets_at,
    at,
    window: parsed.window,
    ...(parsed.untrusted_reset ? { untrusted_reset: parsed.untrusted_reset } : {}),
    ...(exact ? { exact: true as const } : {}),
    ...(structured?.type ? { limit_type: structured.type } : {}),
    ...(parsed.needs_person ? { needs_person: parsed.needs_person } : {}),
    ...(where.session ? { session: where.session } : {}),
    ...(where.from ? { from: where.from } : {}),
  };
}
