import { formatDuration } from "../util/duration.js";
import type { Policy } from "./load.js";

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
