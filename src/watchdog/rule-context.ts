// What decide's rows share (DESIGN §6): the decision's shape, the settings it reads, the
// context below rule 4 and the start effect. Pure, like decide.
import type { Policy } from "../config/load.js";
import type { Effect } from "./effects.js";
import type { FactName, Facts } from "./facts.js";
import { ms } from "./gaps.js";

export const DECISIONS = [
  "locked",
  "finished",
  "hold",
  "wait_pause",
  "pause",
  "foreign",
  "leased_elsewhere",
  "ok",
  "merge_in_flight",
  "restart_stuck",
  "restart_dead",
  "start_after_hand_over",
  "starting",
  "start",
  "stand_down",
  "nudge",
  "restart_idle",
  "restart_wedged",
  "api_retry",
  "blocked",
] as const;
export type DecisionKind = (typeof DECISIONS)[number];

/** The decisions that stop a live holder as an incident: rule 9 and its sooner forms (9a, 9b). */
export const LIVE_RESTARTS: readonly string[] = ["restart_stuck", "restart_idle", "restart_wedged"];

/**
 * The rule settings decide reads (all durations in ms); `resumeLine` only for an agent that
 * needs one; `agentLabel` names the agent in reasons (Claude Code when absent).
 */
export type DecidePolicy = Partial<Pick<Policy, "resumeLine" | "agentLabel">> &
  Pick<
    Policy,
    | "cadence"
    | "staleAfter"
    | "claimGrace"
    | "mergeMax"
    | "quietAfter"
    | "nudgeWait"
    | "crashLoopStarts"
    | "crashLoopWithin"
    | "noProgressHandOvers"
    | "pauseFallback"
  >;

/** What to do, as data: `effects` in the order act() carries them out (DESIGN §1, §6). */
export interface Decision {
  decision: DecisionKind;
  /** For people: why, in words an engineer reading at 7 am understands. */
  reason: string;
  /** The row of DESIGN §6 that matched. */
  rule: number;
  effects: Effect[];
  heartbeat_age_ms?: number;
  /** How much of a sleep or clock gap was not counted against the manager. */
  gap_credit_ms?: number;
}

/** A matched rule, before the crash-loop guard: what its stand-down would say, if it came to that. */
export type Matched = Decision & { loop_prefix?: string };

/**
 * Not an answer: the row reached needs facts gather has not read (they cost a transcript read or
 * a remote). judge() reads them and asks again; the rule order lives only here.
 */
export interface NeedsFacts {
  needs: FactName[];
}

export function isNeeds(d: Decision | NeedsFacts): d is NeedsFacts {
  return "needs" in d;
}

/** A request for facts not read yet (never an answer: judge() reads them and asks again). */
export function needs(fact: FactName): NeedsFacts {
  return { needs: [fact] };
}

/** What the rows below rule 4 share: the unpause it may have journaled, and what is planned. */
export interface RuleContext {
  facts: Facts;
  policy: DecidePolicy;
  now: number;
  /** Effects every later row starts with (rule 4's unpause). */
  pre: Effect[];
  unpause: string | null;
  /** Why the next start is planned (a hand-over, a resume, a pause's end), or null. */
  plannedWhy: string | null;
}

/** Rule 4 (a pause that is over) as a context for the rows below it. */
export function ruleContext(facts: Facts, policy: DecidePolicy): RuleContext {
  let unpause: string | null = null;
  if (facts.paused) {
    // A pause at a usage limit ends when its window resets: the fresh manager is told so.
    const w = facts.paused.window;
    unpause = w
      ? `the usage pause is over: the ${w} window reset at ${facts.paused.until}`
      : `the pause until ${facts.paused.until} is over`;
  }
  return {
    facts,
    policy,
    now: ms(facts.now),
    pre: unpause ? [{ kind: "unpause", reason: unpause }] : [],
    unpause,
    plannedWhy:
      facts.history.planned_next ?? (unpause ? "the first start after the pause ended" : null),
  };
}

/**
 * A start effect; the first start after a pause names the pause's end. A start that replaces a
 * live holder the activity rules stopped (rules 9a, 9b: idle, wedged) is unplanned, whatever
 * came before it: an earlier `unpaused`, `cleared` or `reopened` planned the start after it,
 * not the restart of a manager that worked since (issue 33). Only a pause that ends in this
 * very tick plans it. (Rule 9's stuck manager after a pause keeps the pause's planned start: it
 * never went on after the limit.)
 */
export function startFor(ctx: RuleContext, why: string, replacesLive = false): Effect {
  return {
    kind: "start",
    reason: ctx.unpause ? `${ctx.unpause}; ${why}` : why,
    planned: replacesLive ? ctx.unpause !== null : ctx.plannedWhy !== null,
  };
}
