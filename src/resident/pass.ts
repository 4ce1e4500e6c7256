import type { ProgramContext } from "../config/context.js";
import { CONFIG_SETTLE_MS } from "../config/last-valid.js";
import { refreshClockStep } from "../util/clock-step.js";
import { faultPoint } from "../util/fault-point.js";
import type { PassSupervisor } from "../watchdog/pass/supervisor.js";
import { type ProgramReport, tickProgram } from "../watchdog/pass/tick.js";

/**
 * The watcher's pass: exactly the tick's (`tickProgram`, under `tick.lock`), supervised as the
 * tick's are (watchdog/pass/supervisor.ts): its own deadline and signal, and a failure that comes
 * back as its report (`tickProgram` journaled and paged it), so the watcher goes on.
 */
export function watchPass(
  supervisor: PassSupervisor,
): (program: ProgramContext) => Promise<ProgramReport> {
  return (program) =>
    supervisor.run(program, async (signal) => {
      refreshClockStep();
      faultPoint("watch.pass.before-tick");
      // a program.json read broken is only "invalid" once read the same 2 s later (DESIGN §18)
      const report = await tickProgram(program, { signal, configSettleMs: CONFIG_SETTLE_MS });
      faultPoint("watch.pass.after-tick");
      return report;
    });
}
