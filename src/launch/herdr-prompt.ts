// Sends the one-line prompt and confirms it in the transcript, never twice into one composer:
// with no client attached, real Herdr can leave the text unsent in Claude's composer, and
// sending it again appends to it (Claude then gets both as one turn). So before a re-send:
// Enter, and a fresh look at the transcript and the screen. Herdr's answers are hints: a
// success from `send-keys enter` may have submitted nothing (herdr #3313, #3730), a stall or a
// timeout may hide a prompt that arrived, `blocked` may come from prose with no dialog open
// (#4064). The transcript, or the manager's claim, decides.
import { iso } from "../util/time.js";
import { screenTail } from "./claude-screen.js";
import { projectDirOf, waitForArrival } from "./herdr-arrival.js";
import { holdsClaim } from "./herdr-claimed.js";
import { HerdrError, herdrJson, herdrText } from "./herdr-cli.js";
import { results } from "./herdr-schema.js";
import { visibleScreen } from "./herdr-screen.js";
import { type AgentStart, agentNow, passDialog, throwIfGivenUp } from "./herdr-start.js";
import { StartFailed } from "./start-failed.js";

export interface PromptTiming {
  /** `--timeout` of `agent prompt --wait`. */
  promptMs: number;
  /** How long each try waits for the prompt to show up in the transcript. */
  arrivalMs: number;
  /** Prompts sent before giving up. */
  tries: number;
}

export interface Arrival {
  seat: string;
  sinceMs: number;
  /** Decides the transcript folder's name: `managerTranscriptEnv` of the manager's env. */
  env: NodeJS.ProcessEnv;
  /** The program's state folder: a claim there since `sinceMs` proves the prompt arrived. */
  stateDir: string;
  /** The agent's own look for the prompt in its transcripts (DESIGN §19), when it has one. */
  arrived?: (prompt: string, sinceMs: number) => boolean;
}

/**
 * `herdr agent prompt NAME TEXT --wait --until working`: whether Herdr said delivered, or
 * `blocked`, or the stall or timeout it answered (which proves nothing either way).
 */
export async function agentPrompt(
  name: string,
  text: string,
  promptMs: number,
  env: NodeJS.ProcessEnv,
): Promise<string> {
  try {
    await herdrJson(
      {
        command: `herdr agent prompt ${name}`,
        args: [
          "agent",
          "prompt",
          name,
          text,
          "--wait",
          "--until",
          "working",
          "--timeout",
          String(promptMs),
        ],
        waitMs: promptMs,
        env,
      },
      results.agentPrompted,
    );
    return "herdr said delivered";
  } catch (err) {
    if (!(err instanceof HerdrError)) throw err;
    if (err.code === "agent_blocked") return "blocked";
    if (/^(agent_prompt_stalled|timeout)$/.test(err.code)) return err.code;
    throw err;
  }
}

function sendPrompt(s: AgentStart, prompt: string, t: PromptTiming): Promise<string> {
  return agentPrompt(s.name, prompt, t.promptMs, s.env);
}

function pressEnter(s: AgentStart): Promise<string> {
  return herdrText({
    command: `herdr agent send-keys ${s.name} enter`,
    args: ["agent", "send-keys", s.name, "enter"],
    env: s.env,
  });
}

/**
 * The prompt, past what Herdr's `blocked` means: `agent_blocked` is answered before any input
 * is written; a dialog on the screen is passed (or fails the start); with none there, the text
 * is typed into the pane (`pane send-text` has no agent checks), then Enter.
 */
async function deliver(
  s: AgentStart,
  prompt: string,
  t: PromptTiming,
): Promise<{ said: string; refused?: true }> {
  const said = await sendPrompt(s, prompt, t);
  if (said !== "blocked") return { said };
  if (await passDialog(s, "is"))
    return { said: "refused at a dialog, which was answered", refused: true };
  await herdrText({
    command: `herdr pane send-text ${s.pane}`,
    args: ["pane", "send-text", s.pane, prompt],
    env: s.env,
  });
  await pressEnter(s);
  return {
    said: "herdr said blocked with no dialog on the screen: typed into the pane, then Enter",
  };
}

/** Presses Enter to submit what may sit in the composer (a dialog first, which Enter answers). */
async function submitComposer(s: AgentStart): Promise<string> {
  const blocked = (await agentNow(s.name, s.env)).agent_status === "blocked";
  if (blocked && (await passDialog(s, "is"))) return "dialog answered";
  await pressEnter(s);
  return "enter";
}

/** Whether the prompt's text still shows on the screen (left in the composer). */
async function stillOnScreen(s: AgentStart, prompt: string): Promise<boolean> {
  const screen = await visibleScreen(s.pane, s.env);
  return screen?.includes(prompt.slice(0, 60)) === true;
}

/** Sends the prompt until the transcript shows it or the manager claims, at most `tries` sends. */
export async function promptUntilArrived(
  s: AgentStart,
  prompt: string,
  at: Arrival,
  t: PromptTiming,
): Promise<void> {
  const notes: string[] = [];
  const arrived = async () => {
    const how = await waitForArrival({
      seat: at.seat,
      cwd: s.root,
      prompt,
      sinceMs: at.sinceMs,
      timeoutMs: t.arrivalMs,
      env: at.env,
      otherwise: () => holdsClaim(at),
      ...(at.arrived ? { check: () => at.arrived?.(prompt, at.sinceMs) === true } : {}),
    });
    return how !== null;
  };
  let sends = 0;
  let stuck = false;
  for (let attempt = 1; sends < t.tries && attempt <= 2 * t.tries; attempt++) {
    throwIfGivenUp(s);
    if (attempt > 1) {
      // Herdr's ok for Enter proves nothing (#3313): the transcript and the composer decide
      // whether it submitted, before another copy is sent.
      const did = await submitComposer(s);
      if (await arrived()) return;
      stuck = did === "enter" && (await stillOnScreen(s, prompt));
      notes.push(stuck ? "enter: herdr said ok, the prompt still on the screen" : did);
      // Still in the composer after Enter: sending again would double it. Press Enter again.
      if (stuck) continue;
    }
    const sent = await deliver(s, prompt, t);
    sends++;
    notes.push(`send ${sends}: ${sent.said}`);
    if (sent.refused) continue;
    if (await arrived()) return;
  }
  const screen = await visibleScreen(s.pane, s.env);
  const why = stuck
    ? "; the prompt sits in the composer: Herdr answered Enter with success but it submitted nothing (herdr #3313)"
    : "";
  throw new StartFailed(
    `herdr: the prompt never reached agent ${s.name}: no user entry with it in the transcripts under ${projectDirOf(at.seat, s.root, at.env)} since ${iso(at.sinceMs)} (${notes.join("; ")})${why}`,
    screen ? screenTail(screen) : undefined,
  );
}
