import { readdirSync } from "node:fs";
import { join } from "node:path";
import type { ProgramContext } from "../../config/context.js";
import { sightOf } from "../../config/last-valid.js";
import { appendEvent, type EventOf, type JournalEvent } from "../../journal/journal.js";
import { rotateManagerLog } from "../../launch/manager-log.js";
import type { LeaseRead } from "../../lease/tick-lease.js";
import { sweepLeftovers } from "../../lock/dir-lock.js";
import { hostStateDir } from "../../usage/host-state.js";
import { faultPoint } from "../../util/fault-point.js";
import { writeJsonAtomic } from "../../util/fs.js";
import { iso } from "../../util/time.js";
import type { Facts } from "../gather/facts.js";
import { cadenceMsOf, gapsOf, gather, judge, LAST_TICK, readLastTick } from "../gather/gather.js";
import { type Decision, gapsToRecord } from "../rules/decide.js";
import { describeEffect, effectName } from "../rules/effects.js";
import { cadenceOf, currentGap } from "../rules/gaps.js";
import { journalLockBusy } from "./lock-busy.js";
import { acquireTickLock, readTickLock } from "./tick-lock.js";

/** One program's line of `tick --json`/`status --json`. */
export interface ProgramReport {
  program: string;
  root: string;
  decision: string;
  reason: string;
  facts: Facts | null;
  actions: string[];
  /** The decision's effects by name (`stop:holder`, `start`…), what `actions` carried out or describes. */
  effects?: string[];
}

/** What a decision would do, for `--dry-run` (nothing is done): its effects, described. */
export function wouldDo(d: Decision): string[] {
  return d.effects.map(describeEffect);
}

/** The pages hook, loaded only when it is called: a no-op tick stays light. */
async function pages(
  program: ProgramContext,
  events: JournalEvent[],
  now: number,
  facts: Facts | null,
): Promise<JournalEvent[]> {
  const { afterEvents } = await import("../../page/hooks.js");
  // The manager that runs now, for a recovered incident's page: one this pass started, else
  // the live holder.
  const started = events.findLast(
    (e): e is EventOf<"manager_started"> => e.type === "manager_started" && e.pid !== undefined,
  );
  const holderPid = started?.pid ?? (facts?.claim.state === "alive" ? facts.claim.pid : null);
  return afterEvents(program, events, { now, tick: true, holderPid });
}

/**
 * A person's answers from the phone (DESIGN §8), read from the control topic and carried out
 * under this pass's lock before anything is gathered, so the pass acts on them at once. Loaded
 * only for a program with `page.ntfy.control_topic`.
 */
async function phoneAnswers(program: ProgramContext, now: number): Promise<void> {
  if (!program.config.page?.ntfy?.control_topic) return;
  const { answerPhone } = await import("../../remote/answer.js");
  await answerPhone(program, now);
}

/**
 * A gap in the watchdog's runs (DESIGN §6: more than two cadences since the last tick) is
 * journaled once, by the tick that finds it, so `report` can draw the time no manager was
 * judged on; the excess over one cadence is what counts against no manager.
 */
function journalSleepGap(program: ProgramContext, facts: Facts, now: number): void {
  const cadence = cadenceOf(program.policy, facts);
  const gap = currentGap(facts.last_tick_at, now, cadence);
  if (!gap) return;
  const discounted_ms = now - Date.parse(gap.from) - cadence;
  appendEvent(program.stateDir, { type: "sleep_gap", ...gap, discounted_ms }, now);
}

/**
 * program.json turned invalid (DESIGN §16): the tick goes on with the last valid config, and
 * journals `config_invalid {file, error}` once per broken text, for the pages hook (high).
 */
function journalConfigInvalid(
  program: ProgramContext,
  now: number,
  settleMs: number,
): JournalEvent | null {
  const invalid = program.configInvalid;
  if (!invalid || !sightOf(program.stateDir, invalid, { now, settleMs })) return null;
  return appendEvent(
    program.stateDir,
    { type: "config_invalid", file: invalid.file, error: invalid.error },
    now,
  );
}

/**
 * The lease's facts for a program that has one (DESIGN §15), its code loaded only then: a
 * single-host tick stays as light as before. See lease/tick-lease.ts for what each look does.
 */
async function leaseOf(
  program: ProgramContext,
  look: (m: LeaseLooks) => LeaseRead | Promise<LeaseRead>,
): Promise<LeaseRead> {
  if (!program.config.lease) return null;
  return look(await import("../../lease/tick-lease.js"));
}

type LeaseLooks = typeof import("../../lease/tick-lease.js");

let hostSwept = false;

/**
 * What killed processes left (dir-lock.ts's sweep: temp files, unfinished or undeleted lock
 * directories older than an hour): in this program's state, and once a run in the host's.
 */
function sweepLeftoversOf(program: ProgramContext): void {
  sweepLeftovers(program.stateDir);
  if (hostSwept) return;
  hostSwept = true;
  const host = hostStateDir();
  let subs: string[] = [];
  try {
    subs = readdirSync(host);
  } catch {
    return;
  }
  for (const sub of subs) sweepLeftovers(join(host, sub));
}

/**
 * What a running manager and the watchdog keep writing stays bounded (DESIGN §18): manager.log
 * rotates at its bound even while one chatty manager lives. Never fails a pass.
 */
function boundLogs(program: ProgramContext): void {
  try {
    rotateManagerLog(program.stateDir);
  } catch {
    // the next tick tries again; supervision does not wait on a log
  }
}

/**
 * One pass of gather → decide → act for one program (DESIGN §1). A dry run reads only. A
 * real one holds `tick.lock/` throughout, rewrites last-tick.json, journals every act, and
 * hands this tick's events to the pages hook. A failure journals `tick_failed` and throws.
 * `signal` (the supervisor's, supervisor.ts): once aborted the pass acts no more; its
 * `tick_failed` is the supervisor's to journal.
 */
