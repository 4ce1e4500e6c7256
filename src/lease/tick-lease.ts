// The tick's turn with the lease (DESIGN §15), before it gathers anything: renew it, create it,
// or take it over by compare-and-swap, and say what it found as facts for decide (the fence and
// `leased_elsewhere` are decide's). Only a tick holding tick.lock writes; a dry run asks the
// remote and writes nothing; `status` reads only this host's lease.json (no git).
import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import type { ProgramContext } from "../config/context.js";
import type { LeaseTimes } from "../config/load.js";
import type { RefAt } from "../git/ref-cas.js";
import { gitTimeoutMs } from "../git/run.js";
import { appendEvent, type JournalEvent } from "../journal/journal.js";
import { machineId } from "../process/identity.js";
import { formatDuration } from "../util/duration.js";
import { monoNow } from "../util/mono.js";
import { iso } from "../util/time.js";
import type { LeaseFacts } from "../watchdog/gather/facts.js";
import {
  holdLease,
  type LastHeld,
  type LeaseHost,
  type LeaseOutcome,
  leaseAge,
  leaseRef,
  planLease,
  readLease,
} from "./lease.js";
import {
  type LocalLease,
  readLocalLease,
  type SeenHolder,
  sinceRenewal,
  writeLocalLease,
} from "./local.js";

function seenHolder(l: SeenHolder): SeenHolder {
  return {
    machine_id: l.machine_id,
    hostname: l.hostname,
    epoch: l.epoch,
    renewed_at: l.renewed_at,
  };
}

function holderFacts(h: SeenHolder | null, now: number): LeaseFacts["holder"] {
  if (!h) return null;
  return { ...h, age_ms: leaseAge({ ...h, ttl: 0 }, now) };
}

/** What every look at the lease starts from: where it is, this host's lease.json, the times. */
interface LeaseSetup {
  at: RefAt & { timeoutMs: number };
  local: LocalLease | null;
  times: LeaseTimes;
  /** How long a renewal holds before this host must fence: ttl − margin. */
  holdMs: number;
  base: Pick<LeaseFacts, "ref" | "since_renewal_ms" | "hold_ms" | "was_held">;
}

function setup(program: ProgramContext, now: number): LeaseSetup | null {
  const cfg = program.config.lease;
  const times = program.policy.lease;
  if (!cfg || !times) return null;
  // Each git call within an eighth of the margin: the step must end well inside it.
  const timeoutMs = Math.min(gitTimeoutMs(), Math.max(2000, Math.floor(times.margin / 8)));
  const at = { ...leaseRef(cfg, program.root, program.name), timeoutMs };
  const local = readLocalLease(program.stateDir);
  const holdMs = times.ttl - times.margin;
  const base = {
    ref: at.ref,
    since_renewal_ms: sinceRenewal(local, now),
    hold_ms: holdMs,
    was_held: !!local?.held,
  };
  return { at, local, times, holdMs, base };
}

export type LeaseRead = { facts: LeaseFacts; events: JournalEvent[] } | null;

/** `status`: the lease as this host's last tick left it (lease.json), aged to now; no git. */
export function localLeaseFacts(program: ProgramContext, now: number): LeaseRead {
  const s = setup(program, now);
  if (!s?.local) return null;
  return { facts: localFacts(s.local, s.base, now), events: [] };
}

/** A dry run: the remote asked what a tick would do; nothing written anywhere. */
export async function readLeaseFacts(program: ProgramContext, now: number): Promise<LeaseRead> {
  const s = setup(program, now);
  if (!s) return null;
  const me = host(s.local?.instance ?? randomBytes(8).toString("hex"));
  const began = Date.now();
  try {
    const seen = await readLease(s.at);
    const plan = planLease(seen, s.times, me, now, ownCommits(s.local));
    const out: LeaseOutcome =
      "write" in plan
        ? { held: true, how: plan.how, lease: plan.lease, sha: "", tree: "", previous: seen.lease }
        : plan;
    return { facts: outcomeFacts(out, afterAsk(s, now, began), now), events: [] };
  } catch (err) {
    return unreachable(s, err, afterAsk(s, now, began), now);
  }
}

/**
 * A real tick's turn: renew the lease, make it or take it over where it may, keep what it found
 * in lease.json, and journal a lease made or taken (returned for the pages hook). A remote that
 * cannot be reached is a fact (`unreachable`), never a failed tick: the fence must still happen.
 */
