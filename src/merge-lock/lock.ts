import * as z from "zod/mini";
import { sameProcess } from "../claim/claim.js";
import { RefusedError } from "../errors.js";
import { casRef, type RefAt, readRef } from "../git/ref-cas.js";
import { type Liveness, livenessOf, type ProcessIdentity } from "../process/identity.js";
import { formatDuration } from "../util/duration.js";
import { parseJsonWith } from "../util/json-file.js";
import { iso } from "../util/time.js";
import {
  deleteIfAt,
  type LockOptions,
  lockRef,
  type MergeLockConfig,
  type MergeLockHolder,
  makeLockCommit,
  repoOf,
} from "./ref.js";

export type { LockOptions, MergeLockConfig, MergeLockHolder } from "./ref.js";

export type MergeLockState =
  /** `error`: the lock could not be read (repo or remote unreachable); no merge can be in flight there. */
  | { held: false; error?: string }
  | {
      held: true;
      holder: MergeLockHolder | null;
      liveness: Liveness | "unreadable";
      age_ms: number | null;
      /** The lock commit the ref points at. */
      sha?: string;
    };

const holderSchema = z.object({
  pid: z.number().check(z.int(), z.positive()),
  start_time: z.string(),
  machine_id: z.string(),
  item: z.nullable(z.string()),
  at: z.string(),
});

function parseHolder(message: string | null): MergeLockHolder | null {
  return message === null ? null : parseJsonWith(message.trim(), holderSchema);
}

async function stateAt(ref: RefAt, now: number): Promise<MergeLockState> {
  const { sha, message } = await readRef(ref);
  if (sha === null) return { held: false };
  const holder = parseHolder(message);
  if (!holder) return { held: true, holder: null, liveness: "unreadable", age_ms: null, sha };
  const at = Date.parse(holder.at);
  return {
    held: true,
    holder,
    liveness: livenessOf(holder),
    age_ms: Number.isNaN(at) ? null : now - at,
    sha,
  };
}

/**
 * Reads the merge lock ref (on the remote when one is configured). Never changes anything
 * another tool sees. Throws RuntimeFailure when the repository or remote cannot be read.
 */
export async function readMergeLock(
  cfg: MergeLockConfig,
  opts: LockOptions = {},
): Promise<MergeLockState> {
  return stateAt(lockRef(cfg, repoOf(cfg, opts)), opts.now ?? Date.now());
}

export type AcquireOutcome =
  | { ok: true; holder: MergeLockHolder; sha: string; already: boolean }
  | { ok: false; state: MergeLockState };

/**
 * Takes the lock for `me`: an atomic create of the ref. On a remote, a push whose lease says
 * "the ref must not exist"; locally, `update-ref` with an empty old value. Exactly one of
 * several concurrent callers wins; the others get the state they lost to.
 */
export async function acquireMergeLock(
  cfg: MergeLockConfig,
  me: ProcessIdentity,
  item: string | null,
  opts: LockOptions = {},
): Promise<AcquireOutcome> {
  const at = lockRef(cfg, repoOf(cfg, opts));
  const now = opts.now ?? Date.now();
  const holder: MergeLockHolder = { ...me, item, at: iso(now) };
  const sha = await makeLockCommit(at, holder);
  for (let attempt = 0; attempt < 3; attempt++) {
    // An atomic create: "the ref must not exist".
    if (await casRef(at, sha, null)) return { ok: true, holder, sha, already: false };
    const state = await stateAt(at, Date.now());
    if (state.held) {
      if (state.holder && sameProcess(state.holder, me) && state.sha)
        return { ok: true, holder: state.holder, sha: state.sha, already: true };
      return { ok: false, state };
    }
    // Released between our attempt and our look: try again.
  }
  return { ok: false, state: await stateAt(at, Date.now()) };
}

/** How a lock's holder reads in a message: pid, item, age and whether it is alive. */
export function describeMergeLock(state: MergeLockState): string {
  if (!state.held) return "not held";
  if (!state.holder) return `held by an unreadable lock commit ${state.sha?.slice(0, 12) ?? ""}`;
  const h = state.holder;
  const item = h.item ? ` for item ${h.item}` : "";
  const ageMs = state.age_ms;
  const age = ageMs === null ? "" : `, taken ${formatDuration(Math.max(0, ageMs))} ago`;
  const life = {
    alive: "alive",
    dead: "dead",
    reused: "dead: its pid now belongs to another process",
    foreign: "on another machine: not judged here",
    unreadable: "unreadable",
  }[state.liveness];
  return `held by pid ${h.pid}${item}${age} (${life})`;
}

/**
 * Releases the lock. Without `stale`, only its holder may (`me`). With `stale`, anyone may
 * release a lock whose holder is dead on this machine or unreadable; a live holder is refused
 * and a holder on another machine is never judged.
 */
export async function releaseMergeLock(
  cfg: MergeLockConfig,
  who: { me: ProcessIdentity } | { stale: true },
  opts: LockOptions = {},
): Promise<Extract<MergeLockState, { held: true }>> {
  const at = lockRef(cfg, repoOf(cfg, opts));
  const state = await stateAt(at, opts.now ?? Date.now());
  if (!state.held) throw new RefusedError("merge lock: not held; nothing to release");
  const sha = state.sha as string;
  if ("stale" in who) {
    if (state.liveness === "alive")
      throw new RefusedError(
        `merge lock: ${describeMergeLock(state)}; a live holder's lock is never released as stale`,
      );
    if (state.liveness === "foreign")
      throw new RefusedError(
        `merge lock: ${describeMergeLock(state)}; a lock from another machine is never judged here`,
      );
  } else if (!state.holder || !sameProcess(state.holder, who.me)) {
    throw new RefusedError(
      `merge lock: pid ${who.me.pid} is not the holder: ${describeMergeLock(state)}`,
    );
  }
  await deleteIfAt(at, sha);
  return state;
}