export async function tickProgram(
  program: ProgramContext,
  opts: {
    dryRun?: boolean;
    now?: number;
    /** watch: a broken program.json is journaled only once read the same this far apart. */
    configSettleMs?: number;
    /** The supervisor's (supervisor.ts): once aborted the pass acts no more. */
    signal?: AbortSignal;
  } = {},
): Promise<ProgramReport> {
  const signal = opts.signal ?? new AbortController().signal;
  const now = opts.now ?? Date.now();
  const report = (facts: Facts, d: Decision, actions: string[]): ProgramReport => ({
    program: program.name,
    root: program.root,
    decision: d.decision,
    reason: d.reason,
    facts,
    actions,
    effects: d.effects.map(effectName),
  });
  if (opts.dryRun) {
    const lease = await leaseOf(program, (m) => m.readLeaseFacts(program, now));
    const facts = await gather(program, now);
    if (lease) facts.lease = lease.facts;
    const d = await judge(program, facts, now);
    return report(facts, d, wouldDo(d));
  }

  const events: JournalEvent[] = [];
  let facts: Facts | null = null;
  try {
    const lock = acquireTickLock(program.stateDir, program.policy.tickDeadline, now);
    if ("held" in lock) {
      // Rule 0: the tick holding the lock writes last-tick.json; this one does nothing.
      facts = await gather(program, now, lock.held);
      return report(facts, await judge(program, facts, now), []);
    }
    if ("busy" in lock) {
      // The breakers' mutex is held by a live process: said, journaled, and nothing done.
      const reason = `${lock.busy.describe()}: this pass did not act; the next one tries again`;
      events.push(journalLockBusy(program.stateDir, lock.busy, reason, now));
      facts = await gather(program, now, { held: false });
      return { ...report(facts, await judge(program, facts, now), []), decision: "locked", reason };
    }
    let d: Decision;
    let actions: string[] = [];
    try {
      faultPoint("tick.locked");
      sweepLeftoversOf(program);
      boundLogs(program);
      await phoneAnswers(program, now);
      const invalid = journalConfigInvalid(program, now, opts.configSettleMs ?? 0);
      if (invalid) events.push(invalid);
      // The lease first: a takeover's push must land before anything may start (DESIGN §15).
      const lease = await leaseOf(program, (m) => m.holdLeaseFacts(program, now));
      signal.throwIfAborted();
      if (lease) events.push(...lease.events);
      facts = await gather(program, now, { held: false });
      signal.throwIfAborted();
      if (lease) facts.lease = lease.facts;
      journalSleepGap(program, facts, now);
      d = await judge(program, facts, now);
      faultPoint("tick.after-decide");
      if (d.effects.length > 0) {
        const { act } = await import("../act/act.js");
        const done = await act(program, facts, d, now, signal);
        events.push(...done.events);
        actions = done.actions;
      }
      faultPoint("tick.before-last-tick");
      signal.throwIfAborted();
      writeLastTick(program, now, d.decision, d.reason, facts);
    } finally {
      lock.release();
    }
    events.push(...(await pages(program, events, now, facts)));
    return report(facts, d, actions);
  } catch (err) {
    // given up (its deadline, or the process is going): its tick_failed is the supervisor's
    if (signal.aborted) throw err;
    return await failTick(program, err, facts, events, now);
  }
}

/**
 * Rewrites last-tick.json: the decision, this tick's cadence, and the gaps carried forward (a
 * failed tick that gathered nothing carries the last file's, so rewriting `at` loses none).
 */
function writeLastTick(
  program: ProgramContext,
  now: number,
  decision: string,
  reason: string,
  facts: Facts | null,
): void {
  const last = facts ? null : readLastTick(program.stateDir);
  const seen = facts ?? {
    last_tick_at: last?.at ?? null,
    gaps: gapsOf(last),
    last_tick_cadence_ms: cadenceMsOf(last),
  };
  const cadence = cadenceOf(program.policy, seen);
  writeJsonAtomic(join(program.stateDir, LAST_TICK), {
    at: iso(now),
    decision,
    reason,
    gaps: gapsToRecord(seen.last_tick_at, seen.gaps, now, program.policy, cadence),
    cadence_ms: program.policy.cadence,
    facts,
  });
}

/** Journals `tick_failed`, rewrites last-tick.json as best it can, pages, and throws TickFailed. */
async function failTick(
  program: ProgramContext,
  err: unknown,
  facts: Facts | null,
  events: JournalEvent[],
  now: number,
): Promise<never> {
  const message = (err as Error)?.message ?? String(err);
  const failed = appendEvent(program.stateDir, { type: "tick_failed", error: message });
  try {
    writeLastTick(program, now, "tick_failed", message, facts);
  } catch {
    // the journal already says it
  }
  await pages(program, [...events, failed], now, facts);
  throw new TickFailed(program, message, facts);
}

export class TickFailed extends Error {
  constructor(
    readonly program: ProgramContext,
    message: string,
    readonly facts: Facts | null,
  ) {
    super(message);
  }
}

/** The state a status read sees: the tick lock read, never taken. */
export async function statusOf(program: ProgramContext, now = Date.now()): Promise<ProgramReport> {
  const facts = await gather(
    program,
    now,
    readTickLock(program.stateDir, program.policy.tickDeadline, now),
  );
  const lease = await leaseOf(program, (m) => m.localLeaseFacts(program, now));
  if (lease) facts.lease = lease.facts;
  const d = await judge(program, facts, now);
  return {
    program: program.name,
    root: program.root,
    decision: d.decision,
    reason: d.reason,
    facts,
    actions: [],
  };
}
