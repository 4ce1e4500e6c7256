import { leaseRule } from "../../lease/rule.js";
import { formatDuration } from "../../util/duration.js";
import type { Facts } from "../gather/facts.js";
import { activityRule, quietWords } from "./activity-rule.js";
import type { Effect } from "./effects.js";
import {
  heartbeatAge,
  isHoldersBeat,
  ms,
  pauseEndedBefore,
  pauseGraceEnd,
  startAge,
} from "./gaps.js";
import { heldStart } from "./held-start.js";
import { startOfHolder } from "./holder-start.js";
import { withResumeLine } from "./resume-rule.js";
import {
  type DecidePolicy,
  type Decision,
  isNeeds,
  type Matched,
  type NeedsFacts,
  needs,
  type RuleContext,
  ruleContext,
  startFor,
  stopLiveHolder,
} from "./rule-context.js";

export type { Effect } from "./effects.js";
export { gapCredit, gapsToRecord, heartbeatAge, isHoldersBeat, isStale } from "./gaps.js";
export {
  DECISIONS,
  type DecidePolicy,
  type Decision,
  type DecisionKind,
  isNeeds,
  type NeedsFacts,
} from "./rule-context.js";

const fmt = formatDuration;

function gapNote(credit: number, pauseCredit = 0): string {
  const gap = credit - pauseCredit;
  const notes = [
    gap > 0 ? `a ${fmt(gap)} gap in the watchdog's runs` : "",
    pauseCredit > 0 ? `${fmt(pauseCredit)} inside a usage pause` : "",
  ].filter(Boolean);
  return notes.length > 0 ? ` (${notes.join(" and ")} is not counted)` : "";
}

/** A wall clock stepped back since the stamp: its size counts (monotonic time says so). */
function stepNote(back: number): string {
  return back > 0 ? ` (the clock was stepped back ${fmt(back)} since: counted)` : "";
}

/**
 * Rules 0–13 of DESIGN §6, first match wins; then the crash-loop guard; then the recording of a
 * refusal gather found. Pure: no I/O, no clock.
 */
export function decide(facts: Facts, policy: DecidePolicy): Decision | NeedsFacts {
  const matched = matchRule(facts, policy);
  if (isNeeds(matched)) return matched;
  const { loop_prefix: _, ...d } = guardCrashLoop(matched, facts, policy);
  const resumed = withResumeLine(d, facts, policy.resumeLine);
  if (isNeeds(resumed)) return resumed;
  return withRefusalRecord(resumed, facts);
}

/**
 * The crash-loop guard (DESIGN §6), one rule applied after the one that matched: an unplanned
 * start when too many came recently is not made. The start and the claim break are dropped (a
 * dead holder's claim is left for the next start to break), the stops are kept, and the
 * program stands down.
 */
function guardCrashLoop(d: Matched, facts: Facts, policy: DecidePolicy): Matched {
  const start = d.effects.find((e) => e.kind === "start");
  if (!start || start.planned || d.loop_prefix === undefined) return d;
  const now = ms(facts.now);
  const recent = facts.history.unplanned_starts.filter(
    (at) => now - ms(at) <= policy.crashLoopWithin,
  );
  if (recent.length < policy.crashLoopStarts) return d;
  const loop = `crash loop: ${recent.length} unplanned start${recent.length === 1 ? "" : "s"} within ${fmt(policy.crashLoopWithin)} (the last ${fmt(now - ms(recent[recent.length - 1]))} ago); another would fail the same way`;
  // Where a command-launched manager's output went: what a person reads first after a loop.
  const logHint =
    facts.history.last_start?.launcher === "command"
      ? "; the managers' output is in .sheepdog/manager.log"
      : "";
  const reason = `${d.loop_prefix}${loop}`;
  const { heartbeat_age_ms, gap_credit_ms } = d;
  return {
    decision: "stand_down",
    rule: d.rule,
    reason,
    effects: [
      ...d.effects.filter((e) => e.kind !== "start" && e.kind !== "break_claim"),
      { kind: "stand_down", reason: `${reason}${logHint}` },
    ],
    ...(heartbeat_age_ms !== undefined ? { heartbeat_age_ms } : {}),
    ...(gap_credit_ms !== undefined ? { gap_credit_ms } : {}),
  };
}

