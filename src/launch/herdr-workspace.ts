// The program's Herdr workspace: reused only when sheepdog made it. Its id is kept in the
// journal (`workspace` on `manager_started` / `manager_start_failed`); a workspace that merely
// carries the program's name as its label (Herdr labels new workspaces after their folder) is
// someone else's.
import { readEvents } from "../journal/journal.js";
import { herdrJson } from "./herdr-cli.js";
import { results } from "./herdr-schema.js";

/** The workspace id the newest herdr start of this program recorded, or null. */
export function recordedWorkspace(stateDir: string): string | null {
  const events = readEvents(stateDir);
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i];
    if (!e || (e.type !== "manager_started" && e.type !== "manager_start_failed")) continue;
    if (e.launcher === "herdr" && typeof e.workspace === "string") return e.workspace;
  }
  return null;
}

/**
 * The recorded workspace when Herdr still has it under our label (ids restart with the
 * server, so an id alone could name another workspace); else a new one.
 */
export async function ensureWorkspace(
  stateDir: string,
  label: string,
  root: string,
  env: NodeJS.ProcessEnv,
): Promise<string> {
  const recorded = recordedWorkspace(stateDir);
  if (recorded) {
    const list = await herdrJson(
      { command: "herdr workspace list", args: ["workspace", "list"], env },
      results.workspaceList,
    );
    const ours = list.workspaces.find((w) => w.workspace_id === recorded && w.label === label);
    if (ours) return ours.workspace_id;
  }
  const made = await herdrJson(
    {
      command: `herdr workspace create --label ${label}`,
      args: ["workspace", "create", "--cwd", root, "--label", label, "--no-focus"],
      env,
    },
    results.workspaceCreated,
  );
  return made.workspace.workspace_id;
}
