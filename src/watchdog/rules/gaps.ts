import type { Policy } from "../../config/policy.js";
import type { PauseSpan } from "../../journal/replay.js";
import { steppedBack } from "../../util/mono.js";
import type { Facts, Gap } from "../gather/facts.js";

// Sleep and clock gaps, and heartbeat age (DESIGN §6): the time arithmetic the rules share.

export const ms = (text: string | null | undefined): number =>
  text ? Date.parse(text) : Number.NaN;

/**
 * The cadence gaps are judged against (DESIGN §6): how often the watchdog really runs. The
 * tick's own (`--every`, else the interval), or the last tick's when that was longer: a hand
 * tick between two runs of a 15-minute timer must not read the timer's wait as a sleep.
 */
export function cadenceOf(
  policy: Pick<Policy, "cadence">,
  facts?: Pick<Facts, "last_tick_cadence_ms">,
): number {
  return Math.max(policy.cadence, facts?.last_tick_cadence_ms ?? 0);
}

/**
 * The gap this tick finds (DESIGN §6): the watchdog last ran more than two cadences ago, so the
 * host slept or the timer was held back. Null when there is none (or no last tick).
 */
export function currentGap(lastTickAt: string | null, now: number, cadence: number): Gap | null {
  const last = ms(lastTickAt);
  if (!lastTickAt || Number.isNaN(last) || now - last <= 2 * cadence) return null;
  return { from: lastTickAt, to: new Date(now).toISOString() };
}

/** A span as epoch ms. */
interface Span {
  from: number;
  to: number;
}

/**
 * The gaps that count (DESIGN §6): those earlier ticks recorded, plus the current one when the
 * watchdog last ran more than two intervals ago. Sorted and made disjoint.
 */
function gapSpans(facts: Facts, cadence: number): Span[] {
  const spans: Span[] = [];
  for (const g of facts.gaps ?? []) {
    const from = ms(g.from);
    const to = ms(g.to);
    if (!Number.isNaN(from) && !Number.isNaN(to) && to > from) spans.push({ from, to });
  }
  const gap = currentGap(facts.last_tick_at, ms(facts.now), cadence);
  if (gap) spans.push({ from: ms(gap.from), to: ms(gap.to) });
  spans.sort((a, b) => a.from - b.from);
  let covered = Number.NEGATIVE_INFINITY;
  const out: Span[] = [];
  for (const s of spans) {
    const from = Math.max(s.from, covered);
    if (s.to > from) out.push({ from, to: s.to });
    covered = Math.max(covered, s.to);
  }
  return out;
}

/**
 * The usage pauses the journal holds, oldest first, with the one this tick ends (`facts.paused`,
 * whose `unpaused` this tick journals) when the history does not hold it yet.
 */
function usagePauses(facts: Facts): PauseSpan[] {
  const out = [...(facts.history.pauses ?? [])];
  const p = facts.paused;
  if (p?.window && out.at(-1)?.from !== p.at) out.push({ from: p.at, to: p.until });
  return out;
}

/**
 * The spans that count against no manager (DESIGN §6): of every sleep/clock gap, the excess
 * over one cadence (`[from + cadence, to]`); and every usage pause, from its `paused` to its
 * end (the manager could make no request). Sorted and made disjoint.
 */
function creditedSpans(facts: Facts, cadence: number, pauses: boolean): Span[] {
  const spans: Span[] = gapSpans(facts, cadence).map((g) => ({ from: g.from + cadence, to: g.to }));
  if (pauses) for (const p of usagePauses(facts)) spans.push({ from: ms(p.from), to: ms(p.to) });
  spans.sort((a, b) => a.from - b.from);
  let covered = Number.NEGATIVE_INFINITY;
  const out: Span[] = [];
  for (const s of spans) {
    if (Number.isNaN(s.from) || Number.isNaN(s.to)) continue;
    const from = Math.max(s.from, covered);
    if (s.to > from) out.push({ from, to: s.to });
    covered = Math.max(covered, s.to);
  }
  return out;
}

/**
 * The credit for an age measured from `since` (DESIGN §6): the part of every gap's excess and
 * every usage pause that lies between `since` and now. A gap or pause stays credited on every
 * later tick, not only the one that found it.
 */
export function gapCredit(
  facts: Facts,
  policy: Pick<Policy, "cadence">,
  since: number,
  pauses = true,
): number {
  const now = ms(facts.now);
  let credit = 0;
  for (const g of creditedSpans(facts, cadenceOf(policy, facts), pauses)) {
    const lo = Math.max(g.from, since);
    const hi = Math.min(g.to, now);
    if (hi > lo) credit += hi - lo;
  }
  return credit;
}

/**
 * The end of the newest usage pause when it ended less than `claim_grace` ago (DESIGN §6): a
 * live holder then has until `end + claim_grace` to go on by itself (Claude Code sends itself
 * "…usage limit has reset. Continue…" 30–90 s after the reset) before rule 9 judges it.
 */
