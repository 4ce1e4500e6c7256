import type { LauncherKind } from "../config/schema.js";
import type { Launcher } from "./types.js";

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
