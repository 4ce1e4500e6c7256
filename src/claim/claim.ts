import { existsSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import * as z from "zod/mini";
import { appendEvent, type JournalEvent, type NewEvent } from "../journal/journal.js";
import { LockBusy, placeWhole, readHolderFile, removeAside, withMutex } from "../lock/dir-lock.js";
import { type Liveness, livenessOf, type ProcessIdentity } from "../process/identity.js";
import { faultPoint } from "../util/fault-point.js";
import { iso } from "../util/time.js";

export const holderSchema = z.object({
  pid: z.number().check(z.int(), z.positive()),
  start_time: z.string(),
  machine_id: z.string(),
  hostname: z.string(),
  claimed_at: z.string(),
  session: z.optional(z.string()),
  /** The program's lease epoch this host held when it claimed (DESIGN §15). */
  lease_epoch: z.optional(z.number()),
});
export type Holder = z.infer<typeof holderSchema>;

/** What is in `claim/`: nothing, a valid holder, or something that cannot be read. */
export type ClaimState =
  | { held: false }
  | { held: true; holder: Holder; liveness: Liveness }
  | { held: true; holder: null; liveness: "dead"; problem: string };

const CLAIM = "claim";
export const CLAIM_BREAK_LOCK = "claim.break.lock";
/** A breaker holds the mutex for a read and a rename: a release waits this long for it. */
const RELEASE_WAIT_MS = 5_000;
/** A breaker waits this long for another's break or release (a read, a rename, a journal line). */
const BREAK_WAIT_MS = 2_000;

export function readClaim(stateDir: string): ClaimState {
  const file = readHolderFile(stateDir, CLAIM);
  if (file.state === "absent") return { held: false };
  if (file.state === "unreadable")
    return { held: true, holder: null, liveness: "dead", problem: file.problem };
  const text = file.text;
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return {
      held: true,
      holder: null,
      liveness: "dead",
      problem: "claim/holder.json is not valid JSON",
    };
  }
  const parsed = holderSchema.safeParse(raw);
  if (!parsed.success) {
    const field = parsed.error.issues[0]?.path.join(".") || "(top level)";
    return {
      held: true,
      holder: null,
      liveness: "dead",
      problem: `claim/holder.json: field ${field} is invalid`,
    };
  }
  return { held: true, holder: parsed.data, liveness: livenessOf(parsed.data) };
}

export function sameProcess(
  a: { pid: number; start_time: string; machine_id: string },
  b: typeof a,
): boolean {
  return a.pid === b.pid && a.start_time === b.start_time && a.machine_id === b.machine_id;
}

export type AcquireResult =
  | { ok: true; holder: Holder; broke?: ClaimState }
  | { ok: false; state: ClaimState };

/**
 * Takes the claim for `id`. The claim appears whole: holder.json is written in a private
 * directory that is then renamed to `claim/`. rename(2) of a directory onto a non-empty one
 * fails, so exactly one caller wins; and since `claim/` never exists empty, no breaker can
 * mistake a claim being taken for an unreadable one (a mkdir-then-fill scheme had that window).
 */
export function tryAcquire(
  stateDir: string,
  id: ProcessIdentity,
  now = Date.now(),
  leaseEpoch?: number,
): AcquireResult {
  const holder: Holder = {
    ...id,
    hostname: hostname(),
    claimed_at: iso(now),
    ...(leaseEpoch !== undefined ? { lease_epoch: leaseEpoch } : {}),
  };
  // A hand-made empty `claim/` would be silently replaced by rename: treat any `claim/` as taken.
  if (existsSync(join(stateDir, CLAIM))) return { ok: false, state: readClaim(stateDir) };
  if (!placeWhole(stateDir, CLAIM, holder, String(id.pid)))
    return { ok: false, state: readClaim(stateDir) };
  faultPoint("claim.after-rename");
  appendEvent(
    stateDir,
    {
      type: "claimed",
      pid: id.pid,
      start_time: id.start_time,
      hostname: holder.hostname,
      ...(leaseEpoch !== undefined ? { lease_epoch: leaseEpoch } : {}),
    },
    now,
  );
  return { ok: true, holder };
}