export async function holdLeaseFacts(program: ProgramContext, now: number): Promise<LeaseRead> {
  const s = setup(program, now);
  if (!s) return null;
  const { at, local, holdMs } = s;
  if (renewedJustNow(program, s, now))
    return {
      facts: {
        ...s.base,
        state: "held",
        epoch: local?.epoch ?? null,
        holder: holderFacts(local?.holder ?? null, now),
      },
      events: [],
    };
  const instance = local?.instance ?? randomBytes(8).toString("hex");
  // The instance is kept before anything is pushed: a tick killed after its push must find its
  // own lease as its own.
  if (!local?.instance) keep(program, { ...localOr(local, at.ref, holdMs), instance });
  const latest = () => localOr(readLocalLease(program.stateDir), at.ref, holdMs);
  const began = Date.now();
  let out: LeaseOutcome;
  try {
    out = await holdLease(at, s.times, host(instance), {
      now,
      last: lastHeld(local, s.times.ttl),
      own: {
        known: ownCommits(local),
        pushing: (sha) => keep(program, { ...latest(), instance, pending: sha }),
      },
    });
  } catch (err) {
    const read = unreachable(s, err, afterAsk(s, now, began), now);
    keep(program, { ...latest(), instance, checked_at: iso(now), error: read.facts.error ?? "" });
    return read;
  }
  const facts = outcomeFacts(out, afterAsk(s, now, began), now);
  const was = { ...latest(), instance };
  if (!out.held) {
    // Not held: save, claim and wait say so at once, whatever happens to the rest of this tick
    // (the fence itself is decide's, from was_held).
    const seen = facts.holder;
    keep(program, {
      ...was,
      held: false,
      epoch: null,
      holder: seen ? seenHolder(seen) : was.holder,
      checked_at: iso(now),
      error: null,
    });
    return { facts, events: [] };
  }
  keep(program, {
    ...was,
    held: true,
    epoch: out.lease.epoch,
    renewed_at: out.lease.renewed_at,
    renewed_mono: monoAt(now),
    holder: seenHolder(out.lease),
    sha: out.sha,
    tree: out.tree,
    pending: null,
    checked_at: iso(now),
    error: null,
  });
  // A renewal of a lease this host did not know it held (a push that landed while its client
  // saw an error, lease.json lost) is journaled as the lease coming back.
  const resumed = out.how === "renewed" && !(local?.held && local.epoch === out.lease.epoch);
  const events =
    out.how !== "renewed" || resumed ? [journalAcquired(program, at.ref, out, now)] : [];
  return { facts, events };
}

/**
 * Renewed within half a cadence (a watch pass woken by a save, a tick run by hand): no other
 * host can have taken it over since, and the pass at the next interval renews it.
 */
function renewedJustNow(program: ProgramContext, s: LeaseSetup, now: number): boolean {
  const { local, at } = s;
  const since = sinceRenewal(local, now);
  return (
    !!local?.held &&
    !local.error &&
    local.epoch !== null &&
    since !== null &&
    since >= 0 &&
    local.ref === at.ref &&
    since < skipWithin(program) &&
    since + program.policy.cadence < s.holdMs
  );
}

/** This machine, as the lease names its holder. */
function host(instance: string): LeaseHost {
  return { machine_id: machineId(), hostname: hostname(), instance };
}

/** This state folder's own lease commits: the last it wrote, and one pushed but never seen land. */
function ownCommits(local: LocalLease | null): string[] {
  return [local?.sha, local?.pending].filter((x): x is string => !!x);
}

/** A slow remote takes time: the fence is judged on the time since the renewal after the ask. */
function afterAsk(s: LeaseSetup, now: number, began: number): LeaseSetup["base"] {
  return { ...s.base, since_renewal_ms: sinceRenewal(s.local, now + (Date.now() - began)) };
}

/** The remote could not be asked: what this host knew before, and why. */
function unreachable(
  s: LeaseSetup,
  err: unknown,
  base: LeaseSetup["base"],
  now: number,
): { facts: LeaseFacts; events: JournalEvent[] } {
  const error = (err as Error).message.split("\n")[0] ?? "the remote failed";
  return {
    facts: {
      ...base,
      state: "unreachable",
      epoch: s.local?.held ? s.local.epoch : null,
      holder: holderFacts(s.local?.holder ?? null, now),
      error,
    },
    events: [],
  };
}

