// The program's lease on its git remote (DESIGN §15): one ref whose commit message is the lease
// JSON, changed only by compare-and-swap (git/ref-cas.ts). A host creates it ("must not
// exist"), renews its own, and takes over one not renewed for ttl + margin, each with the sha
// it saw; the epoch rises at every takeover. Another machine's fresh lease is left alone.

import { resolve } from "node:path";
import * as z from "zod/mini";
import type { LeaseTimes } from "../config/load.js";
import type { ProgramConfig } from "../config/schema.js";
import { RuntimeFailure } from "../errors.js";
import { casRef, emptyTree, messageCommit, type RefAt, readRef } from "../git/ref-cas.js";
import { parseJsonWith } from "../util/json-file.js";
import { iso } from "../util/time.js";

export interface Lease {
  machine_id: string;
  hostname: string;
  epoch: number;
  renewed_at: string;
  /** The holder's ttl (ms) when it wrote the lease. */
  ttl: number;
  /** The holder's state folder, at random once (lease.json): tells apart cloned machines. */
  instance?: string;
}

const leaseSchema = z.object({
  machine_id: z.string().check(z.minLength(1)),
  hostname: z.string(),
  epoch: z.number().check(z.int(), z.positive()),
  renewed_at: z.string(),
  ttl: z.number().check(z.positive()),
  instance: z.optional(z.string()),
});

export type LeaseConfig = NonNullable<ProgramConfig["lease"]>;

/** The host asking: this machine's id and name (the product passes its own; tests, others). */
export interface LeaseHost {
  machine_id: string;
  hostname: string;
  instance?: string;
}

export interface LeaseSeen {
  /** The lease commit the ref points at, or null: there is no lease. */
  sha: string | null;
  /** Its lease; null when the ref is absent or its commit is not a lease sheepdog can read. */
  lease: Lease | null;
}

export type LeaseOutcome =
  /** This host holds it now: made, renewed, or taken over (epoch + 1). */
  | {
      held: true;
      how: "created" | "renewed" | "taken_over";
      lease: Lease;
      sha: string;
      /** The empty tree's id it committed on (kept for the next renewal). */
      tree: string;
      /** The lease it replaced (a takeover's: whose it was), null when it made the first. */
      previous: Lease | null;
    }
  /** Another machine holds it, renewed within ttl + margin: nothing may start here. */
  | { held: false; why: "elsewhere"; lease: Lease; age_ms: number }
  /** Another host's compare-and-swap landed first: what it wrote. */
  | { held: false; why: "lost_race"; seen: LeaseSeen }
  /**
   * The ref points at a commit that is no lease sheepdog reads (a newer version's, a person's):
   * its holder and age cannot be known, so it is never taken over.
   */
  | { held: false; why: "unreadable"; sha: string };

export function leaseRef(cfg: LeaseConfig, root: string, name: string): RefAt {
  return {
    repo: resolve(root, cfg.repo),
    remote: cfg.remote,
    ref: cfg.ref ?? `refs/sheepdog/lease/${name}`,
    what: "lease",
  };
}

export function parseLease(message: string | null): Lease | null {
  const lease = message === null ? null : parseJsonWith(message.trim(), leaseSchema);
  // A time that does not parse has no age: such a lease is never taken over.
  return lease && !Number.isNaN(Date.parse(lease.renewed_at)) ? lease : null;
}

/** The lease as the remote has it now. Throws RuntimeFailure when it cannot be read. */
export async function readLease(at: RefAt): Promise<LeaseSeen> {
  const { sha, message } = await readRef(at);
  return { sha, lease: sha === null ? null : parseLease(message) };
}

/** A lease's age by the reader's clock (DESIGN §15: now − renewed_at). */
export function leaseAge(lease: Lease, now: number): number {
  const at = Date.parse(lease.renewed_at);
  return Number.isNaN(at) ? Number.POSITIVE_INFINITY : now - at;
}

/** What a host would do about the lease it saw: hold it (at `epoch`), or leave it. */
export type LeasePlan =
  | { write: true; how: "created" | "renewed" | "taken_over"; lease: Lease }
  | Extract<LeaseOutcome, { why: "elsewhere" | "unreadable" }>;

/**
 * Whether a lease is this host's: its machine, and its state folder's instance when the lease
 * names one (machines cloned from one image share a machine id; their instances differ).
 */
export function isMine(lease: Lease | null, me: LeaseHost): boolean {
  if (!lease || lease.machine_id !== me.machine_id) return false;
  return (
    lease.instance === undefined || me.instance === undefined || lease.instance === me.instance
  );
}

/**
 * Pure: what `me` may do with the lease it saw at `now`. Create it when there is none, renew
 * this machine's own, take over one not renewed for ttl + margin (epoch + 1); leave another
 * machine's fresh lease, and any commit that is no lease, alone.
 */
