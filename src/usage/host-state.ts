import { chmodSync, mkdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { expandHome, isErrno } from "../util/fs.js";
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

/** A sub-folder of the host state dir, created 0700 (with its parents) when absent. */
export function ensureHostDir(sub: string, env: NodeJS.ProcessEnv = process.env): string {
  const dir = join(hostStateDir(env), sub);
  if (!mkdirs(dir)) return dir;
  // mkdir's mode passes through the umask; a fresh dir is narrowed explicitly.
  chmodSync(dir, 0o700);
  return dir;
}

/**
 * mkdir -p with mode 0700, one level at a time. (Node's recursive mkdir can spin forever
 * where a parent refuses creation with ENOENT, as under /proc.) Returns whether it made `dir`.
 */
function mkdirs(dir: string): boolean {
  try {
    mkdirSync(dir, { mode: 0o700 });
    return true;
  } catch (err) {
    if (isErrno(err, "EEXIST")) return false;
    if (!isErrno(err, "ENOENT")) throw err;
  }
  const parent = dirname(dir);
  if (parent === dir) throw new Error(`cannot create ${dir}`);
  mkdirs(parent);
  mkdirSync(dir, { mode: 0o700 });
  return true;
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