/**
 * A refusal gather judged in memory is recorded for the seat first (gather never writes); so
 * are the usage readings a manager's transcript carries (Codex's, DESIGN §19).
 */
function withRefusalRecord(d: Decision, facts: Facts): Decision {
  const r = facts.seat.refusal;
  const u = facts.seat.readings;
  const records: Effect[] = [];
  if (u) records.push({ kind: "record_readings", transcript: u.transcript, readings: u.readings });
  if (r?.recorded === false)
    records.push({
      kind: "record_refusal",
      text: r.text,
      at: r.at,
      resets_at: r.resets_at,
      named_reset: r.named_reset,
      transcript: r.transcript,
      ...(r.window ? { window: r.window } : {}),
      ...(r.exact ? { exact: r.exact } : {}),
      ...(r.limit_type ? { limit_type: r.limit_type } : {}),
      ...(r.needs_person ? { needs_person: r.needs_person } : {}),
      ...(r.session ? { session: r.session } : {}),
    });
  return records.length > 0 ? { ...d, effects: [...records, ...d.effects] } : d;
}

/** The rows of DESIGN §6 in order; the first that matches decides. */
function matchRule(facts: Facts, policy: DecidePolicy): Matched | NeedsFacts {
  // 0. Another tick is working on it.
  const locked = lockedRule(facts);
  if (locked) return locked;
  // 6, for a lease (DESIGN §15): before the rest, as a second manager must stop whatever else holds.
  const leased = leaseRule(facts, policy);
  if (leased) return leased;
  const settled = settledRule(facts);
  if (settled) return settled;
  // Rule 5 and below judge the seat with the manager's transcript.
  if (facts.unread?.includes("seat_refusal")) return needs("seat_refusal");
  const ctx = ruleContext(facts, policy);
  return seatRule(ctx) ?? aliveRule(ctx) ?? deadRule(ctx) ?? noClaimRule(ctx);
}

/** Rule 0: another tick of this program is running. */
function lockedRule(facts: Facts): Matched | null {
  if (!facts.tick_lock.held) return null;
  const who = facts.tick_lock.pid !== null ? ` (pid ${facts.tick_lock.pid})` : "";
  return {
    decision: "locked",
    rule: 0,
    reason: `another tick${who} is working on it`,
    effects: [],
  };
}

/** Rules 1–3: finished, stood down, paused. Nothing to do but say so. */
function settledRule(facts: Facts): Matched | null {
  const now = ms(facts.now);
  // 1. Finished and not reopened.
  if (facts.finished) {
    const note = facts.finished.note ? `: ${facts.finished.note}` : "";
    return {
      decision: "finished",
      rule: 1,
      reason: `finished ${fmt(now - ms(facts.finished.at))} ago${note}; sheepdog reopen starts it again`,
      effects: [],
    };
  }
  // 2. Stood down and not cleared.
  if (facts.stood_down) {
    return {
      decision: "hold",
      rule: 2,
      reason: `stood down ${fmt(now - ms(facts.stood_down.at))} ago: ${facts.stood_down.reason}; sheepdog resume clears it`,
      effects: [],
    };
  }
  // 3. Paused, and the pause still runs.
  if (facts.paused && now < ms(facts.paused.until)) {
    const until = ms(facts.paused.until);
    return {
      decision: "wait_pause",
      rule: 3,
      reason: `paused until ${facts.paused.until} (${fmt(until - now)} from now): ${facts.paused.reason}`,
      effects: [],
    };
  }
  return null;
}

