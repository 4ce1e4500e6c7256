import { RESUME } from "../lifecycle/answers.js";
import { undoState } from "../lifecycle/undo-state.js";

/** `sheepdog resume`: clears a stand-down; the next start is planned (DESIGN §6). */
export function run(argv: string[]): Promise<number> {
  return undoState(
    {
      command: "resume",
      ...RESUME,
      key: "cleared",
      nothing: (name) => `${name}: not stood down; nothing to clear`,
      was: (held) => ({ reason: held.reason ?? null, at: held.at }),
      done: (name, held) =>
        `${name}: stand-down cleared (it was: ${String(held.reason ?? "")}); the next tick starts a manager if none holds it`,
      pages: true,
    },
    argv,
  );
}
