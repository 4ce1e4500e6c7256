import type { ProgramContext } from "../config/context.js";
import { CONFIG_SETTLE_MS } from "../config/last-valid.js";
import { refreshClockStep } from "../util/clock-step.js";
import { faultPoint } from "../util/fault-point.js";
import { abandonPasses } from "../watchdog/abandon.js";
import { type ProgramReport, TickFailed, tickProgram } from "../watchdog/tick.js";

/** The programs whose pass is running now (what a signal or a deadline must account for). */
export const inFlight = new Set<ProgramContext>();

/**
 * The watcher's pass: exactly the tick's (`tickProgram`, under `tick.lock`), with the tick's
 * per-program deadline. A pass that throws was already journaled `tick_failed` and paged by
 * `tickProgram`; here it becomes a report and the watcher goes on. `onHung` is called when a
 * pass outlives its deadline (the caller ends the process: a hung watcher must not look alive).
 */
export function watchPass(
  deadlineMs: (program: ProgramContext) => number,
  onHung: (program: ProgramContext, ms: number) => void,
): (program: ProgramContext) => Promise<ProgramReport> {
  return async (program) => {
    const ms = deadlineMs(program);
    const timer = setTimeout(() => onHung(program, ms), ms);
    inFlight.add(program);
    try {
      refreshClockStep();
      faultPoint("watch.pass.before-tick");
      // a program.json read broken is only "invalid" once read the same 2 s later (DESIGN §18)
      const report = await tickProgram(program, { configSettleMs: CONFIG_SETTLE_MS });
      faultPoint("watch.pass.after-tick");
      return report;
    } catch (err) {
      const failed = err instanceof TickFailed;
      return {
        program: program.name,
        root: program.root,
        decision: failed ? "tick_failed" : "error",
        reason: (err as Error)?.message ?? String(err),
        facts: failed ? err.facts : null,
        actions: [],
      };
    } finally {
      clearTimeout(timer);
      inFlight.delete(program);
    }
  };
}

/**
 * Journals `tick_failed` for every pass in progress, pages (for at most 5 s) and releases the
 * tick locks this process holds: used when the watcher must go before its passes finish.
 */
export function abandonInFlight(message: string): Promise<void> {
  return abandonPasses([...inFlight], message, { releaseLocks: true });
}