/** 5. Seat limited: pause until its reset. */
function seatRule(ctx: RuleContext): Matched | null {
  const { facts, policy, now } = ctx;
  if (!facts.seat.limited) return null;
  const until = facts.seat.until ?? new Date(now + policy.pauseFallback).toISOString();
  const r = facts.seat.refusal;
  const unnamed = r?.untrusted_reset
    ? ` whose reset (${r.untrusted_reset}) does not fit its window and is not trusted, so it is re-checked after usage.pause_fallback (${fmt(policy.pauseFallback)})`
    : ` naming no reset, so it is re-checked after usage.pause_fallback (${fmt(policy.pauseFallback)})`;
  const person =
    r?.needs_person && !r.untrusted_reset
      ? `; a person must act: ${policy.agentLabel ?? "Claude Code"} said "${r.text}"`
      : "";
  const evidence = r
    ? `; the manager's transcript ends in a usage-limit refusal${r.named_reset ? "" : unnamed}${person}`
    : "";
  // The seat's reason names each window's reset already ("… at 100% until 14:00Z"): once is enough.
  const untilText = /\buntil\b/.test(facts.seat.reason) ? "" : ` until ${until}`;
  const reason = `seat ${facts.seat.seat} is limited (${facts.seat.reason}${evidence})${untilText}`;
  const pause: Effect = { kind: "pause", until, reason, window: facts.seat.window };
  if (person && r?.needs_person) pause.needs_person = { advice: r.needs_person, text: r.text };
  return {
    decision: "pause",
    rule: 5,
    reason: `${reason}; nothing starts before then`,
    effects: [...ctx.pre, pause],
  };
}

/** 6–9. A claim from another machine, or a live holder: fresh, merging, or stuck. */
function aliveRule(ctx: RuleContext): Matched | NeedsFacts | null {
  const { facts, policy } = ctx;
  const claim = facts.claim;
  // 6. Claimed on another machine: never judged here.
  if (claim.state === "foreign") {
    return {
      decision: "foreign",
      rule: 6,
      reason: `claimed by pid ${claim.pid} on ${claim.hostname} (another machine): not judged here`,
      effects: [...ctx.pre],
    };
  }
  if (claim.state !== "alive") return null;
  const hb = heartbeatAge(facts, policy) ?? {
    age: 0,
    credit: 0,
    pauseCredit: 0,
    saved: false,
    steppedBack: 0,
  };
  const credited = gapNote(hb.credit, hb.pauseCredit) + stepNote(hb.steppedBack);
  const ages = { heartbeat_age_ms: hb.age, gap_credit_ms: hb.credit };
  // 9, at the limit: a holder still at the usage-limit dialog claim_grace after the pause ended.
  const atLimit = atLimitRule(ctx, claim, ages);
  if (atLimit) return atLimit;
  const what = hb.saved ? "last save" : "claimed without a save";
  // 7. Alive and fresh; 9a–9c when it has been quiet for quiet_after (DESIGN §14).
  if (hb.age < policy.staleAfter) {
    let quiet = "";
    if (hb.age >= policy.quietAfter) {
      if (facts.unread?.includes("activity")) return needs("activity");
      const acted = activityRule(ctx, claim, ages);
      if (acted) return acted;
      quiet = quietWords(ctx, claim);
    }
    const ls = facts.history.last_start;
    const unit = ls?.unit && ls.pid === claim.pid ? ` in ${ls.unit}` : "";
    return {
      decision: "ok",
      rule: 7,
      reason: `pid ${claim.pid}${unit} alive, ${what} ${fmt(hb.age)} ago (stale after ${fmt(policy.staleAfter)})${credited}${quiet}`,
      effects: [...ctx.pre],
      ...ages,
    };
  }
  let stale = hb.saved
    ? `no save for ${fmt(hb.age)} (stale after ${fmt(policy.staleAfter)})`
    : `no save since it claimed ${fmt(hb.age)} ago (stale after ${fmt(policy.staleAfter)})`;
  // 7, after a pause: a live holder has claim_grace from the pause's end to go on by itself.
  const grace = pauseGraceEnd(facts, policy);
  if (grace)
    return {
      decision: "ok",
      rule: 7,
      reason: `pid ${claim.pid} alive, ${stale}${credited}, but the usage pause ended at ${grace.ended}: it has until ${new Date(grace.graceEnds).toISOString()} (claim_grace ${fmt(policy.claimGrace)}) to go on by itself`,
      effects: [...ctx.pre],
      ...ages,
    };
  // 8. A merge is in flight: leave it alone.
  if (facts.unread?.includes("merge_lock")) return needs("merge_lock");
  const merging = mergeRule(ctx, claim.pid, stale);
  if (merging) return { ...merging, ...ages };
  const lock = facts.merge_lock;
  if (lock && !lock.held && lock.error) stale += ` (merge lock unreadable: ${lock.error})`;
  // 9. Alive but stuck: keep evidence, stop it, break its claim, start anew.
  // A manager told at a pause to save and stop that did not: its stop is expected, not paged.
  const note = ctx.unpause
    ? {
        reason: `stopped for ${facts.paused?.window ? "the usage pause" : "the pause"}; pid ${claim.pid}: ${stale}${credited}`,
        planned: true as const,
      }
    : undefined;
  return {
    decision: "restart_stuck",
    rule: 9,
    reason: `pid ${claim.pid}: ${stale}${credited}`,
    effects: [
      ...ctx.pre,
      ...stopLiveHolder(facts, claim, note),
      startFor(ctx, `the previous manager (pid ${claim.pid}) was stuck: ${stale}`),
    ],
    loop_prefix: `pid ${claim.pid} was stuck: ${stale}; stopped, and `,
    ...ages,
  };
}

