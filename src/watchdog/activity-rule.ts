// Rules 9a–9c (DESIGN §14): what a quiet live holder's activity calls for before stale_after.
// Evidence only ever makes a restart sooner; rule 9 stays the backstop.
import type { ActivityEventType } from "../journal/replay.js";
import { formatDuration } from "../util/duration.js";
import type { Activity } from "./activity.js";
import type { Effect } from "./effects.js";
import type { ClaimFacts, Facts } from "./facts.js";
import { ms } from "./gaps.js";
import { startOfHolder } from "./holder-start.js";
import { type Matched, type RuleContext, startFor } from "./rule-context.js";

const fmt = formatDuration;

type Alive = Extract<ClaimFacts, { pid: number }>;

/** The nudge's one line (DESIGN §14): what happened and what to do, typed into the pane. */
export function nudgeText(idleFor: string): string {
  return `sheepdog: this session has been idle for ${idleFor} with nothing to wake it. Run sheepdog save, go on with the backlog, and keep one sheepdog wait running in the background.`;
}

/** When the holder's current spell began: its last save, or its claim when it has not saved. */
export function spellStart(facts: Facts, claim: Alive): number {
  const hb = facts.heartbeat;
  const claimed = ms(claim.claimed_at);
  return hb && hb.pid === claim.pid ? Math.max(claimed, ms(hb.at)) : claimed;
}

/** The newest event of `type` about this holder in its current spell, or null. */
export function spellEvent(
  facts: Facts,
  claim: Alive,
  type: ActivityEventType,
): { at: string } | null {
  const e = facts.history.activity_events?.[type];
  if (!e || e.pid !== claim.pid || ms(e.at) < spellStart(facts, claim)) return null;
  return e;
}

/** The verdict and its evidence in one line, for reasons. */
export function activityWords(a: Activity): string {
  return `${a.verdict}: ${a.evidence.join("; ")}`;
}

/**
 * A verdict that calls for something (a nudge, a restart, a page, a stand-down), or null: the
 * holder is left alone, and rule 7 says so with the verdict in its reason.
 */
export function activityRule(ctx: RuleContext, claim: Alive, ages: object): Matched | null {
  const { facts, policy, now } = ctx;
  const a = facts.activity;
  if (!a) return null;
  const words = activityWords(a);
  // `since` is journaled with the note: the report draws the spell from it.
  const began = a.since ? { since: a.since } : {};
  const seen = { verdict: a.verdict, evidence: a.evidence, ...began };
  const note = (type: "api_errors" | "blocked" | "restart_idle" | "restart_wedged"): Effect => ({
    kind: "note",
    type,
    pid: claim.pid,
    reason: `pid ${claim.pid} ${words}`,
    activity: seen,
  });
  const { pid, start_time, machine_id } = claim;
  const start = startOfHolder(facts.history.last_start, claim);
  const restart = (
    decision: "restart_idle" | "restart_wedged",
    what: string,
    extra: string,
  ): Matched => ({
    decision,
    rule: 9,
    reason: `pid ${pid} is ${what}: ${a.evidence.join("; ")}${extra}`,
    effects: [
      ...ctx.pre,
      note(decision),
      { kind: "keep_evidence", pid },
      { kind: "stop", who: "holder", pid, start_time, machine_id, start },
      { kind: "break_claim" },
      startFor(
        ctx,
        `the previous manager (pid ${pid}) was ${what}: ${a.evidence[0] ?? a.verdict}`,
        true,
      ),
    ],
    loop_prefix: `pid ${pid} was ${what}; stopped, and `,
    ...ages,
  });

  if (a.verdict === "wedged") return restart("restart_wedged", "wedged", "");

  if (a.verdict === "idle") {
    // Its pane showed a dialog when the nudge came (act journaled `blocked`): a person must
    // answer it; no nudge and no restart before stale_after.
    if (spellEvent(facts, claim, "blocked")) return null;
    const nudged = spellEvent(facts, claim, "nudged");
    const pane = start !== null && start.launcher !== "command" && start.pane !== undefined;
    if (!pane)
      return restart("restart_idle", "idle", " (no pane to nudge: a command-launched manager)");
    if (!nudged) {
      const idleFor = a.since ? fmt(Math.max(0, now - ms(a.since))) : fmt(policy.quietAfter);
      return {
        decision: "nudge",
        rule: 9,
        reason: `pid ${pid} ${words}; one nudge is due (restarted if it is still idle ${fmt(policy.nudgeWait)} after it)`,
        effects: [
          ...ctx.pre,
          {
            kind: "nudge",
            pid,
            start,
            text: nudgeText(idleFor),
            reason: `pid ${pid} ${words}`,
            ...began,
          },
        ],
        ...ages,
      };
    }
    const since = now - ms(nudged.at);
    if (since >= policy.nudgeWait)
      return restart(
        "restart_idle",
        "idle",
        `; nudged ${fmt(since)} ago (nudge_wait ${fmt(policy.nudgeWait)}) with no save since`,
      );
    return null;
  }

  if (a.verdict === "api_retry") {
    if (a.cause === "usage_limit") return null; // rule 5's refusal reading pauses the seat
    if (a.cause === "auth") {
      const reason = `pid ${pid}: ${policy.agentLabel ?? "Claude Code"} cannot reach the API with its credentials (${a.evidence.join("; ")}); a restart would fail the same way`;
      return {
        decision: "stand_down",
        rule: 9,
        reason,
        effects: [...ctx.pre, { kind: "stand_down", reason }],
        ...ages,
      };
    }
    if (spellEvent(facts, claim, "api_errors")) return null;
    return {
      decision: "api_retry",
      rule: 9,
      reason: `pid ${pid} ${words}; left to ${policy.agentLabel ?? "Claude Code"}'s own retries, paged once`,
      effects: [...ctx.pre, note("api_errors")],
      ...ages,
    };
  }

  if (a.verdict === "blocked") {
    if (spellEvent(facts, claim, "blocked")) return null;
    return {
      decision: "blocked",
      rule: 9,
      reason: `pid ${pid} ${words}; paged once, no restart before stale_after (${fmt(policy.staleAfter)})`,
      effects: [...ctx.pre, { ...note("blocked"), start } as Effect],
      ...ages,
    };
  }
  return null;
}

/** Rule 7's words for a quiet holder left alone: the verdict, and what follows when. */
export function quietWords(ctx: RuleContext, claim: Alive): string {
  const a = ctx.facts.activity;
  if (!a) return "";
  // A person pressed Esc (DESIGN §14): say who stopped it and when.
  if (a.verdict === "interrupted")
    return `; interrupted by a person${a.since ? ` at ${a.since}` : ""} (${a.evidence.join("; ")}): no nudge, no restart before stale_after (${fmt(ctx.policy.staleAfter)})`;
  const nudged = a.verdict === "idle" ? spellEvent(ctx.facts, claim, "nudged") : null;
  const held = a.verdict === "idle" ? spellEvent(ctx.facts, claim, "blocked") : null;
  if (held)
    return `; ${activityWords(a)}; its pane showed a dialog when it was due a nudge (paged ${fmt(ctx.now - ms(held.at))} ago): left for a person until stale_after`;
  const after = nudged
    ? `; nudged ${fmt(ctx.now - ms(nudged.at))} ago, restarted if still idle ${fmt(ctx.policy.nudgeWait)} after`
    : "";
  return `; ${activityWords(a)}${after}`;
}
