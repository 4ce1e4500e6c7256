// Under systemd, what a tick starts that must outlive it (a `command` manager, a tmux server the
// tick had to start) runs in a transient scope of its own (`systemd-run --user --scope`, DESIGN
// §7): the tick's service then holds only the tick, so systemd logs no left-over processes,
// and stopping or uninstalling the tick's units never touches a manager. Without a reachable
// user manager: the plain detached start.
import { runTool } from "../process/run-tool.js";

const PROBE_MS = 10_000;

export interface Transient {
  /** The scope's name, `sheepdog-<program>-<what>-<stamp>.scope`: journaled and shown. */
  unit: string;
  /** Put before the command: systemd-run creates the scope around itself, then execs it. */
  prefix: string[];
}

/** Whether the tick runs in a systemd unit (systemd sets INVOCATION_ID for each one it runs). */
export function underSystemd(env = process.env): boolean {
  return Boolean(env.INVOCATION_ID) && env.SHEEPDOG_TRANSIENT_UNITS !== "0";
}

let counter = 0;

/**
 * A transient scope for `what` of `program`, or null when the tick is not under systemd or the
 * user manager cannot be reached (probed by running `true` the same way).
 */
export async function transientScope(
  program: string,
  what: "manager" | "tmux",
  env: NodeJS.ProcessEnv = process.env,
): Promise<Transient | null> {
  if (!underSystemd(env)) return null;
  const stamp = `${Date.now().toString(36)}-${process.pid}-${counter++}`;
  const base = ["systemd-run", "--user", "--scope", "--quiet", "--collect"];
  const probe = await runTool(
    base[0] as string,
    [...base.slice(1), `--unit=sheepdog-probe-${stamp}`, "--", "true"],
    { timeoutMs: PROBE_MS, env },
  );
  if (probe.code !== 0) return null;
  const unit = `sheepdog-${program}-${what}-${stamp}.scope`;
  return {
    unit,
    prefix: [...base, `--unit=${unit}`, `--description=sheepdog ${what} of ${program}`, "--"],
  };
}
