import type { Policy } from "../config/load.js";
import type { StartRecord } from "../journal/replay.js";
import { formatDuration } from "../util/duration.js";
import type { Facts, Gap } from "./facts.js";

export const DECISIONS = [
  "locked",
  "finished",
  "hold",
  "wait_pause",
  "pause",
  "foreign",
  "ok",
  "merge_in_flight",
  "restart_stuck",
  "restart_dead",
  "start_after_hand_over",
  "starting",
  "start",
  "stand_down",
] as const;
export type DecisionKind = (typeof DECISIONS)[number];

/** The rule settings decide reads (all durations in ms). */
export type DecidePolicy = Pick<
  Policy,
  | "interval"
  | "staleAfter"
  | "claimGrace"
  | "mergeMax"
  | "crashLoopStarts"
  | "crashLoopWithin"
  | "noProgressHandOvers"
  | "pauseFallback"
>;

/** What to do, as data: act() carries it out in this order (unpause, pause, stop, break, start). */
export interface Decision {
  decision: DecisionKind;
  /** For people: why, in words an engineer reading at 7 am understands. */
  reason: string;
  /** The row of DESIGN §6 that matched. */
  rule: number;
  /** Rule 4 fired first: journal `unpaused`, then the rest. */
  unpause?: { reason: string };
  pause?: { until: string; reason: string; window: string | null };
  stand_down?: { reason: string };
  /** Keep evidence and stop the live holder (restart_stuck, or a stuck manager before a stand-down). */
  stop_holder?: boolean;
  /**
   * The holder's stop is expected, not an incident: the first tick after a pause stops a
   * manager that was told to save and stop for it and did not (journaled `planned`, not paged).
   */
  stop_note?: { reason: string; planned: true };
  /**
   * Rule 11: the manager that handed over, stopped if it is still alive (a session in a pane
   * stays up after its hand-over), with the start that launched it (its pane) when known.
   */
  stop_handed_over?: { pid: number; start_time: string; start: StartRecord | null };
  /** Break the claim of a dead, reused, unreadable or just-stopped holder. */
  break_claim?: boolean;
  /** Rule 13: what a start that never claimed left running. */
  stop_leftover?: StartRecord;
  start?: { reason: string; planned: boolean };
  heartbeat_age_ms?: number;
  /** How much of a sleep or clock gap was not counted against the manager. */
  gap_credit_ms?: number;
}

const fmt = formatDuration;
const ms = (text: string | null | undefined): number => (text ? Date.parse(text) : Number.NaN);

/** A span as epoch ms. */
interface Span {
  from: number;
  to: number;
}

/**
 * The gaps that count (DESIGN §6): those earlier ticks recorded, plus the current one when the
 * watchdog last ran more than two intervals ago. Sorted and made disjoint.
 */
