import type { JournalEvent } from "./journal.js";

/**
 * Program state derived by replaying the journal (DESIGN §2: never stored twice).
 * Each field is the newest event that still holds, or null.
 */
export interface ReplayedState {
  /** `finished` not followed by `reopened`. */
  finished: JournalEvent | null;
  /** `stood_down` not followed by `cleared`. */
  stoodDown: JournalEvent | null;
  /** `paused` not followed by `unpaused`. */
  paused: JournalEvent | null;
}

/** Replays the latest-wins pairs of events. */
export function replay(events: readonly JournalEvent[]): ReplayedState {
  const state: ReplayedState = { finished: null, stoodDown: null, paused: null };
  for (const e of events) {
    switch (e.type) {
      case "finished":
        state.finished = e;
        break;
      case "reopened":
        state.finished = null;
        break;
      case "stood_down":
        state.stoodDown = e;
        break;
      case "cleared":
        state.stoodDown = null;
        break;
      case "paused":
        state.paused = e;
        break;
      case "unpaused":
        state.paused = null;
        break;
    }
  }
  return state;
}
