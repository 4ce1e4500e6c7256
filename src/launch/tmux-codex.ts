// A Codex TUI start in a tmux window, watched through its screen (DESIGN §7, §19): past its
// "Trust this folder?" and "Hooks need review" dialogs where the program allows it, failed
// with the screen at any other dialog, and done once the prompt has arrived in a rollout (or
// the manager has claimed). The argv prompt is submitted once every dialog is answered
// (0.171.0).
import { screenTail } from "./claude-screen.js";
import {
  codexDialogFix,
  codexShowsComposer,
  codexShowsDialog,
  codexTrustDialog,
  codexTrustKey,
} from "./codex-screen.js";
import { StartFailed } from "./start-failed.js";
import { type StartEnd, type StartWatch, trustKeys, watchStart } from "./start-watch.js";

/** After a key, how long the dialog has to change before anything is pressed again. */
const KEY_SETTLE_MS = 400;

function held(what: string, screen: string | null, root: string): StartFailed {
  return new StartFailed(
    `tmux: ${what}; ${codexDialogFix(screen, root)}`,
    screen ? screenTail(screen) : undefined,
  );
}

/** Watches a new Codex window until its prompt arrived in a rollout (start-watch.ts). */
export function watchCodexStart(w: StartWatch): Promise<StartEnd> {
  const press = trustKeys(
    KEY_SETTLE_MS,
    codexTrustKey,
    (answered, now) => codexTrustDialog(now) === codexTrustDialog(answered),
  );
  return watchStart(w, {
    agent: "Codex",
    box: "composer",
    arrivesIn: "a rollout",
    showsBox: codexShowsComposer,
    async dialog(screen, w) {
      const key = codexTrustKey(screen);
      if (!key && !codexShowsDialog(screen)) return "none";
      if (!key) throw held("Codex is held at a dialog", screen, w.root);
      if (!w.acceptTrustDialog) throw held("Codex is held at its trust dialog", screen, w.root);
      return press(key, w);
    },
  });
}
