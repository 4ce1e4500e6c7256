// A Claude Code start in a tmux window, watched through its screen (DESIGN §7): past the
// folder-trust dialog where the program allows it, failed with the screen at any other dialog,
// and done once the prompt has arrived in the transcript (or the manager has claimed).
// Claude Code 2.1.328 under tmux: the trust dialog draws 1–2 s after the start with "No, exit"
// selected, keys sent in its first instant can be lost, and the argv prompt is submitted once
// every dialog is answered.
import {
  dialogFix,
  isTrustDialog,
  KEY_SETTLE_MS,
  screenTail,
  showsDialog,
  showsInputBox,
  trustKey,
} from "./claude-screen.js";
import { StartFailed } from "./start-failed.js";
import { type StartEnd, type StartWatch, trustKeys, watchStart } from "./start-watch.js";

function held(what: string, screen: string | null, root: string): StartFailed {
  const fix = dialogFix(screen, root, "tmux");
  return new StartFailed(`tmux: ${what}; ${fix}`, screen ? screenTail(screen) : undefined);
}

/**
 * Watches a new Claude Code window until its prompt arrived or the window closed (start-watch.ts).
 * Only the keys the trust dialog asks for are ever pressed; any other dialog holds the start.
 */
export function watchClaudeStart(w: StartWatch): Promise<StartEnd> {
  const press = trustKeys(KEY_SETTLE_MS, trustKey, (_, now) => isTrustDialog(now));
  return watchStart(w, {
    agent: "Claude",
    box: "input box",
    arrivesIn: "its transcript",
    showsBox: showsInputBox,
    async dialog(screen, w) {
      if (isTrustDialog(screen)) {
        if (!w.acceptTrustDialog)
          throw held("Claude is held at its folder-trust dialog", screen, w.root);
        const key = trustKey(screen);
        return key ? press(key, w) : "wait";
      }
      if (showsDialog(screen)) throw held("Claude is held at a dialog", screen, w.root);
      return "none";
    },
  });
}
