import type { ProgramContext } from "../config/context.js";
import type { LauncherKind } from "../config/schema.js";
import { identityOf } from "../process/identity.js";

/** What a start asks a launcher for. */
export interface LaunchRequest {
  program: ProgramContext;
  /** Why the manager is started, as said in the prompt and the journal. */
  reason: string;
  /** The one-line prompt with every placeholder filled. */
  prompt: string;
  /**
   * When the launch began (epoch ms), as its intent journaled it (`launch_began`): a claim
   * taken since is this start's.
   */
  launchBegan: number;
  /** The pass's (watchdog/pass/supervisor.ts): once it is given up, a start's watch stops. */
  signal?: AbortSignal;
}

/**
 * What a start launched, recorded in `manager_started` so a start that never claimed can be
 * stopped before the next one (by exact pid + start time, or by the pane/window it made).
 */
export interface Launched {
  launcher: LauncherKind;
  pid?: number;
  start_time?: string;
  /**
   * The process was already gone (or a zombie) when the start was recorded: it died at once,
   * so rule 12 judges it dead instead of waiting claim_grace for it (DESIGN §16).
   */
  exited?: true;
  /** tmux pane id (`%12`) or Herdr pane id. */
  pane?: string;
  /** tmux: `session:window` target; herdr: the tab id. */
  window?: string;
  /** herdr: the agent name. */
  agent?: string;
  /** herdr: the workspace sheepdog made for the program (reused only by its id). */
  workspace?: string;
  /** herdr: the transcript Herdr's Claude integration reported (`agent_session`). */
  transcript?: string;
  /** Under systemd: the transient scope the manager (or the tmux server) runs in. */
  unit?: string;
}

export interface Launcher {
  start(req: LaunchRequest): Promise<Launched>;
  /** Closes the pane/window a start made (never by name; the pid is stopped separately). */
  close(program: ProgramContext, launched: Launched): Promise<void>;
  /** The last screen of the pane, for evidence; null where there is no screen (command). */
  screen(program: ProgramContext, launched: Launched): Promise<string | null>;
  /**
   * Types one line into the manager's pane and submits it (DESIGN §14's nudge); says how, or
   * null when the pane is no longer the one the start made. Absent: no pane (command).
   */
  nudge?(program: ProgramContext, launched: Launched, text: string): Promise<string | null>;
}

/** Placeholders a launcher fills: `{prompt}`, `{reason}`, `{program}`, `{root}`. */
export interface PromptVars {
  prompt: string;
  reason: string;
  program: string;
  root: string;
}

export function fillPlaceholders(text: string, vars: PromptVars): string {
  return text.replace(/\{(prompt|reason|program|root)\}/g, (_, k: keyof PromptVars) => vars[k]);
}

/** What a start records of the process it made: its start time, or that it is already gone. */
export function startedProcess(pid: number): { start_time: string } | { exited: true } {
  const id = identityOf(pid);
  return id ? { start_time: id.start_time } : { exited: true };
}
