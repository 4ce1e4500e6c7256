// One loop watches a new manager's tmux window, whatever its agent (DESIGN §7, §19): the screen
// is read until the prompt has arrived (or the window closed); the agent's own screen rules say
// what a dialog is, which key answers it, and when its input box shows. A start held at a
// dialog it may not answer, one that never shows its input box within `startMs`, or one whose
// prompt does not arrive within `arrivalMs` of the input box fails with the screen.
import { screenTail } from "./claude-screen.js";
import { StartFailed } from "./start-failed.js";

export interface StartWatch {
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
  /** The pass's: once aborted (the pass given up), the watch reads and presses nothing more. */
  signal?: AbortSignal;
}

/** How the start ended: the prompt arrived, or the window closed (its process is gone). */
export type StartEnd = "arrived" | "gone";

/**
 * What a dialog on the screen called for: a key was pressed (read again at once); a dialog is
 * up with nothing to press yet (wait); or no dialog shows.
 */
export type DialogStep = "pressed" | "wait" | "none";

/** One agent's screen, as the loop reads it. */
export interface StartScreen {
  /** The agent and its input box, in the failures' words: "Claude", "input box". */
  agent: string;
  box: string;
  /** Where the prompt is looked for: "its transcript", "a rollout". */
  arrivesIn: string;
  /** Answers the dialog on the screen where allowed; throws StartFailed when held at one. */
  dialog(screen: string, w: StartWatch): Promise<DialogStep>;
  showsBox(screen: string): boolean;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function watchStart(w: StartWatch, s: StartScreen): Promise<StartEnd> {
  const pollMs = w.pollMs ?? 250;
  const deadline = Date.now() + w.startMs;
  let boxSince: number | null = null;
  let screen: string | null = null;
  for (;;) {
    if (w.arrived()) return "arrived";
    if (w.signal?.aborted)
      throw new StartFailed(`tmux: ${s.agent}'s start was given up with its pass`);
    screen = await w.read();
    if (screen === null) return "gone";
    const step = await s.dialog(screen, w);
    // Read again at once after a key, but never past the deadline (a dialog that takes no key).
    if (step === "pressed" && Date.now() < deadline) continue;
    if (step === "none" && s.showsBox(screen)) {
      boxSince ??= Date.now();
      if (Date.now() - boxSince >= w.arrivalMs)
        throw new StartFailed(
          `tmux: ${s.agent} shows its ${s.box} but the prompt did not arrive in ${s.arrivesIn} within ${Math.round(w.arrivalMs / 1000)}s`,
          screenTail(screen),
        );
    }
    if (boxSince === null && Date.now() >= deadline)
      throw new StartFailed(
        `tmux: ${s.agent} did not show its ${s.box} within ${Math.round(w.startMs / 1000)}s`,
        screenTail(screen),
      );
    await sleep(pollMs);
  }
}
