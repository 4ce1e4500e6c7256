import { agentFor } from "../../agent/index.js";
import type { ProgramContext } from "../../config/context.js";
import { cwdOf } from "../../process/identity.js";
import { seatOf } from "../../usage/seat.js";
import { managerTranscriptEnv } from "../../usage/transcript.js";

/**
 * A live holder's transcript (DESIGN §4, §19), as its agent finds it: Claude's session map
 * entry, else the newest in the project folder of its working directory; Codex's rollout, the
 * one its Stop hook recorded or the newest of the program root since the claim.
 */
export function holderTranscript(
  program: ProgramContext,
  holder: { pid: number; start_time: string },
  since?: number,
): string | null {
  return agentFor(program.config).findTranscript(seatOf(program.config), {
    cwd: cwdOf(holder.pid) ?? program.root,
    root: program.root,
    manager: holder,
    ...(since !== undefined ? { since } : {}),
    env: managerTranscriptEnv(program.config.manager.env),
  });
}
