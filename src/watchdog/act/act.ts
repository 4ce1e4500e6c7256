import { breakStaleClaim, readClaim } from "../../claim/claim.js";
import type { ProgramContext } from "../../config/context.js";
import { readHeartbeat } from "../../heartbeat/heartbeat.js";
import { appendEvent, type JournalEvent, type NewEvent } from "../../journal/journal.js";
import type { StartRecord } from "../../journal/replay.js";
import { agentScreen } from "../../launch/agent-screen.js";
import { screenTail } from "../../launch/claude-screen.js";
import { hasPane, launchedOf, launcherFor } from "../../launch/index.js";
import { StartFailed } from "../../launch/start-failed.js";
import { fillPlaceholders, type Launched } from "../../launch/types.js";
import { LockBusy } from "../../lock/dir-lock.js";
import { machineId } from "../../process/identity.js";
import { stopOptionsFor, stopProcess } from "../../process/stop.js";
import { faultPoint } from "../../util/fault-point.js";
import { monoNow } from "../../util/mono.js";
import { iso } from "../../util/time.js";
import type { Facts } from "../gather/facts.js";
import { CLAIM_NOT_BROKEN, lockBusyEvent } from "../pass/lock-busy.js";
import type { Decision } from "../rules/decide.js";
import type { Effect, StopEffect } from "../rules/effects.js";
import { LIVE_RESTARTS } from "../rules/rule-context.js";

/** TERM, then KILL after this long (DESIGN §6 rule 9). */
export const STOP_GRACE_MS = 10_000;

export interface ActResult {
  events: JournalEvent[];
  /** What was done, in words for people (`stopped pid 4242`, `started pid 5151`). */
  actions: string[];
}

/** What the effects of one decision share while act runs them. */
interface Run {
  program: ProgramContext;
  facts: Facts;
  decision: Decision;
  now: number;
  events: JournalEvent[];
  actions: string[];
  journal: (event: NewEvent) => JournalEvent;
  /** Where keep_evidence put the holder's evidence, for its stop's journal entry. */
  evidence: string | null;
  /** Why no evidence could be kept (a full disk, a folder it cannot write): said, never fatal. */
  evidenceError: string | null;
  /** False once a claim break found the claim changed: then nothing is started. */
  claimClear: boolean;
  /** Why the claim could not be broken, when its mutex was held: said by the start. */
  busy?: string;
  /** A failure an effect put off so the effects after it still run (the fence's stop). */
  deferred?: unknown;
  /** The pass's: a given-up pass starts no effect, and its start's watch presses no key. */
  signal?: AbortSignal;
}

type Handlers = {
  [K in Effect["kind"]]: (run: Run, e: Extract<Effect, { kind: K }>) => Promise<void>;
};

/**
 * Carries out a decision's effects in their order (DESIGN §6 "what the tick does"), journaling
 * every act. The list is decide's; act adds no step of its own.
 */
export async function act(
  program: ProgramContext,
  facts: Facts,
  decision: Decision,
  now: number,
  /** The pass's (supervisor.ts): aborted, no further effect starts. */
  signal?: AbortSignal,
): Promise<ActResult> {
  const events: JournalEvent[] = [];
  const run: Run = {
    program,
    facts,
    decision,
    now,
    events,
    actions: [],
    journal: (event) => {
      const e = appendEvent(program.stateDir, event);
      events.push(e);
      return e;
    },
    evidence: null,
    evidenceError: null,
    claimClear: true,
    signal,
  };
  for (const effect of decision.effects) {
    signal?.throwIfAborted();
    await (HANDLERS[effect.kind] as (r: Run, e: Effect) => Promise<void>)(run, effect);
  }
  if (run.deferred !== undefined) throw run.deferred;
  return { events: run.events, actions: run.actions };
}

