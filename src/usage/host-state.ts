import { join, resolve } from "node:path";
import { ensureOwnedDir, lstatOrNull, statsProblem, UnsafePath } from "../state/owned.js";
import { expandHome } from "../util/fs.js";
import { fnv1a64, homeDir } from "../util/lazy.js";

/**
 * Host-level state (DESIGN §2): usage readings shared by every program on a seat and the
 * statusline's session map, under `$SHEEPDOG_STATE_DIR` (default `~/.local/state/sheepdog`).
 */
export function hostStateDir(env: NodeJS.ProcessEnv = process.env): string {
  const chosen = env.SHEEPDOG_STATE_DIR || defaultHostStateDir(env);
  return resolve(expandHome(chosen, homeDir(env)));
}

/** Where host-level state lives when `$SHEEPDOG_STATE_DIR` is not set. */
export function defaultHostStateDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(homeDir(env), ".local", "state", "sheepdog");
}

/** The folders sheepdog keeps in the host state dir (doctor checks each). */
export const HOST_SUBDIRS = ["usage", "sessions", "hooks", "watchers", "bin"] as const;

/** What refusing an unsafe host state folder says first. */
export const UNSAFE_HOST = "unsafe host state folder";

/**
 * A folder of the host state dir (`sub`, or "" for the dir itself), checked with the dir
 * above it (DESIGN §18: yours, not writable by others, no link: another user who can write
 * there could forge a 100 % reading, which pauses every program on the seat, or swap a file for
 * a link to ~/.bashrc). With `create`, each is made 0700 when absent. Throws UnsafePath.
 */
export function hostDir(
  sub: string,
  env: NodeJS.ProcessEnv = process.env,
  opts: { create?: boolean } = {},
): string {
  const root = hostStateDir(env);
  const dir = sub ? join(root, sub) : root;
  for (const path of sub ? [root, dir] : [root]) {
    if (opts.create) ensureOwnedDir(path, UNSAFE_HOST, { chmod: "700" });
    else {
      // (one lstat each time, a long-lived watcher too: a folder opened later is seen)
      const st = lstatOrNull(path);
      if (!st) continue; // absent: nothing to read there
      const problem = statsProblem(path, st, "dir", { chmod: "700" });
      if (problem) throw new UnsafePath(UNSAFE_HOST, problem);
    }
  }
  return dir;
}

/** A sub-folder of the host state dir, created 0700 (with its parents) when absent, checked. */
export function ensureHostDir(sub: string, env: NodeJS.ProcessEnv = process.env): string {
  return hostDir(sub, env, { create: true });
}

/** The seat in effect for a Claude Code process: `$CLAUDE_CONFIG_DIR`, else `~/.claude`. */
export function seatFromEnv(env: NodeJS.ProcessEnv = process.env): string {
  const home = homeDir(env);
  return resolve(expandHome(env.CLAUDE_CONFIG_DIR || join(home, ".claude"), home));
}

/** A short, stable file-name key for a seat path. */
export function seatKey(seat: string): string {
  return fnv1a64(resolve(seat));
}
