// Sends the one-line prompt and confirms it in the transcript, never twice into one composer:
// with no client attached, real Herdr can leave the text unsent in Claude's composer, and
// sending it again appends to it (Claude then gets both as one turn). So before a re-send:
// Enter, and a fresh look at the transcript and the screen.
import { iso } from "../util/time.js";
import { projectDirOf, waitForArrival } from "./herdr-arrival.js";
import { HerdrError, herdrJson, herdrText } from "./herdr-cli.js";
import { results } from "./herdr-schema.js";
import { screenTail, visibleScreen } from "./herdr-screen.js";
import { type AgentStart, agentNow, passDialog } from "./herdr-start.js";
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
}

/** `agent prompt … --wait`: whether Herdr said delivered (a stall or timeout proves nothing). */
async function sendPrompt(s: AgentStart, prompt: string, t: PromptTiming): Promise<string> {
  try {
    await herdrJson(
      {
        command: `herdr agent prompt ${s.name}`,
        args: [
          "agent",
          "prompt",
          s.name,
          prompt,
          "--wait",
          "--until",
          "working",
          "--timeout",
          String(t.promptMs),
        ],
        waitMs: t.promptMs,
        env: s.env,
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

/** Presses Enter to submit what may sit in the composer; false while a dialog holds the agent. */
async function submitComposer(s: AgentStart): Promise<boolean> {
  if ((await agentNow(s.name, s.env)).agent_status === "blocked") return false;
  await herdrText({
    command: `herdr agent send-keys ${s.name} enter`,
    args: ["agent", "send-keys", s.name, "enter"],
    env: s.env,
  });
  return true;
}

/** Whether the prompt's text still shows on the screen (left in the composer). */
async function stillOnScreen(s: AgentStart, prompt: string): Promise<boolean> {
  const screen = await visibleScreen(s.pane, s.env);
  return screen?.includes(prompt.slice(0, 60)) === true;
}

/** Sends the prompt until the transcript shows it, at most `tries` sends. */
export async function promptUntilArrived(
  s: AgentStart,
  prompt: string,
  at: Arrival,
  t: PromptTiming,
): Promise<void> {
  const arrived = () => waitForArrival(at.seat, s.root, prompt, at.sinceMs, t.arrivalMs, at.env);
  const notes: string[] = [];
  let sends = 0;
  for (let attempt = 1; sends < t.tries && attempt <= 2 * t.tries; attempt++) {
    if (attempt > 1) {
      if (!(await submitComposer(s))) await passDialog(s, "is");
      else notes.push("enter pressed");
      if (await arrived()) return;
      // Still in the composer after Enter: sending again would double it. Press Enter again.
      if (await stillOnScreen(s, prompt)) continue;
    }
    const said = await sendPrompt(s, prompt, t);
    sends++;
    notes.push(`send ${sends}: ${said}`);
    if (said === "blocked") {
      await passDialog(s, "is");
      continue;
    }
    if (await arrived()) return;
  }
  const screen = await visibleScreen(s.pane, s.env);
  throw new StartFailed(
    `herdr: the prompt never reached agent ${s.name}: no user entry with it in the transcripts under ${projectDirOf(at.seat, s.root, at.env)} since ${iso(at.sinceMs)} (${notes.join("; ")})`,
    screen ? screenTail(screen) : undefined,
  );
}
