import { UNPAUSE } from "../lifecycle/answers.js";
import { undoState } from "../lifecycle/undo-state.js";

/** `sheepdog unpause`: ends a pause early; the next start is planned. */
export function run(argv: string[]): Promise<number> {
  return undoState(
    {
      command: "unpause",
      ...UNPAUSE,
      key: "unpaused",
      nothing: (name) => `${name}: not paused`,
      was: (held) => ({ until: held.until ?? null, reason: held.reason ?? null }),
      done: (name, held) =>
        `${name}: unpaused (was paused until ${String(held.until)}: ${String(held.reason ?? "")})`,
      // The pause's incident closes at once: the phone says "unpaused by a person".
      pages: true,
    },
    argv,
  );
}
