import { undoState } from "../lifecycle/undo-state.js";

/** `sheepdog reopen`: undoes `finish`; the next tick starts a manager (planned). */
export function run(argv: string[]): Promise<number> {
  return undoState(
    {
      command: "reopen",
      held: (s) => s.finished,
      key: "reopened",
      nothing: (name) => `${name}: not finished; nothing to reopen`,
      event: (held, note) => ({
        type: "reopened",
        finished_at: held.at,
        ...(note ? { note } : {}),
      }),
      was: (held) => ({ at: held.at, note: held.note ?? null }),
      done: (name) => `${name}: reopened; the next tick starts a manager`,
    },
    argv,
  );
}
