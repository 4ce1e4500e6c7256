import { formatDuration } from "../util/duration.js";
import type { LeaseTimes, Policy } from "./policy.js";
import type { ProgramConfig } from "./schema.js";

/** What `check` warns about beyond the cadence: a config that loads but cannot start anything. */
export function configWarnings(config: ProgramConfig): string[] {
  const out: string[] = [];
  if (config.manager.launcher === "command" && !config.manager.command)
    out.push(
      "manager.command is not set: the command launcher has nothing to start (every start fails, and the crash-loop guard stands the program down)",
    );
  return out;
}

/**
 * What a valid config may still get wrong (DESIGN §16): `check` prints these, `doctor` shows
 * them as warnings. A stale_after under two cadences is allowed (tests tick by hand), but on a
 * real timer one late tick is enough to stop a healthy manager.
 */
export function policyWarnings(policy: Pick<Policy, "staleAfter">, cadence: number): string[] {
  const out: string[] = [];
  if (policy.staleAfter < 2 * cadence)
    out.push(
      `watchdog.stale_after (${formatDuration(policy.staleAfter)}) is under twice the cadence the watchdog runs at (${formatDuration(cadence)}): one late tick can stop a manager that is working`,
    );
  return out;
}

/**
 * The activity rules (DESIGN §14) only run between quiet_after and stale_after: at or past
 * stale_after rule 9 restarts first, so an idle manager is never nudged, and a nudge's restart
 * needs nudge_wait more before rule 9 comes.
 */
export function activityWarnings(
  policy: Pick<Policy, "staleAfter" | "quietAfter" | "nudgeWait">,
): string[] {
  const { staleAfter, quietAfter, nudgeWait } = policy;
  const d = formatDuration;
  if (quietAfter >= staleAfter)
    return [
      `watchdog.quiet_after (${d(quietAfter)}) is not under watchdog.stale_after (${d(staleAfter)}): the activity rules never run, so an idle or wedged manager waits the whole stale_after and a permission prompt is never paged`,
    ];
  if (quietAfter + nudgeWait >= staleAfter)
    return [
      `watchdog.quiet_after + nudge_wait (${d(quietAfter + nudgeWait)}) is not under watchdog.stale_after (${d(staleAfter)}): an idle manager is nudged but rule 9 restarts it before nudge_wait ends`,
    ];
  return [];
}

/**
 * DESIGN §15: a holder fences itself at ttl − margin without a renewal and another host takes
 * over at ttl + margin, with a tick between: ttl ≥ 2 × margin + the cadence. The ttl that
 * cadence needs when the lease's is shorter, else null.
 */
export function leaseTtlNeeded(lease: LeaseTimes, cadenceMs: number): number | null {
  const least = 2 * lease.margin + cadenceMs;
  return lease.ttl < least ? least : null;
}
