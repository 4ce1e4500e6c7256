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

export interface ClaudeScreenWatch {
  /** The window's screen now; null when the window is gone (its process ended). */
  read(): Promise<string | null>;
  /** Presses one key in the window (tmux key names: Enter, Down, Up). */
  press(key: "Enter" | "Down" | "Up"): Promise<void>;
  /** Whether the prompt arrived (in the transcript, or a claim since the launch). */
  arrived(): boolean;
  acceptTrustDialog: boolean;
  root: string;
  /** How long the window has to show its input box (or the prompt to arrive). */
  startMs: number;
  /** How long the prompt has to arrive once the input box shows. */
  arrivalMs: number;
  pollMs?: number;
}

/** How the start ended: the prompt arrived, or the window closed (its process is gone). */
export type ClaudeStartEnd = "arrived" | "gone";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** After Enter on the dialog, how long it has to go before anything is pressed again. */
const ENTER_SETTLE_MS = 3_000;

function held(what: string, screen: string | null, root: string): StartFailed {
  const fix = dialogFix(screen, root, "tmux");
  return new StartFailed(`tmux: ${what}; ${fix}`, screen ? screenTail(screen) : undefined);
}

/** Waits for the screen to leave the trust dialog after Enter (a lost Enter leaves it up). */
async function afterEnter(w: ClaudeScreenWatch): Promise<void> {
  const deadline = Date.now() + ENTER_SETTLE_MS;
  while (Date.now() < deadline) {
    await sleep(w.pollMs ?? 250);
    if (!isTrustDialog(await w.read())) return;
  }
}

/**
 * Watches a new Claude Code window until its prompt arrived or the window closed. Throws
 * StartFailed (with the screen) when it is held at a dialog it may not answer, when it never
 * shows its input box within `startMs`, or when the prompt does not arrive within
 * `arrivalMs` of the input box. Only the keys the trust dialog asks for are ever pressed.
 */
export async function watchClaudeStart(w: ClaudeScreenWatch): Promise<ClaudeStartEnd> {
  const pollMs = w.pollMs ?? 250;
  const deadline = Date.now() + w.startMs;
  let boxSince: number | null = null;
  let screen: string | null = null;
  for (;;) {
    if (w.arrived()) return "arrived";
    screen = await w.read();
    if (screen === null) return "gone";
    if (isTrustDialog(screen)) {
      if (!w.acceptTrustDialog)
        throw held("Claude is held at its folder-trust dialog", screen, w.root);
      const key = trustKey(screen);
      if (key === "enter") {
        await w.press("Enter");
        await afterEnter(w);
        continue;
      }
      if (key) {
        await w.press(key === "down" ? "Down" : "Up");
        await sleep(KEY_SETTLE_MS);
        continue;
      }
    } else if (showsDialog(screen)) {
      throw held("Claude is held at a dialog", screen, w.root);
    } else if (showsInputBox(screen)) {
      boxSince ??= Date.now();
      if (Date.now() - boxSince >= w.arrivalMs)
        throw new StartFailed(
          `tmux: Claude shows its input box but the prompt did not arrive in its transcript within ${Math.round(w.arrivalMs / 1000)}s`,
          screenTail(screen),
        );
    }
    if (boxSince === null && Date.now() >= deadline)
      throw new StartFailed(
        `tmux: Claude did not show its input box within ${Math.round(w.startMs / 1000)}s`,
        screenTail(screen),
      );
    await sleep(pollMs);
  }
}
