import type { LauncherKind } from "../config/schema.js";
import type { StartRecord } from "../journal/replay.js";
import type { Launched, Launcher } from "./types.js";

/** The launcher of a kind, loaded only when a tick acts (a no-op tick loads none). */
export async function launcherFor(kind: LauncherKind | string): Promise<Launcher> {
  switch (kind) {
    case "command":
      return (await import("./command.js")).launcher;
    case "tmux":
      return (await import("./tmux.js")).launcher;
    case "herdr":
      return (await import("./herdr.js")).launcher;
    default:
      throw new Error(`unknown launcher ${JSON.stringify(kind)}`);
  }
}

/** What a start launched, as its `manager_started` record has it, for `close` and `screen`. */
export function launchedOf(start: StartRecord): Launched {
  const l: Launched = { launcher: start.launcher as Launched["launcher"] };
  if (start.pid !== undefined) l.pid = start.pid;
  for (const k of ["start_time", "pane", "window", "agent"] as const)
    if (start[k] !== undefined) l[k] = start[k];
  return l;
}

/** Whether a start launched anything a launcher can close (a tmux/herdr pane or window). */
export function hasPane(start: StartRecord): boolean {
  return start.pane !== undefined || start.window !== undefined || start.agent !== undefined;
}