const HANDLERS: Handlers = {
  async note(run, e) {
    let screen: string | null = null;
    if (e.type === "blocked" && e.start && hasPane(e.start)) {
      // The prompt itself, where the launcher can read its pane: what a person must answer.
      const launcher = await launcherFor(e.start.launcher);
      screen = await launcher.screen(run.program, launchedOf(e.start)).catch(() => null);
    }
    // A start held before its claim: which start, what it waits for, and the hook's words.
    const start = e.waiting_for !== undefined && e.start ? e.start : null;
    const kept = screen ? screenTail(screen) : (e.screen ?? null);
    run.journal({
      ...(kept ? { screen: kept } : {}),
      type: e.type,
      pid: e.pid,
      reason: e.reason,
      verdict: e.activity.verdict,
      evidence: e.activity.evidence,
      ...(e.activity.since ? { since: e.activity.since } : {}),
      ...(start ? { launch_began: start.launch_began ?? start.at } : {}),
      ...(e.waiting_for !== undefined ? { waiting_for: e.waiting_for } : {}),
      ...(e.notification ? { notification: e.notification } : {}),
    });
    run.actions.push(`journaled ${e.type}`);
  },
  async nudge(run, e) {
    const typed = await typeLine(run, e.start, e.text);
    if ("dialog" in typed) {
      // The manager waits for a person: that is paged as `blocked`, and no nudge counts.
      const reason = `${e.reason}; but its pane shows a dialog (${typed.dialog}): not nudged, a person must answer it`;
      run.journal({
        screen: screenTail(typed.screen),
        type: "blocked",
        pid: e.pid,
        reason,
        verdict: "blocked",
        evidence: [`its screen shows a dialog: ${typed.dialog}`],
      });
      run.actions.push(
        `not nudged: pid ${e.pid}'s pane shows a dialog (${typed.dialog}); journaled blocked`,
      );
      return;
    }
    const { via, error } = typed;
    // A nudge that could not be typed still counts as this spell's: nudge_wait later, a restart.
    run.journal({
      type: "nudged",
      pid: e.pid,
      reason: e.reason,
      text: e.text,
      ...(e.since ? { since: e.since } : {}),
      ...(via ? { via } : {}),
      ...(error ? { error } : {}),
    });
    run.actions.push(error ? `nudge failed: ${error}` : `nudged pid ${e.pid} (${via})`);
  },
  async resume_line(run, e) {
    const typed = await typeLine(run, e.start, e.text);
    const via = "via" in typed ? typed.via : null;
    const error =
      "dialog" in typed
        ? `its pane shows a dialog (${typed.dialog}): not typed into it`
        : typed.error;
    // Untyped, the holder still has claim_grace to go on, then rule 9 replaces it.
    run.journal({
      type: "resume_typed",
      pid: e.pid,
      reason: e.reason,
      text: e.text,
      ...(via ? { via } : {}),
      ...(error ? { error } : {}),
    });
    run.actions.push(error ? `resume line failed: ${error}` : `typed the resume line (${via})`);
  },
  async lease_lost(run, e) {
    // First in a fence, and never what keeps the stop from happening: a full disk that refuses
    // these writes still lets the manager be stopped (the tick fails after, and says so).
    const { loseLocalLease } = await import("../../lease/local.js");
    try {
      loseLocalLease(run.program.stateDir);
      run.journal({
        type: "lease_lost",
        reason: e.reason,
        cause: e.cause,
        ...(e.holder !== undefined ? { holder: e.holder, epoch: e.epoch } : {}),
      });
    } catch (err) {
      run.deferred ??= err;
    }
    run.actions.push(`lease lost: ${e.reason}`);
  },
  async unpause(run, e) {
    run.journal({ type: "unpaused", reason: e.reason });
    run.actions.push("pause over");
  },
  async pause(run, e) {
    run.journal({
      type: "paused",
      until: e.until,
      reason: e.reason,
      window: e.window,
      // A refusal naming no reset: its page says a person must act (DESIGN §5).
      ...(e.needs_person
        ? { needs_person: e.needs_person.advice, limit_text: e.needs_person.text }
        : {}),
    });
    run.actions.push(`paused until ${e.until}`);
  },
  async record_refusal(run, e) {
    const { recordRefusal } = await import("../gather/refusal.js");
    try {
      recordRefusal(run.program, e, run.now);
    } catch {
      // The host state dir refused the write: this program still pauses, judged in memory.
    }
  },
  async record_readings(run, e) {
    const { recordReadings } = await import("../gather/refusal.js");
    try {
      recordReadings(run.program, e.readings, run.now);
    } catch {
      // The host state dir refused the write: this tick judged with them in memory all the same.
    }
  },
  async keep_evidence(run) {
    const stop = run.decision.effects.find(
      (x): x is Extract<StopEffect, { who: "holder" }> => x.kind === "stop" && x.who === "holder",
    );
    const { keepEvidence } = await import("./evidence.js");
    try {
      run.evidence = await keepEvidence(
        run.program,
        run.facts,
        run.decision,
        stop?.start ?? null,
        run.now,
      );
    } catch (err) {
      // Evidence is best effort; the stop is not: a full disk must not keep a stuck manager.
      run.evidenceError = (err as Error)?.message ?? String(err);
    }
  },
  async stop(run, e) {
    if (e.who === "holder") await stopHolder(run, e);
    else if (e.who === "leftover") await stopLeftover(run, e.start);
    else await stopHandedOver(run, e);
  },
  async break_claim(run) {
    if (!run.claimClear) return; // a stop found the holder well after all: its claim stays
    const seen = readClaim(run.program.stateDir);
    if (!seen.held) return;
    // A holder this tick stopped (stuck, idle, wedged, fenced) is not one found dead.
    const stopped = run.events.some((x) => x.type === "manager_stopped" && x.who === "holder");
    const broken = breakStaleClaim(
      run.program.stateDir,
      seen,
      run.decision.reason,
      Date.now(),
      stopped,
    );
    if (broken instanceof LockBusy) {
      // Not "the claim changed": the claim is as it was, and this pass cannot break it now.
      run.claimClear = false;
      run.busy = `${broken.describe()}, so the claim could not be broken`;
      run.journal(lockBusyEvent(broken, `${run.decision.decision}: not done: ${run.busy}`));
      run.actions.push(`${CLAIM_NOT_BROKEN}${run.busy}`);
    } else if (broken) {
      run.events.push({
        at: new Date().toISOString(),
        type: "claim_broken",
        reason: run.decision.reason,
      });
      run.actions.push("broke the claim");
    } else run.claimClear = !readClaim(run.program.stateDir).held;
  },
  async stand_down(run, e) {
    // What became of the claim's holder, for the report: a holder left alive (an auth stand-down)
    // still runs; a dead one's claim is left for the next start to break.
    const claim = run.facts.claim;
    const stopped = run.events.some((x) => x.type === "manager_stopped" && x.who === "holder");
    const holder =
      claim.state === "none"
        ? {}
        : {
            holder_state: stopped ? "stopped" : claim.state,
            ...("pid" in claim ? { holder_pid: claim.pid } : {}),
          };
    run.journal({ type: "stood_down", reason: e.reason, ...holder });
    run.actions.push("stood down: sheepdog resume clears it");
  },
  async start(run, e) {
    if (!run.claimClear) {
      run.actions.push(
        run.busy
          ? "not started: the next pass tries again"
          : "not started: the claim changed meanwhile",
      );
      return;
    }
    const { program } = run;
    const now2 = readClaim(program.stateDir);
    if (now2.held && now2.liveness === "alive") {
      run.actions.push(`not started: pid ${now2.holder?.pid} claimed meanwhile`);
      return;
    }
    const { reason, planned } = e;
    const vars = { prompt: "", reason, program: program.name, root: program.root };
    const prompt = fillPlaceholders(program.config.manager.prompt, vars);
    const kind = program.config.manager.launcher;
    const launcher = await launcherFor(kind);
    faultPoint("act.before-start");
    const began = Date.now();
    const launchBegan = iso(began);
    // The intent first (issue 18): a tick that dies mid-launch (a herdr start waits up to 20 s)
    // leaves a start the next tick waits on for claim_grace, not a second launch beside it.
    run.journal({
      type: "manager_starting",
      reason,
      planned,
      launcher: kind,
      launch_began: launchBegan,
      ...monoNow(),
    });
    faultPoint("act.mid-start");
    let launched: Launched;
    try {
      launched = await launcher.start({
        program,
        reason,
        prompt,
        launchBegan: began,
        signal: run.signal,
      });
    } catch (err) {
      // A failed start, whatever its cause (a launcher's config error included: what load could
      // refuse it already did), is journaled and paged, and counted by the crash-loop guard, so
      // a start that can never succeed stands down instead of failing every tick (DESIGN §6).
      const failed = startFailure(err);
      run.journal({ type: "manager_start_failed", launcher: kind, ...failed, planned });
      run.actions.push(`start failed: ${failed.reason}`);
      return;
    }
    faultPoint("act.after-start");
    try {
      run.journal({
        type: "manager_started",
        reason,
        planned,
        ...launched,
        launcher: kind,
        launch_began: launchBegan,
        ...monoNow(),
      });
    } catch (err) {
      // Unjournaled (a full disk), no later tick would know to stop it: stop it, then fail.
      await stopUnjournaled(program, launched);
      throw err;
    }
    const what =
      launched.pid !== undefined
        ? `pid ${launched.pid}`
        : (launched.pane ?? launched.window ?? kind);
    const unit = launched.unit ? ` in ${launched.unit}` : "";
    run.actions.push(`started ${what}${unit}${planned ? " (planned)" : ""}`);
  },
};

