// STUB (owned by the manager's-side work, issue 4): signatures are the contract; bodies to be written.
import type { ProgramConfig } from "../config/schema.js";
import type { Liveness } from "../process/identity.js";

/** The holder JSON a merge-lock commit's message carries (DESIGN §10). */
export interface MergeLockHolder {
  pid: number;
  start_time: string;
  machine_id: string;
  item: string | null;
  at: string;
}

export type MergeLockState =
  | { held: false }
  | {
      held: true;
      holder: MergeLockHolder | null;
      liveness: Liveness | "unreadable";
      age_ms: number | null;
    };

/** Reads the merge lock ref (on the remote when one is configured). Never changes anything. */
export async function readMergeLock(
  _cfg: NonNullable<ProgramConfig["merge_lock"]>,
): Promise<MergeLockState> {
  return { held: false };
}
