import { breakStaleClaim, readClaim } from "../claim/claim.js";
import type { ProgramContext } from "../config/context.js";
import { UsageError } from "../errors.js";
import { appendEvent, type JournalEvent } from "../journal/journal.js";
import { hasPane, launchedOf, launcherFor } from "../launch/index.js";
import { StartFailed } from "../launch/start-failed.js";
import { fillPlaceholders, type Launched } from "../launch/types.js";
import { machineId } from "../process/identity.js";
import { stopOptionsFor, stopProcess } from "../process/stop.js";
import { faultPoint } from "../util/fault-point.js";
import type { Decision } from "./decide.js";
import type { Facts } from "./facts.js";

/** TERM, then KILL after this long (DESIGN §6 rule 9). */
export const STOP_GRACE_MS = 10_000;

export interface ActResult {
  events: JournalEvent[];
  /** What was done, in words for people (`stopped pid 4242`, `started pid 5151`). */
  actions: string[];
}

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

/**
 * Carries out a decision (DESIGN §6 "what the tick does"), in order: unpause, pause, stop a
 * stuck holder (evidence first), stop what an unclaimed start left running, break the claim,
 * stand down, start. Journals every act.
 */
export async function act(
  program: ProgramContext,
  facts: Facts,
  decision: Decision,
  now: number,
): Promise<ActResult> {
  const { stateDir } = program;
  const events: JournalEvent[] = [];
  const actions: string[] = [];
  const journal = (event: { type: string; [k: string]: unknown }) => {
    const e = appendEvent(stateDir, event);
    events.push(e);
    return e;
  };

  if (decision.unpause) {
    journal({ type: "unpaused", reason: decision.unpause.reason });
    actions.push("pause over");
  }
  if (decision.pause) {
    journal({ type: "paused", ...decision.pause });
    actions.push(`paused until ${decision.pause.until}`);
  }

  if (decision.stop_holder && facts.claim.state === "alive") {
    const claim = facts.claim;
    // The holder's pane, if a tmux/herdr start made it: the last start before it claimed.
    const start = facts.history.last_start;
    // A start journaled after its manager claimed (a herdr start ends with the prompt's arrival)
    // is still the holder's when it recorded the holder's pid.
    const fromStart =
      start && (start.pid === claim.pid || Date.parse(start.at) <= Date.parse(claim.claimed_at))
        ? start
        : null;
    const { keepEvidence } = await import("./evidence.js");
    const evidence = await keepEvidence(program, facts, decision, fromStart, now);
    const id = { pid: claim.pid, start_time: claim.start_time, machine_id: claim.machine_id };
    // A command-launched manager leads its own session: its tool shells go with it.
    const stopped = await stopProcess(id, STOP_GRACE_MS, stopOptionsFor(fromStart?.launcher));
    journal({
      type: "manager_stopped",
      pid: claim.pid,
      start_time: claim.start_time,
      reason: decision.stop_note?.reason ?? decision.reason,
      ...(decision.stop_note ? { planned: true } : {}),
      decision: decision.decision,
      evidence,
      outcome: stopped.outcome,
    });
    actions.push(`stopped pid ${claim.pid} (${stopped.outcome}), evidence in ${evidence}`);
    if (fromStart && hasPane(fromStart)) {
      const launcher = await launcherFor(fromStart.launcher);
      await launcher.close(program, launchedOf(fromStart));
      actions.push(`closed its ${fromStart.launcher} pane`);
    }
    if (stopped.outcome === "survived")
      throw new Error(`pid ${claim.pid} survived SIGKILL; not starting another manager`);
  }

  if (decision.stop_leftover) {
    const start = decision.stop_leftover;
    let outcome = "nothing running";
    if (start.pid !== undefined && start.start_time !== undefined) {
      const r = await stopProcess(
        { pid: start.pid, start_time: start.start_time, machine_id: machineId() },
        STOP_GRACE_MS,
        stopOptionsFor(start.launcher),
      );
      outcome = r.outcome;
      if (r.outcome === "survived")
        throw new Error(`pid ${start.pid} survived SIGKILL; not starting another manager`);
    }
    if (hasPane(start)) {
      const launcher = await launcherFor(start.launcher);
      await launcher.close(program, launchedOf(start));
    }
    if (outcome !== "gone" || hasPane(start)) {
      journal({
        type: "manager_stopped",
        ...(start.pid !== undefined ? { pid: start.pid, start_time: start.start_time } : {}),
        ...(start.pane !== undefined ? { pane: start.pane } : {}),
        ...(start.window !== undefined ? { window: start.window } : {}),
        reason: `started ${start.at} and never claimed`,
        decision: decision.decision,
        evidence: null,
        outcome,
      });
      actions.push(
        start.pid !== undefined
          ? `stopped unclaimed start pid ${start.pid} (${outcome})`
          : `closed the unclaimed start's ${start.launcher} pane`,
      );
    }
  }

  let claimClear = true;
  if (decision.break_claim) {
    const seen = readClaim(stateDir);
    if (seen.held) {
      const broken = breakStaleClaim(stateDir, seen, decision.reason);
      if (broken) {
        events.push({
          at: new Date().toISOString(),
          type: "claim_broken",
          reason: decision.reason,
        });
        actions.push("broke the claim");
      } else {
        claimClear = !readClaim(stateDir).held;
      }
    }
  }

  if (decision.stop_handed_over) {
    // A manager that handed over is told to stop; a session in a pane may stay up anyway.
    const { pid, start_time, start } = decision.stop_handed_over;
    const stopped = await stopProcess(
      { pid, start_time, machine_id: machineId() },
      STOP_GRACE_MS,
      stopOptionsFor(start?.launcher),
    );
    const pane = start !== null && hasPane(start);
    if (pane) {
      const launcher = await launcherFor(start.launcher);
      await launcher.close(program, launchedOf(start));
    }
    if (stopped.outcome !== "gone" || pane) {
      journal({
        type: "manager_stopped",
        pid,
        start_time,
        ...(start?.pane !== undefined ? { pane: start.pane } : {}),
        ...(start?.window !== undefined ? { window: start.window } : {}),
        reason: "handed over; stopping it before its successor starts",
        decision: decision.decision,
        evidence: null,
        outcome: stopped.outcome,
      });
      actions.push(
        stopped.outcome === "gone"
          ? `closed the ${start?.launcher} pane of pid ${pid}, which had handed over`
          : `stopped pid ${pid}, which had handed over (${stopped.outcome})${pane ? ", and closed its pane" : ""}`,
      );
    }
    if (stopped.outcome === "survived")
      throw new Error(`pid ${pid} survived SIGKILL; not starting another manager`);
  }

  if (decision.stand_down) {
    journal({ type: "stood_down", reason: decision.stand_down.reason });
    actions.push("stood down: sheepdog resume clears it");
  }

  if (decision.start && claimClear) {
    const now2 = readClaim(stateDir);
    if (now2.held && now2.liveness === "alive") {
      actions.push(`not started: pid ${now2.holder?.pid} claimed meanwhile`);
    } else {
      const { reason, planned } = decision.start;
      const vars = { prompt: "", reason, program: program.name, root: program.root };
      const prompt = fillPlaceholders(program.config.manager.prompt, vars);
      const kind = program.config.manager.launcher;
      const launcher = await launcherFor(kind);
      faultPoint("act.before-start");
      let launched: Awaited<ReturnType<typeof launcher.start>>;
      try {
        launched = await launcher.start({ program, reason, prompt });
      } catch (err) {
        // Bad config is the user's to fix (exit 2); anything else is a failed start, journaled
        // and paged, and counted by the crash-loop guard (DESIGN §6).
        if (err instanceof UsageError) throw err;
        const failed = startFailure(err);
        journal({ type: "manager_start_failed", launcher: kind, ...failed, planned });
        actions.push(`start failed: ${failed.reason}`);
        return { events, actions };
      }
      faultPoint("act.after-start");
      try {
        journal({ type: "manager_started", reason, planned, ...launched, launcher: kind });
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
      actions.push(`started ${what}${unit}${planned ? " (planned)" : ""}`);
    }
  } else if (decision.start) {
    actions.push("not started: the claim changed meanwhile");
  }
  return { events, actions };
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