/** What `manager_start_failed` records of a launcher's error. */
function startFailure(err: unknown): { reason: string; screen?: string } {
  if (err instanceof StartFailed)
    return {
      reason: err.reason,
      ...(err.screen ? { screen: err.screen } : {}),
      ...(err.workspace ? { workspace: err.workspace } : {}),
    };
  return { reason: (err as Error)?.message ?? String(err) };
}

/** Stops a manager just started whose start could not be journaled (exact pid, or its pane). */
async function stopUnjournaled(program: ProgramContext, launched: Launched): Promise<void> {
  try {
    if (launched.pid !== undefined && launched.start_time !== undefined)
      await stopProcess(
        { pid: launched.pid, start_time: launched.start_time, machine_id: machineId() },
        STOP_GRACE_MS,
        stopOptionsFor(launched.launcher),
      );
    if (
      launched.pane !== undefined ||
      launched.window !== undefined ||
      launched.agent !== undefined
    )
      await (await launcherFor(launched.launcher)).close(program, launched);
  } catch {
    // the journal failure is what the tick reports
  }
}

function survived(pid: number | undefined): never {
  throw new Error(`pid ${pid} survived SIGKILL; not starting another manager`);
}

async function closePane(program: ProgramContext, start: StartRecord): Promise<void> {
  const launcher = await launcherFor(start.launcher);
  await launcher.close(program, launchedOf(start));
}