function gapSpans(facts: Facts, interval: number): Span[] {
  const spans: Span[] = [];
  for (const g of facts.gaps ?? []) {
    const from = ms(g.from);
    const to = ms(g.to);
    if (!Number.isNaN(from) && !Number.isNaN(to) && to > from) spans.push({ from, to });
  }
  const last = ms(facts.last_tick_at);
  const now = ms(facts.now);
  if (!Number.isNaN(last) && now - last > 2 * interval) spans.push({ from: last, to: now });
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
 * The sleep/clock-gap credit for an age measured from `since` (DESIGN §6): of every gap, the
 * excess over one interval (`[from + interval, to]`) that lies between `since` and now counts
 * against no manager. A gap stays credited on every later tick, not only the one that found it.
 */
export function gapCredit(
  facts: Facts,
  policy: Pick<DecidePolicy, "interval">,
  since: number,
): number {
  const now = ms(facts.now);
  let credit = 0;
  for (const g of gapSpans(facts, policy.interval)) {
    const lo = Math.max(g.from + policy.interval, since);
    const hi = Math.min(g.to, now);
    if (hi > lo) credit += hi - lo;
  }
  return credit;
}

/**
 * The gaps this tick records in last-tick.json: those carried from the last one plus the
 * current gap (now − the last tick > two intervals), pruned to those that can still matter
 * (ended within four times the longer of stale_after and claim_grace; the newest 50).
 */
export function gapsToRecord(
  lastTickAt: string | null,
  gaps: readonly Gap[] | undefined,
  now: number,
  policy: Pick<DecidePolicy, "interval" | "staleAfter" | "claimGrace">,
): Gap[] {
  const out = [...(gaps ?? [])];
  const last = ms(lastTickAt);
  if (lastTickAt && !Number.isNaN(last) && now - last > 2 * policy.interval)
    out.push({ from: lastTickAt, to: new Date(now).toISOString() });
  const keep = 4 * Math.max(policy.staleAfter, policy.claimGrace);
  // A gap matters while a heartbeat from before it could still be fresh: while the time since it
  // ended, less the credit of the gaps after it, is within `keep`. (By wall time alone, a second
  // long sleep dropped the first, and a manager that saved before both looked stuck.)
  const excess = (g: Gap) => Math.max(0, ms(g.to) - ms(g.from) - policy.interval);
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
 * heartbeat is the holder's own, less the gap credit for that span. Null when no holder has a
 * claim time.
 */
export function heartbeatAge(
  facts: Facts,
  policy: Pick<DecidePolicy, "interval">,
): { age: number; credit: number; saved: boolean } | null {
  const claim = facts.claim;
  if (!("claimed_at" in claim)) return null;
  let since = ms(claim.claimed_at);
  let saved = false;
  const beat = facts.heartbeat;
  if (beat && isHoldersBeat(beat, claim)) {
    const at = ms(beat.at);
    if (!Number.isNaN(at) && (Number.isNaN(since) || at >= since)) {
      since = at;
      saved = true;
    }
  }
  if (Number.isNaN(since)) since = Number.NEGATIVE_INFINITY;
  const credit = gapCredit(facts, policy, since);
  return { age: Math.max(0, ms(facts.now) - since - credit), credit, saved };
}

/** Whether the live holder's heartbeat is stale: what makes the merge lock worth reading. */
export function isStale(facts: Facts, policy: DecidePolicy): boolean {
  const hb = heartbeatAge(facts, policy);
  return hb !== null && hb.age >= policy.staleAfter;
}

function gapNote(credit: number): string {
  return credit > 0 ? ` (a ${fmt(credit)} gap in the watchdog's runs is not counted)` : "";
}

/** Rules 0–13 of DESIGN §6 plus the crash-loop guard, first match wins. Pure: no I/O, no clock. */
export function decide(facts: Facts, policy: DecidePolicy): Decision {
  const now = ms(facts.now);

  // 0. Another tick of this program is running.
  if (facts.tick_lock.held) {
    const who = facts.tick_lock.pid !== null ? ` (pid ${facts.tick_lock.pid})` : "";
    return { decision: "locked", rule: 0, reason: `another tick${who} is working on it` };
  }
  // 1. Finished and not reopened.
  if (facts.finished) {
    const note = facts.finished.note ? `: ${facts.finished.note}` : "";
    return {
      decision: "finished",
      rule: 1,
      reason: `finished ${fmt(now - ms(facts.finished.at))} ago${note}; sheepdog reopen starts it again`,
    };
  }
  // 2. Stood down and not cleared.
  if (facts.stood_down) {
    return {
      decision: "hold",
      rule: 2,
      reason: `stood down ${fmt(now - ms(facts.stood_down.at))} ago: ${facts.stood_down.reason}; sheepdog resume clears it`,
    };
  }
  // 3–4. Paused.
  let unpause: Decision["unpause"];
  if (facts.paused) {
    const until = ms(facts.paused.until);
    if (now < until) {
      return {
        decision: "wait_pause",
        rule: 3,
        reason: `paused until ${facts.paused.until} (${fmt(until - now)} from now): ${facts.paused.reason}`,
      };
    }
    // A pause at a usage limit ends when its window resets: the fresh manager is told so.
    const w = facts.paused.window;
    unpause = {
      reason: w
        ? `the usage pause is over: the ${w} window reset at ${facts.paused.until}`
        : `the pause until ${facts.paused.until} is over`,
    };
  }
  const base = unpause ? { unpause } : {};
  const plannedWhy =
    facts.history.planned_next ?? (unpause ? "the first start after the pause ended" : null);
  /** A start's reason; the first start after a pause names the pause's end. */
  const startReason = (why: string): string => (unpause ? `${unpause.reason}; ${why}` : why);

  // 5. Seat limited.
  if (facts.seat.limited) {
    const until = facts.seat.until ?? new Date(now + policy.pauseFallback).toISOString();
    const r = facts.seat.refusal;
    const evidence = r
      ? `; the manager's transcript ends in a usage-limit refusal${r.named_reset ? "" : ` naming no reset, so it is re-checked after usage.pause_fallback (${fmt(policy.pauseFallback)})`}`
      : "";
    const reason = `seat ${facts.seat.seat} is limited (${facts.seat.reason}${evidence}) until ${until}`;
    return {
      ...base,
      decision: "pause",
      rule: 5,
      reason: `${reason}; nothing starts until then`,
      pause: { until, reason, window: facts.seat.window },
    };
  }

  const claim = facts.claim;
  // 6. Claimed on another machine: never judged here.
  if (claim.state === "foreign") {
    return {
      ...base,
      decision: "foreign",
      rule: 6,
      reason: `claimed by pid ${claim.pid} on ${claim.hostname} (another machine): not judged here`,
    };
  }

  // The crash-loop guard: before any unplanned start (DESIGN §6).
  const crashLoop = (): string | null => {
    const recent = facts.history.unplanned_starts.filter(
      (at) => now - ms(at) <= policy.crashLoopWithin,
    );
    if (recent.length < policy.crashLoopStarts) return null;
    return `crash loop: ${recent.length} unplanned start${recent.length === 1 ? "" : "s"} within ${fmt(policy.crashLoopWithin)} (the last ${fmt(now - ms(recent[recent.length - 1]))} ago); another would fail the same way`;
  };
  // Where a command-launched manager's output went: what a person reads first after a loop.
  const logHint =
    facts.history.last_start?.launcher === "command"
      ? "; the managers' output is in .sheepdog/manager.log"
      : "";
  /** A crash-loop stand-down: what failed last, the loop, and where to look. */
  const loopDown = (cause: string, loop: string, sep = "; ") => ({
    reason: `${cause}${sep}${loop}`,
    stand_down: { reason: `${cause}${sep}${loop}${logHint}` },
  });
  const startFor = (reason: string): Decision["start"] => ({
    reason: startReason(reason),
    planned: plannedWhy !== null,
  });

  if (claim.state === "alive") {
    const hb = heartbeatAge(facts, policy) ?? { age: 0, credit: 0, saved: false };
    const what = hb.saved ? "last save" : "claimed without a save";
    // 7. Alive and fresh.
    if (hb.age < policy.staleAfter) {
      const ls = facts.history.last_start;
      const unit = ls?.unit && ls.pid === claim.pid ? ` in ${ls.unit}` : "";
      return {
        ...base,
        decision: "ok",
        rule: 7,
        reason: `pid ${claim.pid}${unit} alive, ${what} ${fmt(hb.age)} ago (stale after ${fmt(policy.staleAfter)})${gapNote(hb.credit)}`,
        heartbeat_age_ms: hb.age,
        gap_credit_ms: hb.credit,
      };
    }
    let stale = hb.saved
      ? `no save for ${fmt(hb.age)} (stale after ${fmt(policy.staleAfter)})`
      : `no save since it claimed ${fmt(hb.age)} ago (stale after ${fmt(policy.staleAfter)})`;
    // 8. A merge is in flight: leave it alone.
    const lock = facts.merge_lock;
    if (lock?.held) {
      const live = lock.liveness === "alive";
      const youngForeign =
        lock.liveness === "foreign" && lock.age_ms !== null && lock.age_ms < policy.mergeMax;
      if (live || youngForeign) {
        const item = lock.holder?.item ? ` for ${lock.holder.item}` : "";
        const who = lock.holder ? `pid ${lock.holder.pid}` : "a holder";
        return {
          ...base,
          decision: "merge_in_flight",
          rule: 8,
          reason: `pid ${claim.pid}: ${stale}, but the merge lock is held by ${who}${item}${live ? " (alive)" : ` on another machine, ${fmt(lock.age_ms ?? 0)} old`}: left alone`,
          heartbeat_age_ms: hb.age,
          gap_credit_ms: hb.credit,
        };
      }
    }
    if (lock && !lock.held && lock.error) stale += ` (merge lock unreadable: ${lock.error})`;
    // 9. Alive but stuck: stop it (always), then start anew unless the guard says stand down.
    const loop = plannedWhy === null ? crashLoop() : null;
    if (loop) {
      return {
        ...base,
        decision: "stand_down",
        rule: 9,
        ...loopDown(`pid ${claim.pid} was stuck: ${stale}; stopped`, loop, ", and "),
        stop_holder: true,
        heartbeat_age_ms: hb.age,
        gap_credit_ms: hb.credit,
      };
    }
    // A manager told at a pause to save and stop that did not: its stop is expected.
    const paused = facts.paused;
    const forPause =
      unpause && paused
        ? paused.window !== null || /limit|usage/i.test(paused.reason)
          ? "the usage pause"
          : "the pause"
        : null;
    return {
      ...base,
      decision: "restart_stuck",
      rule: 9,
      reason: `pid ${claim.pid}: ${stale}${gapNote(hb.credit)}`,
      stop_holder: true,
      ...(forPause
        ? {
            stop_note: {
              reason: `stopped for ${forPause}; pid ${claim.pid}: ${stale}${gapNote(hb.credit)}`,
              planned: true as const,
            },
          }
        : {}),
      break_claim: true,
      start: startFor(`the previous manager (pid ${claim.pid}) was stuck: ${stale}`),
      heartbeat_age_ms: hb.age,
      gap_credit_ms: hb.credit,
    };
  }

  if (claim.state !== "none") {
    // 10. Dead holder, pid reused, or holder.json unreadable.
    const what =
      claim.state === "unreadable"
        ? `the claim's holder is unreadable (${claim.problem})`
        : claim.state === "reused"
          ? `holder pid ${claim.pid} is gone (the pid now belongs to another process)`
          : `holder pid ${claim.pid} is dead`;
    const loop = plannedWhy === null ? crashLoop() : null;
    if (loop) {
      // The dead holder's claim is left for the next start to break.
      return { ...base, decision: "stand_down", rule: 10, ...loopDown(what, loop) };
    }
    return {
      ...base,
      decision: "restart_dead",
      rule: 10,
      reason: what,
      break_claim: true,
      start: startFor(`the previous manager stopped: ${what}`),
    };
  }

  // 11. No claim, and a hand-over after the last start.
  const hand = facts.history.hand_over_since_last_start;
  if (hand) {
    // The manager that handed over, if it is still running, is stopped before anything starts.
    const start = facts.history.last_start;
    const stop =
      hand.pid !== null && hand.start_time !== null
        ? {
            stop_handed_over: {
              pid: hand.pid,
              start_time: hand.start_time,
              start:
                start &&
                ((start.pid !== undefined && start.pid === hand.pid) ||
                  (hand.claimed_at !== null && ms(start.at) <= ms(hand.claimed_at)))
                  ? start
                  : null,
            },
          }
        : {};
    const n = policy.noProgressHandOvers;
    // Only managers whose claim ended after the last `resume` count.
    const last = facts.history.managers.slice(-n);
    const first = last[0]?.first_progress ?? null;
    if (
      last.length === n &&
      first !== null &&
      last.every(
        (m) => m.ended === "hand_over" && m.hand_over_progress === first && !m.before_cleared,
      )
    ) {
      const reason = `no progress: the last ${n} managers each handed over with progress ${JSON.stringify(first)}, the same the first of them found at its first save`;
      return { ...base, ...stop, decision: "stand_down", rule: 11, reason, stand_down: { reason } };
    }
    const tokens = hand.context_tokens !== null ? ` at ${hand.context_tokens} tokens` : "";
    const note = hand.note ? `: ${hand.note}` : "";
    const reason = `the previous manager handed over${tokens}${note}`;
    return {
      ...base,
      ...stop,
      decision: "start_after_hand_over",
      rule: 11,
      reason,
      start: { reason: startReason(reason), planned: true },
    };
  }

  // 12. A start is on its way: wait for it to claim.
  const lastStart = facts.history.last_start;
  const unclaimed = lastStart !== null && !facts.history.claimed_since_last_start;
  // A start whose process already exited will never claim: not waited for (DESIGN §6).
  const exited = unclaimed && facts.last_start_process === "dead";
  if (lastStart && unclaimed && !exited) {
    const credit = gapCredit(facts, policy, ms(lastStart.at));
    const since = Math.max(0, now - ms(lastStart.at) - credit);
    if (since < policy.claimGrace) {
      const unit = lastStart.unit ? ` in ${lastStart.unit}` : "";
      const who = lastStart.pid !== undefined ? ` (pid ${lastStart.pid}${unit})` : "";
      return {
        ...base,
        decision: "starting",
        rule: 12,
        reason: `a manager started ${fmt(since)} ago${who} has not claimed yet (grace ${fmt(policy.claimGrace)})${gapNote(credit)}`,
      };
    }
  }

  // 13. Nothing holds the program: start one.
  let why: string;
  const failed = facts.history.last_failed_start;
  if (failed)
    why = `the last start (${fmt(now - ms(failed.at))} ago, ${failed.launcher}) failed: ${failed.reason}`;
  else if (lastStart === null) why = "the program's first start";
  else if (exited)
    why = `the manager started ${fmt(now - ms(lastStart.at))} ago (pid ${lastStart.pid}) exited before it claimed`;
  else if (unclaimed) {
    const who = lastStart.pid !== undefined ? ` (pid ${lastStart.pid})` : "";
    why = `the manager started ${fmt(now - ms(lastStart.at))} ago${who} never claimed (grace ${fmt(policy.claimGrace)})`;
  } else why = "no manager holds the claim";
  const leftover = unclaimed && lastStart ? { stop_leftover: lastStart } : {};
  const loop = plannedWhy === null ? crashLoop() : null;
  if (loop) {
    return { ...base, ...leftover, decision: "stand_down", rule: 13, ...loopDown(why, loop) };
  }
  return {
    ...base,
    ...leftover,
    decision: "start",
    rule: 13,
    reason: plannedWhy && plannedWhy !== why ? `${why} (planned: ${plannedWhy})` : why,
    start: startFor(why),
  };
}