/**
 * 9, `at_limit` (DESIGN §14): a holder that held the claim through a usage pause, has not saved
 * since it ended, and `claim_grace` later still shows Claude Code's usage-limit dialog (drawn
 * for a reset days away; it never goes on by itself from there), or a Codex holder still at its
 * prompt (the resume line did not set it going), is stopped by exact pid and replaced. The stop is expected, not an incident; the start after a pause is planned.
 */
function atLimitRule(
  ctx: RuleContext,
  claim: Extract<Facts["claim"], { pid: number }>,
  ages: { heartbeat_age_ms: number; gap_credit_ms: number },
): Matched | NeedsFacts | null {
  const { facts, policy } = ctx;
  const over = pauseEndedBefore(facts, policy);
  if (!over || ms(claim.claimed_at) >= over.ended) return null;
  const hb = facts.heartbeat;
  if (hb && isHoldersBeat(hb, claim) && ms(hb.at) >= over.ended) return null;
  if (facts.unread?.includes("activity")) return needs("activity");
  const a = facts.activity;
  if (a?.verdict !== "at_limit") return null;
  const ended = new Date(over.ended).toISOString();
  // Claude Code sits at its limit dialog; an agent that needs a resume line (Codex) at its prompt.
  const where = policy.resumeLine
    ? "its prompt after the usage limit"
    : `${policy.agentLabel ?? "Claude Code"}'s usage-limit dialog`;
  const why = `pid ${claim.pid} is still at ${where} ${fmt(ctx.now - over.ended)} after the pause ended at ${ended} (claim_grace ${fmt(policy.claimGrace)}), with no save since: it will not go on by itself (${a.evidence.join("; ")})`;
  const { pid } = claim;
  return {
    decision: "restart_stuck",
    rule: 9,
    reason: why,
    effects: [
      ...ctx.pre,
      ...stopLiveHolder(facts, claim, {
        reason: `stopped at ${where} after the pause; ${why}`,
        planned: true,
      }),
      startFor(ctx, `the previous manager (pid ${pid}) sat at ${where} after the pause`),
    ],
    loop_prefix: `pid ${pid} sat at ${where}; stopped, and `,
    ...ages,
  };
}

/**
 * 8. A live holder past stale_after while the merge lock is held (by a live holder here, or from
 * another machine) and younger than merge_max. A merge older than that is itself stuck, so a
 * stale manager holding it, its own merge included, goes on to rule 9 (DESIGN §6 row 8).
 */
function mergeRule(ctx: RuleContext, pid: number, stale: string): Matched | null {
  const { facts, policy } = ctx;
  const lock = facts.merge_lock;
  if (!lock?.held) return null;
  const live = lock.liveness === "alive";
  if (!live && lock.liveness !== "foreign") return null;
  // an unknown age is judged young: the lock names no time, and a merge is worth a tick's wait
  if (lock.age_ms !== null && lock.age_ms >= policy.mergeMax) return null;
  const item = lock.holder?.item ? ` for ${lock.holder.item}` : "";
  const who = lock.holder ? `pid ${lock.holder.pid}` : "a holder";
  return {
    decision: "merge_in_flight",
    rule: 8,
    reason: `pid ${pid}: ${stale}, but the merge lock is held by ${who}${item}${live ? " (alive)" : ` on another machine, ${fmt(lock.age_ms ?? 0)} old`}: left alone`,
    effects: [...ctx.pre],
  };
}