/** Rule 9: the stuck live holder, its evidence already kept; its pane closed. */
async function stopHolder(run: Run, e: Extract<StopEffect, { who: "holder" }>): Promise<void> {
  const { program, decision } = run;
  // Gathering and keeping evidence take seconds: a holder that saved meanwhile is not stuck.
  if (LIVE_RESTARTS.includes(decision.decision) && savedSinceGather(run, e.pid)) {
    run.claimClear = false;
    run.actions.push(`not stopped: pid ${e.pid} saved since the tick looked`);
    return;
  }
  // A command-launched manager leads its own session: its tool shells go with it.
  const stopped = await stopProcess(
    { pid: e.pid, start_time: e.start_time, machine_id: e.machine_id },
    STOP_GRACE_MS,
    stopOptionsFor(e.start?.launcher),
  );
  run.journal({
    type: "manager_stopped",
    pid: e.pid,
    start_time: e.start_time,
    who: "holder",
    reason: e.note?.reason ?? decision.reason,
    ...(e.note ? { planned: true } : {}),
    decision: decision.decision,
    evidence: run.evidence,
    ...(run.evidenceError ? { evidence_error: run.evidenceError } : {}),
    outcome: stopped.outcome,
    ...(stopped.group ? { group: true } : {}),
  });
  run.actions.push(
    `stopped pid ${e.pid} (${stopped.outcome}), ${run.evidence ? `evidence in ${run.evidence}` : `no evidence kept${run.evidenceError ? ` (${run.evidenceError})` : ""}`}`,
  );
  if (e.start && hasPane(e.start)) {
    await closePane(program, e.start);
    run.actions.push(`closed its ${e.start.launcher} pane`);
  }
  if (stopped.outcome === "survived") survived(e.pid);
}

/**
 * Types one line into a manager's pane (a nudge, the resume line), never into a dialog: its
 * Enter (or its letters) would answer it (issue 33). The pane is read by its agent's rules.
 */
async function typeLine(
  run: Run,
  start: StartRecord,
  text: string,
): Promise<{ dialog: string; screen: string } | { via: string | null; error: string | null }> {
  const launcher = await launcherFor(start.launcher);
  const screen = await launcher.screen(run.program, launchedOf(start)).catch(() => null);
  const dialog = screen ? agentScreen(run.program.config).dialog(screen) : null;
  if (screen && dialog) return { dialog, screen };
  try {
    const via = launcher.nudge ? await launcher.nudge(run.program, launchedOf(start), text) : null;
    return {
      via,
      error: via === null ? `the ${start.launcher} launcher cannot type into its pane` : null,
    };
  } catch (err) {
    return { via: null, error: (err as Error).message.split("\n")[0] ?? "failed" };
  }
}

/** Whether the holder's own heartbeat is newer than the one this tick judged. */
function savedSinceGather(run: Run, pid: number): boolean {
  const beat = readHeartbeat(run.program.stateDir);
  if (!beat || beat.pid !== pid) return false;
  const seen = run.facts.heartbeat;
  const seenAt = seen && seen.pid === pid ? Date.parse(seen.at) : Number.NEGATIVE_INFINITY;
  return Date.parse(beat.at) > seenAt;
}

