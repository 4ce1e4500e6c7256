// More than one host (DESIGN §15), as a rule: a host that does not hold the program's lease
// starts nothing (`leased_elsewhere`, reported like `foreign`), and one that has lost it fences
// itself: its own live manager stopped by exact pid, evidence kept, `lease_lost` journaled and
// paged. It comes right after rule 0, before finished, stood down and paused: a second manager
// must be stopped whatever else the program's state says. Pure, like decide.
import { formatDuration } from "../util/duration.js";
import type { Facts, LeaseFacts } from "../watchdog/gather/facts.js";
import type { Effect } from "../watchdog/rules/effects.js";
import { type DecidePolicy, type Matched, stopLiveHolder } from "../watchdog/rules/rule-context.js";

const fmt = formatDuration;

/**
 * Whether this host still holds a lease it could not renew just now: its last renewal is younger
 * than ttl − margin, and will still be at the next tick. Past that, another host may take over
 * within the clock margin, so the host fences at the last tick before it, not after.
 */
export function stillHeld(lease: LeaseFacts, cadence: number): boolean {
  if (lease.state !== "unreachable" || !lease.was_held || lease.since_renewal_ms === null)
    return false;
  return lease.since_renewal_ms + cadence < lease.hold_ms;
}

/** Who holds the lease, in words. */
function holderWords(lease: LeaseFacts): string {
  const h = lease.holder;
  if (!h) return "another host";
  return `${h.hostname} (epoch ${h.epoch}, renewed ${fmt(Math.max(0, h.age_ms))} ago)`;
}

/** Why this host does not hold the lease, in words an engineer reading at 7 am understands. */
function whyNotHeld(lease: LeaseFacts): { why: string; lost: string } {
  switch (lease.state) {
    case "unreadable":
      return {
        why: `the lease ref ${lease.ref} points at a commit that is no lease (${lease.sha?.slice(0, 12) ?? "?"}): it is never taken over; delete it (git push <remote> :${lease.ref}) if nothing uses it`,
        lost: "the lease ref holds a commit that is no lease",
      };
    case "unreachable": {
      const since =
        lease.since_renewal_ms === null
          ? "this host has never held it"
          : `this host last renewed it ${fmt(lease.since_renewal_ms)} ago (held for ttl − margin, ${fmt(lease.hold_ms)})`;
      return {
        why: `the lease's remote cannot be reached (${lease.error ?? "no answer"}) and ${since}`,
        lost: `no renewal for ${fmt(lease.since_renewal_ms ?? 0)}: the remote cannot be reached (${lease.error ?? "no answer"})`,
      };
    }
    default:
      return {
        why: `the lease is held by ${holderWords(lease)}`,
        lost: lease.holder
          ? `taken over by ${lease.holder.hostname} (epoch ${lease.holder.epoch})`
          : "another host's compare-and-swap landed first",
      };
  }
}

/** The lease row: null when this host holds the lease (or has no lease), and the rows go on. */
export function leaseRule(facts: Facts, policy: DecidePolicy): Matched | null {
  const lease = facts.lease;
  if (!lease || lease.state === "held" || stillHeld(lease, policy.cadence)) return null;
  const { why, lost } = whyNotHeld(lease);
  const claim = facts.claim;
  const effects: Effect[] = [];
  let stopped = "";
  if (claim.state === "alive") {
    // Its own manager: stopped by exact pid, as rule 9 stops a stuck one.
    effects.push(...stopLiveHolder(facts, claim));
    stopped = `; its manager pid ${claim.pid} is stopped`;
  } else if (
    facts.history.last_start &&
    !facts.history.claimed_since_last_start &&
    !facts.history.last_start.cut_short &&
    // This host's own start on its way (a pane with no pid included) when it loses the lease;
    // on a host that never held it, only a process known alive (else: every tick, a stop).
    (lease.was_held ? facts.last_start_process !== "dead" : facts.last_start_process === "alive")
  ) {
    // A start on its way would claim a program not held here.
    effects.push({ kind: "stop", who: "leftover", start: facts.history.last_start });
    stopped = "; the start on its way is stopped";
  }
  const losing = lease.was_held || effects.length > 0;
  // lease_lost first: lease.json says "not held" before anything is stopped, so a manager that
  // claims meanwhile is refused (claim acquire reads it), and save and wait tell it to stop.
  if (losing)
    effects.unshift({
      kind: "lease_lost",
      reason: lost,
      cause: lease.state,
      ...(lease.holder ? { holder: lease.holder.hostname, epoch: lease.holder.epoch } : {}),
    });
  return {
    decision: "leased_elsewhere",
    rule: 6,
    reason: losing
      ? `this host lost the lease: ${lost}${stopped}; nothing starts here`
      : `${why}: nothing starts here`,
    effects,
  };
}