function claimMutex(stateDir: string): string {
  return join(stateDir, CLAIM_BREAK_LOCK);
}

/**
 * Removes a claim whose holder is dead, pid-reused or unreadable, under the claim's mutex so two
 * breakers never remove a claim that a third process has just taken. Never a foreign or live one.
 * Returns the state that was broken, null when the claim changed meanwhile, or LockBusy when
 * the mutex stayed held (by a live process) past a short wait.
 */
export function breakStaleClaim(
  stateDir: string,
  seen: ClaimState,
  reason: string,
  now = Date.now(),
  /** The holder was stopped by the tick breaking its claim (not found dead): said so. */
  stopped = false,
): ClaimState | null | LockBusy {
  if (!seen.held || seen.liveness === "alive" || seen.liveness === "foreign") return null;
  faultPoint("claim.break.before-mutex");
  const out = withMutex(
    claimMutex(stateDir),
    () => {
      const current = readClaim(stateDir);
      if (!current.held || current.liveness === "alive" || current.liveness === "foreign")
        return null;
      if (JSON.stringify(current.holder) !== JSON.stringify(seen.holder)) return null;
      removeClaimDir(stateDir);
      faultPoint("claim.break.after-remove");
      appendEvent(
        stateDir,
        {
          type: "claim_broken",
          reason,
          holder_state:
            current.liveness === "dead" && current.holder === null
              ? "unreadable"
              : stopped && current.liveness === "dead"
                ? "stopped"
                : current.liveness,
          ...(current.holder
            ? { pid: current.holder.pid, start_time: current.holder.start_time }
            : {}),
          ...("problem" in current ? { problem: current.problem } : {}),
        },
        now,
      );
      return current;
    },
    { waitMs: BREAK_WAIT_MS },
  );
  return out;
}

export type ReleaseResult =
  | { released: true; was: ClaimState; event: JournalEvent }
  | { released: false; state: ClaimState }
  | { released: false; state: null; busy: LockBusy };

/**
 * Compare-and-remove (issue 11): under the same mutex breaking takes, re-reads the claim and
 * removes it only when `mine` still accepts it, journaling `event` before the mutex goes. A
 * read-then-remove without it could remove a successor's claim taken after a break in between.
 * `state: null` means the mutex never came free (`busy` names its holder). `interleave` lets a
 * test act inside the window.
 */
export function releaseClaimIf(
  stateDir: string,
  mine: (state: ClaimState) => boolean,
  event: (was: ClaimState) => NewEvent & { type: "released" },
  opts: { now?: number; interleave?: () => void } = {},
): ReleaseResult {
  const out = withMutex(
    claimMutex(stateDir),
    (): ReleaseResult => {
      const current = readClaim(stateDir);
      opts.interleave?.();
      if (!mine(current)) return { released: false, state: current };
      // Journaled before the directory goes (DESIGN §18): a process stopped in between (a
      // watcher stopping a handed-over manager) leaves a claim that a tick breaks, never a
      // claim gone with no `released` to explain it.
      faultPoint("claim.release.before-journal");
      const journaled = appendEvent(stateDir, event(current), opts.now ?? Date.now());
      faultPoint("claim.release.after-journal");
      removeClaimDir(stateDir);
      return { released: true, was: current, event: journaled };
    },
    { waitMs: RELEASE_WAIT_MS },
  );
  return out instanceof LockBusy ? { released: false, state: null, busy: out } : out;
}

/** Removes `claim/` in one step (rename aside, then delete), so no reader sees it half gone. */
export function removeClaimDir(stateDir: string): void {
  removeAside(stateDir, CLAIM);
}

/** Age of a claim in ms, for messages. */
export function claimAge(holder: Holder, now = Date.now()): number {
  return now - Date.parse(holder.claimed_at);
}