/** Rule 13: what a start that never claimed left running, and its pane. */
async function stopLeftover(run: Run, start: StartRecord): Promise<void> {
  // It may have claimed since the tick looked: then it is the manager, not a leftover; unless
  // this host has lost the lease, when a manager that claimed meanwhile must stop all the same.
  const claim = readClaim(run.program.stateDir);
  const fencing = run.decision.decision === "leased_elsewhere";
  if (
    !fencing &&
    claim.held &&
    claim.holder &&
    claim.holder.pid === start.pid &&
    claim.holder.start_time === start.start_time
  ) {
    run.claimClear = false;
    run.actions.push(`not stopped: pid ${start.pid} claimed since the tick looked`);
    return;
  }
  if (start.intent && !fencing) {
    // Its manager has no recorded pid: a claim since its launch began is its own.
    const began = Date.parse(start.launch_began ?? start.at);
    if (claim.held && claim.holder && Date.parse(claim.holder.claimed_at) >= began) {
      run.claimClear = false;
      run.actions.push("not stopped: the start cut short has claimed since the tick looked");
      return;
    }
    // Its launch was never journaled (the tick ended mid-launch): no pid or pane to stop.
    run.journal({
      type: "start_cut_short",
      launcher: start.launcher,
      launch_began: start.launch_began ?? start.at,
      reason: `the start at ${start.at} (${start.launcher}) was cut short before its launch was journaled, and nothing claimed within claim_grace: what it launched, if anything, is not known`,
    });
    run.actions.push("a start cut short mid-launch never claimed: journaled start_cut_short");
    return;
  }
  // What it was waiting for, before anything of it is stopped: its screen, its hook records.
  let evidence: string | null = null;
  let evidenceError: string | null = null;
  try {
    const { keepStartEvidence } = await import("./evidence.js");
    evidence = await keepStartEvidence(run.program, start, run.decision.reason, run.now);
  } catch (err) {
    evidenceError = (err as Error)?.message ?? String(err);
  }
  let outcome = "nothing running";
  if (start.pid !== undefined && start.start_time !== undefined) {
    const r = await stopProcess(
      { pid: start.pid, start_time: start.start_time, machine_id: machineId() },
      STOP_GRACE_MS,
      stopOptionsFor(start.launcher),
    );
    outcome = r.outcome;
    if (r.outcome === "survived") survived(start.pid);
  }
  if (hasPane(start)) await closePane(run.program, start);
  if (outcome === "gone" && !hasPane(start) && evidence === null) return;
  run.journal({
    type: "manager_stopped",
    ...(start.pid !== undefined ? { pid: start.pid, start_time: start.start_time } : {}),
    ...(start.pane !== undefined ? { pane: start.pane } : {}),
    ...(start.window !== undefined ? { window: start.window } : {}),
    reason: `started ${start.at} and never claimed`,
    who: "leftover",
    launch_began: start.launch_began ?? start.at,
    decision: run.decision.decision,
    evidence,
    ...(evidenceError ? { evidence_error: evidenceError } : {}),
    outcome,
  });
  run.actions.push(
    start.pid !== undefined
      ? `stopped unclaimed start pid ${start.pid} (${outcome})${evidence ? `, evidence in ${evidence}` : ""}`
      : `closed the unclaimed start's ${start.launcher} pane${evidence ? `, evidence in ${evidence}` : ""}`,
  );
}

/** Rule 11: a manager that handed over is told to stop; a session in a pane may stay up anyway. */
async function stopHandedOver(
  run: Run,
  e: Extract<StopEffect, { who: "handed_over" }>,
): Promise<void> {
  const { pid, start_time, start } = e;
  const stopped = await stopProcess(
    { pid, start_time, machine_id: machineId() },
    STOP_GRACE_MS,
    stopOptionsFor(start?.launcher),
  );
  const pane = start !== null && hasPane(start);
  if (pane) await closePane(run.program, start);
  if (stopped.outcome !== "gone" || pane) {
    run.journal({
      type: "manager_stopped",
      pid,
      start_time,
      ...(start?.pane !== undefined ? { pane: start.pane } : {}),
      ...(start?.window !== undefined ? { window: start.window } : {}),
      who: "handed_over",
      reason: "handed over; stopping it before its successor starts",
      decision: run.decision.decision,
      evidence: null,
      outcome: stopped.outcome,
    });
    run.actions.push(
      stopped.outcome === "gone"
        ? `closed the ${start?.launcher} pane of pid ${pid}, which had handed over`
        : `stopped pid ${pid}, which had handed over (${stopped.outcome})${pane ? ", and closed its pane" : ""}`,
    );
  }
  if (stopped.outcome === "survived") survived(pid);
}
