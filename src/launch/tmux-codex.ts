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
  codexTrustKey,
} from "./codex-screen.js";
import { StartFailed } from "./start-failed.js";
import type { ClaudeScreenWatch, ClaudeStartEnd } from "./tmux-claude.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** After a key, how long the dialog has to change before anything is pressed again. */
const KEY_SETTLE_MS = 400;

function held(what: string, screen: string | null, root: string): StartFailed {
  return new StartFailed(
    `tmux: ${what}; ${codexDialogFix(screen, root)}`,
    screen ? screenTail(screen) : undefined,
  );
}

export async function watchCodexStart(w: ClaudeScreenWatch): Promise<ClaudeStartEnd> {
  const pollMs = w.pollMs ?? 250;
  const deadline = Date.now() + w.startMs;
  let boxSince: number | null = null;
  let screen: string | null = null;
  for (;;) {
    if (w.arrived()) return "arrived";
    screen = await w.read();
    if (screen === null) return "gone";
    const key = codexTrustKey(screen);
    if (key || codexShowsDialog(screen)) {
      if (!key) throw held("Codex is held at a dialog", screen, w.root);
      if (!w.acceptTrustDialog) throw held("Codex is held at its trust dialog", screen, w.root);
      await w.press(key === "enter" ? "Enter" : key === "down" ? "Down" : "Up");
      await sleep(KEY_SETTLE_MS);
      continue;
    }
    if (codexShowsComposer(screen)) {
      boxSince ??= Date.now();
      if (Date.now() - boxSince >= w.arrivalMs)
        throw new StartFailed(
          `tmux: Codex shows its composer but the prompt did not arrive in a rollout within ${Math.round(w.arrivalMs / 1000)}s`,
          screenTail(screen),
        );
    }
    if (boxSince === null && Date.now() >= deadline)
      throw new StartFailed(
        `tmux: Codex did not show its composer within ${Math.round(w.startMs / 1000)}s`,
        screenTail(screen),
      );
    await sleep(pollMs);
  }
}
