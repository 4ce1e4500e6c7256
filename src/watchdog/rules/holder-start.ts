// Which start made this holder (DESIGN §6): one answer for the rules that close a holder's
// pane, stop a manager that handed over, and read a holder's transcript.
import type { StartRecord } from "../../journal/replay.js";

/** A manager as the claim or a hand-over names it. */
export interface HolderRef {
  pid: number | null;
  start_time?: string | null;
  claimed_at?: string | null;
}

/**
 * The last start, when it made `holder`: its process is the holder's (pid, and start time when
 * both are known), or the holder claimed after that launch began. A herdr start is journaled
 * after its manager claims, so the start's own time may come after the claim; starts from
 * before `launch_began` was recorded are judged by their journal time.
 */
export function startOfHolder(last: StartRecord | null, holder: HolderRef): StartRecord | null {
  if (!last) return null;
  if (last.pid !== undefined && holder.pid !== null && last.pid === holder.pid) {
    const known = last.start_time !== undefined && holder.start_time;
    return !known || last.start_time === holder.start_time ? last : null;
  }
  if (!holder.claimed_at) return null;
  const began = Date.parse(last.launch_began ?? last.at);
  return began <= Date.parse(holder.claimed_at) ? last : null;
}
