import {
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
} from "node:fs";
import { join } from "node:path";
import * as z from "zod/mini";
import { identityOf, livenessOf } from "../process/identity.js";
import { faultPoint } from "../util/fault-point.js";
import { isErrno, writeJsonAtomic } from "../util/fs.js";
import { parseJsonWith } from "../util/json-file.js";
import { sleepSync } from "../util/jsonl.js";
import { iso } from "../util/time.js";

// One mechanism for every lock sheepdog keeps in a state directory (the claim, tick.lock/ and
// the short mutexes beside them). A lock is a directory `name/` holding `holder.json`:
// - it appears whole: holder.json is written in a private `.name.….tmp` directory that is then
//   renamed to `name`. rename(2) onto a non-empty directory fails, so exactly one caller wins,
//   and since sheepdog never makes `name` empty there is no "being made" state: a lock without
//   a readable holder.json (made by hand, by a disk, or by an older sheepdog) is broken at once;
// - it goes whole: renamed aside, then deleted;
// - a short mutex serialises whoever compares-and-removes a claim or a tick lock (a breaker, a
//   releaser), so no one removes a lock that a third process has just put in place.

/** A leftover `.….tmp` (a write or a lock a killed process never finished) older than this is swept. */
export const LEFTOVER_MS = 60 * 60_000;

let placed = 0;

/**
 * Puts a lock directory in place whole, `holder` already inside. Returns false when `name`
 * exists (another holder's, or one to be judged and broken: an empty directory, which rename
 * would silently replace, is never taken over unjudged).
 */
export function placeWhole(parent: string, name: string, holder: unknown, tag: string): boolean {
  const path = join(parent, name);
  if (exists(path)) return false;
  const tmp = join(parent, `.${name}.${tag}.${process.pid}.${Date.now()}.${++placed}.tmp`);
  mkdirSync(tmp, { mode: 0o700 });
  try {
    writeJsonAtomic(join(tmp, "holder.json"), holder);
    faultPoint(`${name}.before-rename`);
    renameSync(tmp, path);
    return true;
  } catch (err) {
    rmSync(tmp, { recursive: true, force: true });
    if (isErrno(err, "ENOTEMPTY") || isErrno(err, "EEXIST")) return false;
    throw err;
  }
}

function exists(path: string): boolean {
  try {
    statSync(path);
    return true;
  } catch (err) {
    if (isErrno(err, "ENOENT")) return false;
    throw err;
  }
}

/** Removes `name` in one step (rename aside, then delete), so no reader sees it half gone. */
export function removeAside(parent: string, name: string): void {
  const aside = join(parent, `.${name}.removed.${process.pid}.${Date.now()}.${++placed}.tmp`);
  try {
    renameSync(join(parent, name), aside);
  } catch (err) {
    if (isErrno(err, "ENOENT")) return;
    throw err;
  }
  faultPoint(`${name}.removed-aside`);
  rmSync(aside, { recursive: true, force: true });
}

/** What a lock directory holds: nothing, or its holder.json's text (null: none readable). */
export type HolderFile =
  | { state: "absent" }
  | { state: "text"; text: string; ino: number }
  | { state: "unreadable"; problem: string; ino: number };

/** Reads `name/holder.json` without changing anything. */
export function readHolderFile(parent: string, name: string): HolderFile {
  const dir = join(parent, name);
  let ino: number;
  try {
    ino = statSync(dir).ino;
  } catch {
    return { state: "absent" };
  }
  try {
    return { state: "text", text: readFileSync(join(dir, "holder.json"), "utf8"), ino };
  } catch (err) {
    if (isErrno(err, "ENOENT")) {
      return exists(dir)
        ? { state: "unreadable", problem: `${name}/holder.json is missing`, ino }
        : { state: "absent" };
    }
    return { state: "unreadable", problem: (err as Error).message, ino };
  }
}

/**
 * Breaks the lock `name` exactly as it was `seen`, with no mutex above it (the mutexes' own
 * breaking). It is renamed to `.name.broken.<inode>.tmp`, a name kept for an hour: a second
 * breaker of the same lock finds that name taken (rename onto a non-empty directory fails)
 * and so never moves the successor's lock instead. What was moved is compared with what was
 * seen, and put back when it is not it. Returns whether `seen` is gone.
 */
export function breakSeen(
  parent: string,
  name: string,
  seen: Exclude<HolderFile, { state: "absent" }>,
): boolean {
  const path = join(parent, name);
  const gone = join(parent, `.${name}.broken.${seen.ino}.tmp`);
  try {
    renameSync(path, gone);
  } catch (err) {
    if (isErrno(err, "ENOENT")) return true;
    // Broken already by another (the name is kept), and `name` is now a successor's.
    if (isErrno(err, "ENOTEMPTY") || isErrno(err, "EEXIST")) return false;
    throw err;
  }
  const moved = readHolderFile(parent, gone.slice(parent.length + 1));
  const same =
    moved.state !== "absent" &&
    moved.ino === seen.ino &&
    (moved.state === "text" ? moved.text : null) === (seen.state === "text" ? seen.text : null);
  if (!same) {
    // Not the lock judged (a successor, where the first breaker's name was already swept).
    try {
      renameSync(gone, path);
    } catch {
      // `name` was taken meanwhile: the moved lock's holder finds it gone when it releases
    }
    return false;
  }
  const now = new Date();
  utimesSync(gone, now, now); // kept an hour from now, whenever the lock was made
  faultPoint(`${name}.broken-aside`);
  return true;
}

