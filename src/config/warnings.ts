import { formatDuration } from "../util/duration.js";
import type { Policy } from "./load.js";
import type { ProgramConfig } from "./schema.js";

/** What `check` warns about beyond the cadence: a config that loads but cannot start anything. */
export function configWarnings(config: ProgramConfig): string[] {
  if (config.manager.launcher === "command" && !config.manager.command)
    return [
      "manager.command is not set: the command launcher has nothing to start (every start fails, and the crash-loop guard stands the program down)",
    ];
  return [];
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
