import { faultPoint } from "../util/fault-point.js";
import {
  groupMembers,
  isZombie,
  livenessOf,
  type ProcessIdentity,
  processInfo,
} from "./identity.js";

export interface StopResult {
  pid: number;
  /** `term`: ended after SIGTERM; `kill`: needed SIGKILL; `gone`: already dead or reused. */
  outcome: "term" | "kill" | "gone" | "survived";
  /** Whether the signals went to the process's whole group (it led its own group). */
  group?: boolean;
}

export interface StopOptions {
  /**
   * Signal the process's whole group (its tool shells, MCP servers…), but only when the
   * verified process leads its own group (pgid === pid, as a `command` launch in its own
   * session does). A process that is not a group leader is always stopped alone.
   */
  group?: boolean;
}

/**
 * How a manager started by a launcher of this kind is stopped: the `command` launcher starts
 * each manager in its own session (setsid), so its group is its own: tool shells and MCP
 * servers it started go with it. Others (tmux, herdr, unknown) are stopped by pid alone; their
 * pane is closed separately.
 */
export function stopOptionsFor(launcher: string | undefined | null): StopOptions {
  return { group: launcher === "command" };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function signal(target: number, sig: NodeJS.Signals): boolean {
  try {
    process.kill(target, sig);
    return true;
  } catch {
    return false;
  }
}

/** Whether the verified process leads its own group (its start time re-checked with it). */
function leadsOwnGroup(id: ProcessIdentity): boolean {
  if (livenessOf(id) !== "alive") return false;
  const info = processInfo(id.pid);
  return Boolean(
    info && !isZombie(info) && info.startTime === id.start_time && info.pgid === id.pid,
  );
}

/**
 * Stops exactly one process (or, with `{group: true}`, the group it leads): its start time is
 * re-checked before every signal, so a pid that was reused meanwhile is never touched.
 * SIGTERM, then SIGKILL after `graceMs`. A stopped (SIGSTOP) process is continued after TERM
 * so it can act on it. Never by name.
 *
 * A group is signalled as `-pid` only while the leader was just verified, or while members of
 * the group it led are still there (a group id is not reused while the group has members).
 */
export async function stopProcess(
  id: ProcessIdentity,
  graceMs = 10_000,
  opts: StopOptions = {},
): Promise<StopResult> {
  if (livenessOf(id) !== "alive") return { pid: id.pid, outcome: "gone" };
  const group = opts.group === true && leadsOwnGroup(id);
  const result = (outcome: StopResult["outcome"]): StopResult =>
    group ? { pid: id.pid, outcome, group } : { pid: id.pid, outcome };
  const leaderAlive = () => livenessOf(id) === "alive";
  const groupLeft = () => (group ? groupMembers(id.pid).length > 0 : false);
  const done = () => !leaderAlive() && !groupLeft();

  if (group) {
    signal(-id.pid, "SIGTERM");
    signal(-id.pid, "SIGCONT");
  } else {
    signal(id.pid, "SIGTERM");
    if (leaderAlive()) signal(id.pid, "SIGCONT");
  }
  faultPoint("stop.term-sent");
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline) {
    if (done()) return result("term");
    await sleep(100);
  }
  if (done()) return result("term");
  if (group) {
    // The leader re-verified, or (once it is gone) its group still has members.
    if (leaderAlive() || groupLeft()) signal(-id.pid, "SIGKILL");
  } else if (leaderAlive()) signal(id.pid, "SIGKILL");
  for (let i = 0; i < 50; i++) {
    if (done()) return result("kill");
    await sleep(100);
  }
  return result(leaderAlive() ? "survived" : "kill");
}