export function planLease(
  was: LeaseSeen,
  times: LeaseTimes,
  me: LeaseHost,
  now: number,
  known?: readonly string[],
): LeasePlan {
  const { ttl, margin } = times;
  if (was.sha !== null && was.lease === null)
    return { held: false, why: "unreadable", sha: was.sha };
  // With `known` (the lease commits this state folder wrote), a lease is this host's only at
  // one of them: a disk image of a running host copies its lease.json, machine id and instance
  // alike, and only the commits it never wrote tell the copy apart.
  const mine =
    isMine(was.lease, me) && (known === undefined || (was.sha !== null && known.includes(was.sha)));
  if (was.lease && !mine) {
    const age = leaseAge(was.lease, now);
    // The holder fences by its own ttl: a host whose ttl is shorter (a config being changed)
    // must still wait for the holder's.
    if (age < Math.max(ttl, was.lease.ttl) + margin)
      return { held: false, why: "elsewhere", lease: was.lease, age_ms: age };
  }
  const epoch = !was.lease ? 1 : mine ? was.lease.epoch : was.lease.epoch + 1;
  const how = !was.sha ? "created" : mine ? "renewed" : "taken_over";
  return { write: true, how, lease: { ...me, epoch, renewed_at: iso(now), ttl } };
}

/** What this host wrote at its last renewal: the fast path renews on it without a read. */
export interface LastHeld {
  sha: string;
  lease: Lease;
  /** The empty tree's id, kept so a renewal makes one commit and one push. */
  tree: string | null;
}

/** This host's own lease commits (planLease's `known`), and a note of each before its push. */
export interface OwnCommits {
  known: readonly string[];
  pushing: (sha: string) => void;
}

/**
 * Holds the lease for `me` if it can. With `last` (its own last renewal) it first renews on that
 * sha without reading the remote (renewOwn); otherwise, or refused, it reads the remote and
 * claims from what is there (claimLease).
 */
export async function holdLease(
  at: RefAt,
  times: LeaseTimes,
  me: LeaseHost,
  opts: { now?: number; last?: LastHeld | null; own?: OwnCommits } = {},
): Promise<LeaseOutcome> {
  const now = opts.now ?? Date.now();
  const renewed = opts.last ? await renewOwn(at, times, me, now, opts.last, opts.own) : null;
  return renewed ?? claimLease(at, times, me, now, await readLease(at), opts);
}

/**
 * The fast path: renews this host's own lease on the sha it last wrote, without a read. The
 * push lands only if nothing changed the ref since, which is exactly when the lease is still
 * this host's; null when it was refused (or `last` is not this host's).
 */
export async function renewOwn(
  at: RefAt,
  times: LeaseTimes,
  me: LeaseHost,
  now: number,
  last: LastHeld,
  own?: OwnCommits,
): Promise<LeaseOutcome | null> {
  if (!isMine(last.lease, me)) return null;
  const lease: Lease = { ...last.lease, ...me, renewed_at: iso(now), ttl: times.ttl };
  const { sha, tree } = await commitOn(at, JSON.stringify(lease), last.tree);
  own?.pushing(sha);
  if (await casRef(at, sha, last.sha))
    return { held: true, how: "renewed", lease, sha, tree, previous: last.lease };
  return null;
}

/**
 * Holds the lease as planLease allows from what was `seen`, by compare-and-swap on its sha.
 * Exactly one of several hosts racing wins each change; the others get what it wrote.
 */
export async function claimLease(
  at: RefAt,
  times: LeaseTimes,
  me: LeaseHost,
  now: number,
  seen: LeaseSeen,
  opts: { last?: LastHeld | null; own?: OwnCommits } = {},
): Promise<LeaseOutcome> {
  let was = seen;
  const known = opts.own ? [...opts.own.known] : undefined;
  for (let attempt = 0; ; attempt++) {
    const plan = planLease(was, times, me, now, known);
    if (!("write" in plan)) return plan;
    const { sha, tree } = await commitOn(at, JSON.stringify(plan.lease), opts.last?.tree ?? null);
    opts.own?.pushing(sha);
    known?.push(sha);
    if (await casRef(at, sha, was.sha))
      return { held: true, how: plan.how, lease: plan.lease, sha, tree, previous: was.lease };
    const after = await readLease(at);
    // Refused, yet the ref has not moved: the remote said no (a hook, a protected ref, a lock
    // it could not take), which is a failing remote, not another host's lease.
    if (after.sha === was.sha)
      throw new RuntimeFailure(
        `${at.what}: ${at.remote} refused the push to ${at.ref} though the ref had not moved (a hook or a protected ref?)`,
      );
    // Beaten by this host's own renewal (a second tick of one state folder): plan again, once.
    if (attempt > 0 || !isMine(after.lease, me))
      return { held: false, why: "lost_race", seen: after };
    was = after;
  }
}

/** The lease commit, on a kept tree id when there is one (a re-cloned repo lacks it: made anew). */
async function commitOn(
  at: RefAt,
  message: string,
  kept: string | null,
): Promise<{ sha: string; tree: string }> {
  if (kept)
    try {
      return { sha: await messageCommit(at, message, kept), tree: kept };
    } catch {
      // the tree is not in this repository (any more): make it
    }
  const tree = await emptyTree(at);
  return { sha: await messageCommit(at, message, tree), tree };
}