/**
 * How soon after a renewal a pass may skip asking: half of the shorter of its cadence and the
 * program's interval (a timer run with a long --every still renews at each watch interval).
 */
function skipWithin(program: ProgramContext): number {
  return Math.min(program.policy.cadence, program.policy.interval) / 2;
}

/**
 * lease.json written as best it can be: a full disk must not fail the tick before decide can
 * fence (save and wait then judge by the last renewal's age, which only grows).
 */
function keep(program: ProgramContext, lease: LocalLease): void {
  try {
    writeLocalLease(program.stateDir, lease);
  } catch {
    // said by the tick's own writes, which fail the same way
  }
}

/** This host's last renewal as holdLease's fast path takes it, when it holds the lease. */
function lastHeld(local: LocalLease | null, ttl: number): LastHeld | null {
  if (!local?.held || !local.sha || local.epoch === null || !local.holder || !local.renewed_at)
    return null;
  return {
    sha: local.sha,
    tree: local.tree ?? null,
    lease: { ...local.holder, epoch: local.epoch, renewed_at: local.renewed_at, ttl },
  };
}

/** `status`: the lease as this host's last tick left it, aged to now; no git. */
function localFacts(
  local: LocalLease,
  base: Pick<LeaseFacts, "ref" | "since_renewal_ms" | "hold_ms" | "was_held">,
  now: number,
): LeaseFacts {
  const fresh = base.since_renewal_ms !== null && base.since_renewal_ms < base.hold_ms;
  const holder = holderFacts(local.holder, now);
  const common = { ...base, holder, as_of: local.checked_at };
  if (local.held && fresh && !local.error) return { ...common, state: "held", epoch: local.epoch };
  if (local.held)
    return {
      ...common,
      state: "unreachable",
      epoch: local.epoch,
      error:
        local.error ??
        `not renewed for ${formatDuration(base.since_renewal_ms ?? 0)}: is this host's watchdog running?`,
    };
  return { ...common, state: "elsewhere", epoch: null };
}

function localOr(local: LocalLease | null, ref: string, holdMs: number): LocalLease {
  return {
    held: false,
    epoch: null,
    renewed_at: null,
    renewed_mono: null,
    holder: null,
    checked_at: null,
    error: null,
    ...local,
    ref,
    hold_ms: holdMs,
  };
}

function outcomeFacts(
  out: LeaseOutcome,
  base: Pick<LeaseFacts, "ref" | "since_renewal_ms" | "hold_ms" | "was_held">,
  now: number,
): LeaseFacts {
  if (out.held)
    return {
      ...base,
      state: "held",
      how: out.how,
      epoch: out.lease.epoch,
      holder: holderFacts(seenHolder(out.lease), now),
    };
  if (out.why === "unreadable")
    return { ...base, state: "unreadable", epoch: null, holder: null, sha: out.sha };
  const lease = out.why === "elsewhere" ? out.lease : out.seen.lease;
  return {
    ...base,
    state: out.why,
    epoch: null,
    holder: holderFacts(lease ? seenHolder(lease) : null, now),
  };
}

/** The monotonic clock at the caller's `now` (a test's, or status's, may differ from the clock's). */
function monoAt(now: number) {
  const m = monoNow();
  return { ...m, mono_ms: m.mono_ms + (now - Date.now()) };
}

/** `lease_acquired`: this host made the lease or took it over (a failover, paged). */
function journalAcquired(
  program: ProgramContext,
  ref: string,
  out: Extract<LeaseOutcome, { held: true }>,
  now: number,
): JournalEvent {
  const from = out.how === "taken_over" ? out.previous : null;
  const reason =
    out.how === "created"
      ? `this host (${out.lease.hostname}) made the lease, epoch ${out.lease.epoch}`
      : from && from.machine_id !== out.lease.machine_id
        ? `this host (${out.lease.hostname}) took the lease over from ${from.hostname} (epoch ${from.epoch}, last renewed ${from.renewed_at}, not renewed for ttl + margin); now epoch ${out.lease.epoch}`
        : `this host (${out.lease.hostname}) holds the lease again, epoch ${out.lease.epoch}`;
  return appendEvent(
    program.stateDir,
    {
      type: "lease_acquired",
      how: out.how,
      epoch: out.lease.epoch,
      ref,
      ...(from
        ? { from: from.hostname, from_machine_id: from.machine_id, from_epoch: from.epoch }
        : {}),
      reason,
    },
    now,
  );
}