export function pauseGraceEnd(
  facts: Facts,
  policy: Pick<Policy, "claimGrace">,
): { ended: string; graceEnds: number } | null {
  const last = usagePauses(facts).at(-1);
  if (!last) return null;
  const now = ms(facts.now);
  const end = Math.min(ms(last.to), now);
  if (Number.isNaN(end) || ms(last.from) > now) return null;
  const graceEnds = end + policy.claimGrace;
  return now < graceEnds ? { ended: new Date(end).toISOString(), graceEnds } : null;
}

/**
 * The end of the newest usage pause when it ended `claim_grace` ago or more (DESIGN §14
 * `at_limit`): a holder still at Claude Code's usage-limit dialog then will not go on by itself.
 */
export function pauseEndedBefore(
  facts: Facts,
  policy: Pick<Policy, "claimGrace">,
): { ended: number } | null {
  const last = usagePauses(facts).at(-1);
  if (!last) return null;
  const now = ms(facts.now);
  const end = Math.min(ms(last.to), now);
  if (Number.isNaN(end) || ms(last.from) > now) return null;
  return now >= end + policy.claimGrace ? { ended: end } : null;
}

/**
 * The gaps this tick records in last-tick.json: those carried from the last one plus the
 * current gap (now − the last tick > two cadences), pruned to those that can still matter
 * (ended within four times the longer of stale_after and claim_grace; the newest 50).
 */
export function gapsToRecord(
  lastTickAt: string | null,
  gaps: readonly Gap[] | undefined,
  now: number,
  policy: Pick<Policy, "staleAfter" | "claimGrace">,
  cadence: number,
): Gap[] {
  const out = [...(gaps ?? [])];
  const gap = currentGap(lastTickAt, now, cadence);
  if (gap) out.push(gap);
  const keep = 4 * Math.max(policy.staleAfter, policy.claimGrace);
  // A gap matters while a heartbeat from before it could still be fresh: while the time since it
  // ended, less the credit of the gaps after it, is within `keep`. (By wall time alone, a second
  // long sleep dropped the first, and a manager that saved before both looked stuck.)
  const excess = (g: Gap) => Math.max(0, ms(g.to) - ms(g.from) - cadence);
  return out
    .filter((g) => {
      const end = ms(g.to);
      const later = out.filter((h) => ms(h.from) >= end).reduce((sum, h) => sum + excess(h), 0);
      return now - end - later <= keep;
    })
    .slice(-50);
}

/** Whether a heartbeat is the claim holder's own: its pid, and its start time when it has one. */
export function isHoldersBeat(
  beat: { pid: number; start_time?: string } | null,
  claim: { pid: number; start_time: string },
): boolean {
  return (
    beat !== null &&
    beat.pid === claim.pid &&
    (beat.start_time === undefined || beat.start_time === claim.start_time)
  );
}

/**
 * Heartbeat age (DESIGN §6): now − the later of `claimed_at` and the heartbeat's `at` when the
 * heartbeat is the holder's own, less the credit for that span (gaps, and time inside pauses). Null when no holder has a
 * claim time.
 */
export function heartbeatAge(
  facts: Facts,
  policy: Pick<Policy, "cadence">,
): {
  age: number;
  credit: number;
  pauseCredit: number;
  saved: boolean;
  /** How far the wall clock was stepped back since the save: added to the age. */
  steppedBack: number;
} | null {
  const claim = facts.claim;
  if (!("claimed_at" in claim)) return null;
  let since = ms(claim.claimed_at);
  let saved = false;
  let back = 0;
  const beat = facts.heartbeat;
  if (beat && isHoldersBeat(beat, claim)) {
    const at = ms(beat.at);
    if (!Number.isNaN(at) && (Number.isNaN(since) || at >= since)) {
      since = at;
      saved = true;
      back = steppedBack(at, beat, ms(facts.now), facts.now_mono);
    }
  }
  if (Number.isNaN(since)) since = Number.NEGATIVE_INFINITY;
  // After a step back, what came after the save is stamped up to `back` before it: the credit
  // (a pause, a gap) counts from there. It can only add credit, never make the age larger.
  const from = since - back;
  const credit = gapCredit(facts, policy, from);
  // The part of the credit that only the pauses give (a sleep inside a pause counts once).
  const pauseCredit = credit - gapCredit(facts, policy, from, false);
  const age = Math.max(0, ms(facts.now) - since - credit + back);
  return { age, credit, pauseCredit, saved, steppedBack: back };
}

/** A start's age for claim_grace: wall time since, less gap credit, plus any step back. */
export function startAge(
  facts: Facts,
  policy: Pick<Policy, "cadence">,
  start: { at: string; mono_ms?: number; boot?: string | null },
): { age: number; credit: number; steppedBack: number } {
  const at = ms(start.at);
  const back = steppedBack(at, start, ms(facts.now), facts.now_mono);
  const credit = gapCredit(facts, policy, at - back);
  return { age: Math.max(0, ms(facts.now) - at - credit + back), credit, steppedBack: back };
}

/** Whether the live holder's heartbeat is stale: what makes the merge lock worth reading. */
export function isStale(facts: Facts, policy: Pick<Policy, "cadence" | "staleAfter">): boolean {
  const hb = heartbeatAge(facts, policy);
  return hb !== null && hb.age >= policy.staleAfter;
}