/** 10. Dead holder, pid reused, or holder.json unreadable: break the claim and start. */
function deadRule(ctx: RuleContext): Matched | null {
  const claim = ctx.facts.claim;
  if (claim.state === "none") return null;
  const handedOver = cutShortHandOver(ctx);
  if (handedOver) return handedOver;
  const what =
    claim.state === "unreadable"
      ? `the claim's holder is unreadable (${claim.problem})`
      : claim.state === "reused"
        ? `holder pid ${claim.pid} is gone (the pid now belongs to another process)`
        : `holder pid ${claim.pid} is dead`;
  return {
    decision: "restart_dead",
    rule: 10,
    reason: what,
    effects: [
      ...ctx.pre,
      { kind: "break_claim" },
      startFor(ctx, `the previous manager stopped: ${what}`),
    ],
    loop_prefix: `${what}; `,
  };
}

/**
 * 10 → 11. A dead holder that handed over before it died: its hand-over was cut short before its
 * release (killed between the two). That is a hand-over, not a crash: the claim is broken and
 * rule 11 goes on (a planned start, or the no-progress stand-down), never counted as a crash.
 */
function cutShortHandOver(ctx: RuleContext): Matched | null {
  const claim = ctx.facts.claim;
  const hand = ctx.facts.history.hand_over_since_last_start;
  if (claim.state !== "dead" || !hand || hand.pid !== claim.pid) return null;
  if (hand.start_time !== null && hand.start_time !== claim.start_time) return null;
  const after = handOverRule(ctx);
  if (!after) return null;
  const why = `holder pid ${claim.pid} handed over, then died before it released its claim`;
  return {
    ...after,
    reason: `${after.reason} (${why})`,
    effects: [...ctx.pre, { kind: "break_claim" }, ...after.effects.slice(ctx.pre.length)],
  };
}

/** 11–13. No claim: after a hand-over, while a start is on its way, or nothing at all. */
function noClaimRule(ctx: RuleContext): Matched | NeedsFacts {
  return handOverRule(ctx) ?? startingRule(ctx) ?? startRule(ctx);
}

/** 11. No claim, and a hand-over after the last start: a planned start, or no progress. */
function handOverRule(ctx: RuleContext): Matched | null {
  const { facts, policy } = ctx;
  const hand = facts.history.hand_over_since_last_start;
  if (!hand) return null;
  // The manager that handed over, if it is still running, is stopped before anything starts.
  const start = facts.history.last_start;
  const stop: Effect[] =
    hand.pid !== null && hand.start_time !== null
      ? [
          {
            kind: "stop",
            who: "handed_over",
            pid: hand.pid,
            start_time: hand.start_time,
            start: startOfHolder(start, hand),
          },
        ]
      : [];
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
    return {
      decision: "stand_down",
      rule: 11,
      reason,
      effects: [...ctx.pre, ...stop, { kind: "stand_down", reason }],
    };
  }
  const tokens = hand.context_tokens !== null ? ` at ${hand.context_tokens} tokens` : "";
  const note = hand.note ? `: ${hand.note}` : "";
  const reason = `the previous manager handed over${tokens}${note}`;
  return {
    decision: "start_after_hand_over",
    rule: 11,
    reason,
    effects: [
      ...ctx.pre,
      ...stop,
      { kind: "start", reason: ctx.unpause ? `${ctx.unpause}; ${reason}` : reason, planned: true },
    ],
  };
}

