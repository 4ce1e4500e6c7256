// The commands a person may also give from the phone (DESIGN §8): `resume`, `unpause` and
// `pause`, each in one place, so a button does exactly what the CLI command does.
import type { ProgramContext } from "../config/context.js";
import { appendEvent, type JournalEvent } from "../journal/journal.js";
import { iso } from "../util/time.js";
import type { UndoSpec } from "./undo-state.js";

type Spec = Omit<UndoSpec, "command" | "key" | "nothing" | "was" | "done" | "pages">;

/** `sheepdog resume`: clears a stand-down (`cleared`); the next start is planned. */
export const RESUME: Spec = {
  held: (s) => s.stoodDown,
  event: (held, note) => ({
    type: "cleared",
    stood_down_at: held.at,
    ...(note ? { note } : {}),
  }),
};

/**
 * `sheepdog unpause`: ends a pause early. A person who unpauses has looked: what is already
 * recorded no longer limits the seat for this program (DESIGN §5); the next real reading or
 * refusal pauses again.
 */
export const UNPAUSE: Spec = {
  held: (s) => s.paused,
  event: () => ({ type: "unpaused", reason: "unpaused by a person", by: "person" }),
};

export const PAUSE_REASON = "paused by a person";

/** `sheepdog pause --until WHEN`: nothing starts until then (a person's pause names no window). */
export function pauseUntil(
  program: ProgramContext,
  until: number,
  extra: Record<string, unknown> = {},
  now = Date.now(),
): JournalEvent {
  return appendEvent(
    program.stateDir,
    { type: "paused", until: iso(until), reason: PAUSE_REASON, window: null, ...extra },
    now,
  );
}
