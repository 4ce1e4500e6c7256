// This host's view of the program's lease (DESIGN §15): `.sheepdog/lease.json`, written by the
// tick that renews it and read with no git at all by the manager's commands (`save`, `claim`,
// `wait`), which must stay fast and must still tell the manager when its host's watchdog has
// stopped renewing. A host holds the lease for ttl − margin after its last successful renewal:
// past that, another host may take over within the margin, so it is no longer held here.

import { join } from "node:path";
import * as z from "zod/mini";
import { writeJsonAtomic } from "../util/fs.js";
import { readJsonFile } from "../util/json-file.js";
import { orElse } from "../util/lenient.js";
import { type MonoStamp, monoNow, steppedBack } from "../util/mono.js";

export const LEASE_FILE = "lease.json";

/** The holder as this host last saw it on the remote. */
export interface SeenHolder {
  machine_id: string;
  hostname: string;
  epoch: number;
  renewed_at: string;
}

export interface LocalLease {
  ref: string;
  /** This host holds the lease: its last renewal (or takeover) landed, and no loss since. */
  held: boolean;
  /** This host's epoch while it holds the lease. */
  epoch: number | null;
  /** This host's last successful renewal, by its wall clock and its monotonic clock. */
  renewed_at: string | null;
  renewed_mono: MonoStamp | null;
  /** ttl − margin (ms): how long a renewal keeps the lease held here. */
  hold_ms: number;
  holder: SeenHolder | null;
  /** The lease commit this host last wrote, and the tree it was made on (the fast renewal). */
  sha?: string | null;
  tree?: string | null;
  /** The lease commit being pushed (written before the push): its own, should it land unseen. */
  pending?: string | null;
  /** This state folder's id in the leases it writes, at random once (cloned machines differ). */
  instance?: string | null;
  /** When the remote was last asked, and what failed then (null: it answered). */
  checked_at: string | null;
  error: string | null;
}

const holderSchema = z.object({
  machine_id: z.string(),
  hostname: z.string(),
  epoch: z.number(),
  renewed_at: z.string(),
});
const monoSchema = z.object({ mono_ms: z.number(), boot: z.nullable(z.string()) });
const schema = z.object({
  ref: orElse(z.string(), ""),
  held: orElse(z.boolean(), false),
  epoch: orElse(z.nullable(z.number()), null),
  renewed_at: orElse(z.nullable(z.string()), null),
  renewed_mono: orElse(z.nullable(monoSchema), null),
  hold_ms: orElse(z.number(), 0),
  holder: orElse(z.nullable(holderSchema), null),
  sha: orElse(z.nullable(z.string()), null),
  tree: orElse(z.nullable(z.string()), null),
  instance: orElse(z.nullable(z.string()), null),
  pending: orElse(z.nullable(z.string()), null),
  checked_at: orElse(z.nullable(z.string()), null),
  error: orElse(z.nullable(z.string()), null),
});

export function readLocalLease(stateDir: string): LocalLease | null {
  return readJsonFile(join(stateDir, LEASE_FILE), schema) as LocalLease | null;
}

export function writeLocalLease(stateDir: string, lease: LocalLease): void {
  writeJsonAtomic(join(stateDir, LEASE_FILE), lease);
}

/**
 * How long ago this host last renewed (ms), by whichever clock says longer: a wall clock
 * stepped back must not stretch a lease (monotonic time says so), and one stepped forward only
 * fences sooner. Null: it never renewed.
 */
export function sinceRenewal(
  local: LocalLease | null,
  now: number,
  mono: MonoStamp = monoNow(),
): number | null {
  if (!local?.renewed_at) return null;
  const at = Date.parse(local.renewed_at);
  if (Number.isNaN(at)) return null;
  return now - at + steppedBack(at, local.renewed_mono, now, mono);
}

/** What `save` answers and `claim` records: whether the lease is held here now, and by whom. */
export interface LeaseAnswer {
  held_here: boolean;
  epoch: number | null;
  /** The holder's hostname, as this host last saw it; null when it has seen none. */
  host: string | null;
}

export function leaseAnswer(local: LocalLease | null, now = Date.now()): LeaseAnswer {
  const since = sinceRenewal(local, now);
  const held = !!local?.held && since !== null && since < local.hold_ms;
  return {
    held_here: held,
    epoch: held ? local.epoch : (local?.holder?.epoch ?? null),
    host: local?.holder?.hostname ?? null,
  };
}

/** The lease is no longer held here (a fence): what save and wait read from now on. */
export function loseLocalLease(stateDir: string): void {
  const local = readLocalLease(stateDir);
  if (local?.held) writeLocalLease(stateDir, { ...local, held: false, epoch: null });
}
