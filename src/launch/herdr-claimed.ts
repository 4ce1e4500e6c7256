// Whether the manager a herdr start launched has claimed its program. A manager claims because
// its prompt tells it to, so its claim is the strongest proof that the prompt arrived, stronger
// than the transcript (Claude may write it where the arrival check does not look): a start whose
// manager claimed is a success, and its pane is never closed for a failed arrival check.
import { readClaim } from "../claim/claim.js";
import { type EventType, readEvents } from "../journal/journal.js";

const CLAIMED: ReadonlySet<EventType> = new Set(["claimed"]);

export interface ClaimWatch {
  stateDir: string;
  /** When the launch began: a claim taken since is this start's (the tick started no other). */
  sinceMs: number;
}

export interface StartedProcess {
  pid: number;
  start_time: string;
}

/** The claim as it is now (one small file, cheap enough to poll): ours, or taken since. */
export function holdsClaim(w: ClaimWatch, proc?: StartedProcess | null): boolean {
  const c = readClaim(w.stateDir);
  if (!c.held || !c.holder) return false;
  if (proc && c.holder.pid === proc.pid && c.holder.start_time === proc.start_time) return true;
  return Date.parse(c.holder.claimed_at) >= w.sinceMs;
}

/** The claim now, or a `claimed` event since the launch began (it may be released or dead). */
export function managerClaimed(w: ClaimWatch, proc?: StartedProcess | null): boolean {
  if (holdsClaim(w, proc)) return true;
  return readEvents(w.stateDir, CLAIMED).some(
    (e) => e.type === "claimed" && Date.parse(e.at) >= w.sinceMs,
  );
}
