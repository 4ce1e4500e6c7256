import { undoState } from "../lifecycle/undo-state.js";

/** `sheepdog unpause`: ends a pause early; the next start is planned. */
export function run(argv: string[]): Promise<number> {
  return undoState(
    {
      command: "unpause",
      held: (s) => s.paused,
      key: "unpaused",
      nothing: (name) => `${name}: not paused`,
      // A person who unpauses has looked: what is already recorded no longer limits the seat for
      // this program (DESIGN §5); the next real reading or refusal pauses again.
      event: () => ({ type: "unpaused", reason: "unpaused by a person", by: "person" }),
      was: (held) => ({ until: held.until ?? null, reason: held.reason ?? null }),
      done: (name, held) =>
        `${name}: unpaused (was paused until ${String(held.until)}: ${String(held.reason ?? "")})`,
    },
    argv,
  );
}
