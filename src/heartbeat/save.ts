import { readClaim } from "../claim/claim.js";
import type { ProgramContext } from "../config/context.js";
import { appendEvent, readEvents } from "../journal/journal.js";
import { replay } from "../journal/replay.js";
import type { ProcessIdentity } from "../process/identity.js";
import { iso } from "../util/time.js";
import { stampHeartbeat } from "./heartbeat.js";

/** The JSON object `save` and `hand-over` print (DESIGN §4). */
export interface SaveResult {
  program: string;
  saved_at: string;
  pushed: boolean | null;
  context_tokens: number | null;
  hand_over: boolean;
  hand_over_at: number;
  transcript: string | null;
  pause: null | { until: string; reason: string };
  stood_down: null | { reason: string };
  notices: string[];
}

export interface SaveOptions {
  manager: ProcessIdentity;
  transcript?: string;
  progress?: string;
  now?: number;
}

/**
 * Stamps the heartbeat for the calling manager and gathers the answer. Never refuses: a
 * missing transcript or a failed push is reported in `notices`, and the stamp still happens.
 */
export async function performSave(program: ProgramContext, opts: SaveOptions): Promise<SaveResult> {
  const now = opts.now ?? Date.now();
  const notices: string[] = [];
  const contextTokens: number | null = null;
  const transcript: string | null = opts.transcript ?? null;
  const pushed: boolean | null = null;
  const progress = opts.progress ?? null;

  const claim = readClaim(program.stateDir);
  if (!claim.held) notices.push("this manager does not hold the claim: run sheepdog claim acquire");
  else if (claim.holder && claim.holder.pid !== opts.manager.pid) {
    notices.push(
      `the claim is held by pid ${claim.holder.pid}, not by this manager (pid ${opts.manager.pid})`,
    );
  }

  stampHeartbeat(program.stateDir, opts.manager, contextTokens, now);
  appendEvent(
    program.stateDir,
    { type: "saved", pid: opts.manager.pid, context_tokens: contextTokens, progress, pushed },
    now,
  );

  const state = replay(readEvents(program.stateDir));
  const pause =
    state.paused && Date.parse(String(state.paused.until)) > now
      ? { until: String(state.paused.until), reason: String(state.paused.reason ?? "") }
      : null;
  if (pause) notices.push(`the program is paused until ${pause.until}: save and stop`);
  const stoodDown = state.stoodDown ? { reason: String(state.stoodDown.reason ?? "") } : null;

  return {
    program: program.name,
    saved_at: iso(now),
    pushed,
    context_tokens: contextTokens,
    hand_over: contextTokens !== null && contextTokens >= program.policy.handOverTokens,
    hand_over_at: program.policy.handOverTokens,
    transcript,
    pause,
    stood_down: stoodDown,
    notices,
  };
}
