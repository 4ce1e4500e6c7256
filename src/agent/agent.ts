// The agent seam (DESIGN §19): everything the watchdog, save and the launchers ask of the agent a
// manager runs, and nothing else. The claim, the heartbeat, the rules, the journal and the
// lease are agent-neutral; only these readings differ. One implementation per agent
// (src/agent/claude/, src/agent/codex/), chosen once from `manager.agent` (src/agent/index.ts).
// A third agent is one more implementation here and one more entry in each per-agent table:
// src/agent/kinds.ts (load-time facts, launch defaults), src/launch/agent-start.ts (the start's
// screen watch), src/launch/agent-screen.ts (a pane's dialog, for the nudge and a held start)
// and src/doctor/agent-checks.ts; each is a Record over AgentKind, so the
// compiler names any that is missing.
import type { NewReading } from "../usage/readings.js";
import type { Refusal } from "../usage/transcript.js";
import type { TailState } from "../usage/transcript-tail.js";
import type { AgentFacts, AgentKind } from "./kinds.js";

/** A manager process, by pid and exact start time. */
export interface ManagerProcess {
  pid: number;
  start_time: string;
}

/** What locates a manager's transcript. */
export interface TranscriptQuery {
  /** The manager's working directory (its process's), else the program root. */
  cwd: string;
  /** The program root. */
  root: string;
  /** The manager itself: its session as a hook or the statusline recorded it. */
  manager?: ManagerProcess;
  /** Epoch ms: a transcript not written since does not count (the claim, the start). */
  since?: number;
  /** The environment that names the transcript's folder (the manager's own, for Claude). */
  env?: NodeJS.ProcessEnv;
}

/** The context a transcript's end stands for, and the window it fills. */
export interface ContextReading {
  tokens: number | null;
  /** The session's context window as the agent reported it; null when it never said. */
  window: number | null;
}

export interface Agent extends AgentFacts {
  kind: AgentKind;
  /** The seat (the sign-in whose limits every program on it shares): `usage.seat`, else the agent's config folder. */
  seat(config: AgentConfig, env?: NodeJS.ProcessEnv): string;
  /** The manager's transcript, or null when none is found. */
  findTranscript(seat: string, q: TranscriptQuery): string | null;
  /**
   * Context tokens at the transcript's end, and the window (Claude's window is the session's,
   * known without a transcript).
   */
  context(transcript: string | null, manager?: ManagerProcess): ContextReading;
  /** A usage-limit refusal that ended the newest turn, or null. */
  refusal(transcript: string): Refusal | null;
  /** Usage readings the transcript carries for the seat (none for Claude: its statusline records them). */
  readings(transcript: string): NewReading[];
  /** Where the newest turn stands. */
  tail(transcript: string): TailState;
  /** The name its shell tool has in the transcript (`save` waits for its own call). */
  shellTool: string;
  /**
   * Whether the context at the transcript's end is the newest response's (Codex writes a
   * response's usage a moment after its call): `save` waits for it, as for its own call.
   */
  contextReady(transcript: string): boolean;
  /** The session a transcript belongs to (its hooks are recorded under it). */
  sessionOf(transcript: string): string | null;
  /** When a side transcript of the session last grew (Claude's sub-agents), epoch ms. */
  sideGrewAt(transcript: string): number | null;
}

/** The parts of program.json an agent's seat is named by. */
export interface AgentConfig {
  manager: { env: Record<string, string> };
  usage: { seat?: string };
}
