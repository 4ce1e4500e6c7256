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

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * How long after an arrow key the next one may be pressed: keys sent in a dialog's first
 * instant are lost (Claude Code 2.1.328), but on a loaded host one is only late, and pressed
 * again at once it lands twice (the menu moves past Yes). Every trust dialog needs one arrow.
 */
export const ARROW_REPRESS_MS = 2_000;

/** After Enter on a trust dialog, how long it has to go before anything is pressed again. */
const ENTER_SETTLE_MS = 3_000;

/** What the trust dialog's keys need of a window: tmux's start watch, or a Herdr pane. */
export type KeyedScreen = Pick<StartWatch, "read" | "press" | "signal" | "pollMs">;

/**
 * A trust dialog's keys, pressed alike for every agent: an arrow at most once every
 * ARROW_REPRESS_MS; Enter only on a Yes read twice `settleMs` apart (a late arrow moves the
 * menu on, and Enter on the wrong option can end the agent); nothing once the pass is given up.
 * After Enter, while `stillUp(answered, now)` says the answered dialog shows (a lost Enter
 * leaves it up, and a second one would land on whatever comes next), nothing is pressed for up
 * to ENTER_SETTLE_MS; without it the caller waits its own way (Herdr's `agent wait`).
 */
export function trustKeys(
  settleMs: number,
  keyOf: (screen: string) => "enter" | "down" | "up" | null,
  stillUp?: (answered: string, now: string) => boolean,
) {
  let arrowAt = Number.NEGATIVE_INFINITY;
  return async (key: "enter" | "down" | "up", w: KeyedScreen): Promise<DialogStep> => {
    if (w.signal?.aborted) return "wait";
    if (key === "enter") {
      await sleep(settleMs);
      const again = await w.read();
      if (again === null || keyOf(again) !== "enter" || w.signal?.aborted) return "wait";
      await w.press("Enter");
      const settled = Date.now() + ENTER_SETTLE_MS;
      while (stillUp && Date.now() < settled) {
        await sleep(w.pollMs ?? 250);
        const now = await w.read();
        if (now === null || !stillUp(again, now)) break;
      }
      return "pressed";
    }
    if (Date.now() - arrowAt < ARROW_REPRESS_MS) return "wait";
    await w.press(key === "down" ? "Down" : "Up");
    arrowAt = Date.now();
    await sleep(settleMs);
    return "pressed";
  };
}

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
    // Past the deadline with no box yet (a dialog that takes no key among them): nothing more
    // is pressed.
    if (boxSince === null && Date.now() >= deadline && !s.showsBox(screen))
      throw new StartFailed(
        `tmux: ${s.agent} did not show its ${s.box} within ${Math.round(w.startMs / 1000)}s`,
        screenTail(screen),
      );
    const step = await s.dialog(screen, w);
    if (step === "pressed") continue; // read again at once
    if (step === "none" && s.showsBox(screen)) {
      boxSince ??= Date.now();
      if (Date.now() - boxSince >= w.arrivalMs)
        throw new StartFailed(
          `tmux: ${s.agent} shows its ${s.box} but the prompt did not arrive in ${s.arrivesIn} within ${Math.round(w.arrivalMs / 1000)}s`,
          screenTail(screen),
        );
    }
    await sleep(pollMs);
  }
}