/**
 * Removes what killed processes left in `dir` (`.….tmp` writes and lock directories never
 * finished or never deleted, older leftovers named `.….removed.<pid>.<ms>`) once they are older
 * than LEFTOVER_MS. Never fails: a leftover that cannot be removed waits for the next sweep.
 */
export function sweepLeftovers(dir: string, now = Date.now()): number {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return 0;
  }
  let swept = 0;
  for (const name of names) {
    if (!name.startsWith(".") || !(name.endsWith(".tmp") || /\.removed\.\d+\.\d+$/.test(name)))
      continue;
    const path = join(dir, name);
    try {
      if (now - statSync(path).mtimeMs < LEFTOVER_MS) continue;
      rmSync(path, { recursive: true, force: true });
      swept++;
    } catch {
      // gone meanwhile, or not ours to remove
    }
  }
  return swept;
}

/** The holder.json a mutex's maker writes: its identity, and since when it holds it. */
const makerSchema = z.object({
  pid: z.number().check(z.int(), z.positive()),
  start_time: z.string(),
  machine_id: z.string(),
  at: z.optional(z.string()),
});
export type MutexMaker = z.infer<typeof makerSchema>;

/** A lock another process holds, said the one way every caller says it. */
export class LockBusy {
  constructor(
    /** The lock's file name (`claim.break.lock`). */
    readonly lock: string,
    /** Who holds it; null: no live holder (left by a killed process, and not removable now). */
    readonly holder: { pid: number; at?: string } | null,
    readonly opts: { foreign?: boolean; self?: boolean; problem?: string } = {},
  ) {}

  describe(): string {
    const h = this.holder;
    const problem = this.opts.problem ? ` (${this.opts.problem})` : "";
    if (!h) return `${this.lock} was left by a killed process${problem}`;
    const since = h.at ? ` since ${h.at}` : "";
    const where = this.opts.foreign ? " on another machine" : "";
    return `${this.lock} is held by pid ${h.pid}${where}${since}${problem}`;
  }
}

function makerOf(file: HolderFile): MutexMaker | null {
  return file.state === "text" ? parseJsonWith(file.text, makerSchema) : null;
}

/**
 * Takes the mutex `path` once: placed now, or a dead maker's (or an unreadable one) broken and
 * replaced at once. A LockBusy while a live process holds it.
 */
function takeMutex(path: string): true | LockBusy {
  const parent = join(path, "..");
  const name = path.slice(parent.length + 1);
  const me = identityOf(process.pid);
  if (!me) throw new Error("cannot read this process's own identity");
  let busy = new LockBusy(name, null, { problem: "it came back each time it was broken" });
  for (let attempt = 0; attempt < 3; attempt++) {
    if (placeWhole(parent, name, { ...me, at: iso(Date.now()) }, "take")) return true;
    const seen = readHolderFile(parent, name);
    if (seen.state === "absent") continue;
    const maker = makerOf(seen);
    const liveness = maker ? livenessOf(maker) : "dead";
    if (maker && (liveness === "alive" || liveness === "foreign"))
      return new LockBusy(name, maker, {
        foreign: liveness === "foreign",
        self: maker.pid === me.pid && maker.start_time === me.start_time,
      });
    try {
      breakSeen(parent, name, seen);
    } catch (err) {
      busy = new LockBusy(name, null, {
        problem: `it cannot be removed: ${(err as Error).message}`,
      });
      break;
    }
  }
  return busy;
}

/**
 * Runs `fn` holding the mutex directory `path`. Waits up to `waitMs` for a live holder (its
 * critical sections are a read and a rename, so a short wait is enough); returns LockBusy,
 * naming that holder, if it never came free.
 */
export function withMutex<T>(
  path: string,
  fn: () => T,
  opts: { waitMs?: number } = {},
): T | LockBusy {
  const waitUntil = Date.now() + (opts.waitMs ?? 0);
  for (;;) {
    const taken = takeMutex(path);
    if (taken === true) break;
    // Held by this very process (a caller inside its own section): waiting cannot free it.
    if (taken.opts.self || Date.now() >= waitUntil) return taken;
    sleepSync(10);
  }
  const name = path.slice(join(path, "..").length + 1);
  try {
    faultPoint(`${name}.held`);
    return fn();
  } finally {
    removeAside(join(path, ".."), name);
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
