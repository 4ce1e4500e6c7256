// doctor's look at a program staged on several hosts (DESIGN §15): this host's view of the
// lease as its last tick left it (.sheepdog/lease.json: no git, doctor changes nothing), so a
// standby that cannot reach the remote, or a holder whose renewals stopped, shows before a
// failover is needed. `sheepdog status --fleet` asks the remote itself.
import type { Program } from "../config/load.js";
import { leaseAnswer, readLocalLease, sinceRenewal } from "../lease/local.js";
import { stateDirOf } from "../state/dir.js";
import { formatDuration } from "../util/duration.js";
import { bad, type Check, ok } from "./check.js";

export function leaseCheck(program: Program, now = Date.now()): Check | null {
  if (!program.config.lease) return null;
  const local = readLocalLease(stateDirOf(program.root));
  const fix = `see sheepdog status --fleet, and sheepdog journal --program ${program.root}`;
  if (!local)
    return bad(
      program.name,
      "lease",
      "warn",
      "no tick on this host has asked for the lease yet",
      `run a tick (sheepdog tick --program ${program.root}) or check the timer`,
    );
  const checked = local.checked_at ? Date.parse(local.checked_at) : Number.NaN;
  const asked = Number.isNaN(checked) ? "" : `, asked ${formatDuration(now - checked)} ago`;
  if (local.error)
    return bad(
      program.name,
      "lease",
      local.held ? "fail" : "warn",
      `the lease's remote cannot be reached (${local.error})${asked}${local.held ? `: this host holds the lease, and fences its manager ${formatDuration(Math.max(0, local.hold_ms - (sinceRenewal(local, now) ?? 0)))} after its last renewal unless it reaches it` : ": this host cannot take over if the holder stops"}`,
      fix,
    );
  const answer = leaseAnswer(local, now);
  if (answer.held_here)
    return ok(program.name, "lease", `held here (epoch ${answer.epoch})${asked}`);
  if (local.held)
    return bad(
      program.name,
      "lease",
      "fail",
      `held here, but not renewed for ${formatDuration(sinceRenewal(local, now) ?? 0)}: is the watchdog running? its manager is told to stop`,
      fix,
    );
  return ok(
    program.name,
    "lease",
    `held by ${answer.host ?? "another host"} (epoch ${answer.epoch ?? "?"}): this host stands by${asked}`,
  );
}