/** 12. A start is on its way: wait for it to claim; one held at a dialog is paged, once. */
function startingRule(ctx: RuleContext): Matched | NeedsFacts | null {
  const { facts, policy, now } = ctx;
  const lastStart = facts.history.last_start;
  if (!lastStart || facts.history.claimed_since_last_start) return null;
  // A start whose process already exited will never claim: not waited for (DESIGN §6); nor one
  // sheepdog stopped.
  if (facts.last_start_process === "dead" || lastStart.stopped) return null;
  const { age: since, credit, steppedBack } = startAge(facts, policy, lastStart);
  if (since >= policy.claimGrace) return null;
  if (facts.unread?.includes("start_held")) return needs("start_held");
  const unit = lastStart.unit ? ` in ${lastStart.unit}` : "";
  const who = lastStart.intent
    ? " (its launch was not journaled: the tick that began it ended mid-launch)"
    : lastStart.pid !== undefined
      ? ` (pid ${lastStart.pid}${unit})`
      : "";
  const grace = `(grace ${fmt(policy.claimGrace)})${gapNote(credit)}${stepNote(steppedBack)}`;
  const waiting = `a manager started ${fmt(since)} ago${who} has not claimed yet`;
  const held = heldStart(facts.start_held, now);
  if (held && !lastStart.held) {
    const reason = `${waiting}: it waits for a person (${held.evidence.join("; ")}); paged once, and replaced when claim_grace ${fmt(policy.claimGrace)} has passed`;
    return {
      decision: "blocked",
      rule: 12,
      reason,
      effects: [
        ...ctx.pre,
        {
          kind: "note",
          type: "blocked",
          pid: lastStart.pid ?? null,
          reason,
          activity: {
            verdict: "blocked",
            evidence: held.evidence,
            ...(held.since ? { since: held.since } : {}),
          },
          start: lastStart,
          waiting_for: held.waiting_for,
          ...(facts.start_held?.screen ? { screen: facts.start_held.screen } : {}),
          ...(facts.start_held?.notification
            ? { notification: facts.start_held.notification }
            : {}),
        },
      ],
    };
  }
  const paged = lastStart.held
    ? `: it waits for a person (${lastStart.held.waiting_for}; paged ${fmt(Math.max(0, now - ms(lastStart.held.at)))} ago)`
    : "";
  return {
    decision: "starting",
    rule: 12,
    reason: `${waiting}${paged} ${grace}`,
    effects: [...ctx.pre],
  };
}

/** 13. Nothing holds the program: stop what an unclaimed start left, and start one. */
function startRule(ctx: RuleContext): Matched {
  const { facts, policy, now, plannedWhy } = ctx;
  const lastStart = facts.history.last_start;
  const unclaimed = lastStart !== null && !facts.history.claimed_since_last_start;
  const exited = unclaimed && facts.last_start_process === "dead";
  const failed = facts.history.last_failed_start;
  let why: string;
  if (failed)
    why = `the last start (${fmt(now - ms(failed.at))} ago, ${failed.launcher}) failed: ${failed.reason}`;
  else if (lastStart === null) why = "the program's first start";
  else if (unclaimed && lastStart.stopped)
    why = `the manager started ${fmt(now - ms(lastStart.at))} ago${lastStart.pid !== undefined ? ` (pid ${lastStart.pid})` : ""} never claimed and was stopped ${fmt(Math.max(0, now - ms(lastStart.stopped.at)))} ago`;
  else if (exited)
    why = `the manager started ${fmt(now - ms(lastStart.at))} ago (pid ${lastStart.pid}) exited before it claimed`;
  else if (unclaimed && lastStart.intent)
    why = `the start ${fmt(now - ms(lastStart.at))} ago was cut short mid-launch and nothing claimed (grace ${fmt(policy.claimGrace)})`;
  else if (unclaimed) {
    const who = lastStart.pid !== undefined ? ` (pid ${lastStart.pid})` : "";
    why = `the manager started ${fmt(now - ms(lastStart.at))} ago${who} never claimed (grace ${fmt(policy.claimGrace)})`;
  } else why = "no manager holds the claim";
  // What the last start waited for, where a dialog or a hook said: the crash-loop page quotes it.
  if (unclaimed && lastStart?.held)
    why += `; it waited for a person: ${lastStart.held.waiting_for}`;
  const leftover: Effect[] =
    unclaimed && lastStart && !lastStart.cut_short && !lastStart.stopped
      ? [{ kind: "stop", who: "leftover", start: lastStart }]
      : [];
  return {
    decision: "start",
    rule: 13,
    reason: plannedWhy && plannedWhy !== why ? `${why} (planned: ${plannedWhy})` : why,
    effects: [...ctx.pre, ...leftover, startFor(ctx, why)],
    loop_prefix: `${why}; `,
  };
}
