import { mkdirSync, readFileSync, renameSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import * as z from "zod/mini";
import { identityOf, livenessOf, type ProcessIdentity } from "../process/identity.js";
import { faultPoint } from "../util/fault-point.js";
import { isErrno, writeJsonAtomic } from "../util/fs.js";
import { sleepSync } from "../util/jsonl.js";

// One mechanism for every lock sheepdog keeps in a state directory: a directory appears whole
// (mkdir or rename are atomic), goes whole (renamed aside, then deleted), and a short mutex
// serialises whoever compares-and-removes it (a breaker, a releaser), so no one removes a
// directory that a third process has just put in place.

/** A mutex directory older than this was left by a process that died holding it. */
export const MUTEX_STALE_MS = 30_000;

export const BUSY: unique symbol = Symbol("busy");

function tryMkdir(path: string): boolean {
  try {
    mkdirSync(path, { mode: 0o700 });
    return true;
  } catch (err) {
    if (isErrno(err, "EEXIST")) return false;
    throw err;
  }
}

/** Makes the mutex and records its maker, so one killed while holding it is known to be gone. */
function makeMutex(path: string): boolean {
  if (!tryMkdir(path)) return false;
  const me = identityOf(process.pid);
  try {
    if (me) writeJsonAtomic(join(path, "holder.json"), me);
  } catch (err) {
    rmSync(path, { recursive: true, force: true });
    throw err;
  }
  return true;
}

/**
 * The `holder.json` a mutex's maker writes: its identity (process/identity.ts) whole, or no
 * maker at all (a torn or foreign file, a missing field, a pid that is no pid), which leaves
 * the mutex to the MUTEX_STALE_MS rule. Unknown keys are dropped.
 */
const makerSchema = z.object({
  pid: z.number().check(z.int(), z.positive()),
  start_time: z.string(),
  machine_id: z.string(),
});

function makerOf(path: string): ProcessIdentity | null {
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(join(path, "holder.json"), "utf8"));
  } catch {
    return null;
  }
  const parsed = makerSchema.safeParse(value);
  return parsed.success ? parsed.data : null;
}

/**
 * Takes the mutex once: made now, or an abandoned one replaced; false while another holds it.
 * A mutex whose maker died (killed mid-section) is taken over at once; one whose maker is
 * unknown (killed before it wrote its name) only after MUTEX_STALE_MS.
 */
function takeMutex(path: string, now: number): boolean {
  if (makeMutex(path)) return true;
  try {
    const maker = makerOf(path);
    const gone = maker !== null && ["dead", "reused"].includes(livenessOf(maker));
    if (!gone && now - statSync(path).mtimeMs < MUTEX_STALE_MS) return false;
    rmSync(path, { recursive: true, force: true });
    return makeMutex(path);
  } catch {
    return false;
  }
}

/**
 * Runs `fn` holding the mutex directory `path`. Waits up to `waitMs` for another holder (its
 * critical sections are a read and a rename, so a short wait is enough); returns BUSY if it
 * never came free.
 */
export function withMutex<T>(
  path: string,
  fn: () => T,
  opts: { waitMs?: number; now?: number } = {},
): T | typeof BUSY {
  const waitUntil = Date.now() + (opts.waitMs ?? 0);
  while (!takeMutex(path, opts.now ?? Date.now())) {
    if (Date.now() >= waitUntil) return BUSY;
    sleepSync(10);
  }
  try {
    return fn();
  } finally {
    rmSync(path, { recursive: true, force: true });
  }
}

/** Removes `dir` in one step (rename aside, then delete), so no reader sees it half gone. */
export function removeAside(parent: string, name: string): void {
  const aside = join(parent, `.${name}.removed.${process.pid}.${Date.now()}`);
  try {
    renameSync(join(parent, name), aside);
  } catch (err) {
    if (isErrno(err, "ENOENT")) return;
    throw err;
  }
  faultPoint(`${name}.removed-aside`);
  rmSync(aside, { recursive: true, force: true });
}

/**
 * Puts a lock directory in place whole: `holder.json` is written in a private directory that is
 * then renamed to `name`. rename(2) onto a non-empty directory fails, so exactly one caller
 * wins; onto an empty one (made first with mkdir, to take the name) it succeeds. Returns false
 * when another holder's directory is there.
 */
let placed = 0;
export function placeWhole(parent: string, name: string, holder: unknown, tag: string): boolean {
  const tmp = join(parent, `.${name}.${tag}.${process.pid}.${Date.now()}.${++placed}.tmp`);
  mkdirSync(tmp, { mode: 0o700 });
  try {
    writeJsonAtomic(join(tmp, "holder.json"), holder);
    faultPoint(`${name}.before-rename`);
    renameSync(tmp, join(parent, name));
    return true;
  } catch (err) {
    rmSync(tmp, { recursive: true, force: true });
    if (isErrno(err, "ENOTEMPTY") || isErrno(err, "EEXIST")) return false;
    throw err;
  }
}

/**
 * Release-if-mine: under the mutex a breaker takes, removes `name` only when `mine()` (which
 * re-reads the holder) still says it is this process's. A read-then-remove without the mutex
 * could remove a lock broken and retaken by another process in between.
 */
export function releaseIfMine(
  parent: string,
  name: string,
  mutex: string,
  mine: () => boolean,
  opts: { waitMs?: number } = {},
): boolean {
  const out = withMutex(
    join(parent, mutex),
    () => {
      if (!mine()) return false;
      removeAside(parent, name);
      return true;
    },
    { waitMs: opts.waitMs ?? 5_000 },
  );
  return out === true;
}

/** What a lock directory holds: nothing, a directory without holder.json yet, an error, or text. */
export type HolderFile =
  | { state: "absent" }
  | { state: "no_holder"; mtimeMs: number }
  | { state: "unreadable"; problem: string }
  | { state: "text"; text: string };

/** Reads `name/holder.json` without changing anything. */
export function readHolderFile(parent: string, name: string): HolderFile {
  const dir = join(parent, name);
  try {
    return { state: "text", text: readFileSync(join(dir, "holder.json"), "utf8") };
  } catch (err) {
    if (!isErrno(err, "ENOENT")) return { state: "unreadable", problem: (err as Error).message };
  }
  try {
    return { state: "no_holder", mtimeMs: statSync(dir).mtimeMs };
  } catch {
    return { state: "absent" };
  }
}
