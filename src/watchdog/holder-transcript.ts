import type { ProgramContext } from "../config/context.js";
import { cwdOf } from "../process/identity.js";
import { seatOf } from "../usage/seat.js";
import { findTranscript, managerTranscriptEnv } from "../usage/transcript.js";

/**
 * A live holder's transcript (DESIGN §4): its session map entry, else the newest in the
 * project folder of its working directory, named as the manager's own env names it.
 */
export function holderTranscript(
  program: ProgramContext,
  holder: { pid: number; start_time: string },
): string | null {
  return findTranscript({
    seat: seatOf(program.config),
    cwd: cwdOf(holder.pid) ?? program.root,
    manager: holder,
    env: managerTranscriptEnv(program.config.manager.env),
  });
}
