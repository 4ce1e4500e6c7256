import { type ClaimState, readClaim, releaseClaimIf, sameProcess } from "../claim/claim.js";
import type { ProgramContext } from "../config/context.js";
import { RefusedError } from "../errors.js";
import { stampHeartbeat } from "../heartbeat/heartbeat.js";
import {
  gatherSaveFacts,
  type SaveOptions,
  type SaveResult,
  saveAnswer,
} from "../heartbeat/save.js";
import { appendEvent } from "../journal/journal.js";
import type { ProcessIdentity } from "../process/identity.js";
import { faultPoint } from "../util/fault-point.js";

export interface HandOverOptions extends SaveOptions {
  note: string;
}

function holderOf(state: ClaimState): string {
  if (!state.held) return "nobody holds the claim";
  if (!state.holder) return `the claim is unreadable (${state.problem})`;
  return `the claim is held by pid ${state.holder.pid} on ${state.holder.hostname} (${state.liveness})`;
}

function isHolder(state: ClaimState, me: ProcessIdentity): boolean {
  return state.held && state.holder !== null && sameProcess(state.holder, me);
}

/**
 * The manager's "my context is full, start a fresh one" (DESIGN §4): a save, then the
 * `hand_over` event, then the release. The event is journaled before the claim goes, so a tick
 * that finds no claim always finds the hand-over that explains it (a planned start).
 */
export async function performHandOver(
  program: ProgramContext,
  opts: HandOverOptions,
): Promise<SaveResult> {
  const before = readClaim(program.stateDir);
  if (!isHolder(before, opts.manager)) {
    throw new RefusedError(
      `${program.name}: only the claim holder may hand over; pid ${opts.manager.pid} is not it: ${holderOf(before)}`,
    );
  }
  const facts = await gatherSaveFacts(program, opts, (tokens) =>
    stampHeartbeat(program.stateDir, opts.manager, tokens, opts.now ?? Date.now()),
  );
  const now = opts.now ?? Date.now();
  appendEvent(
    program.stateDir,
    {
      type: "hand_over",
      pid: opts.manager.pid,
      start_time: opts.manager.start_time,
      context_tokens: facts.contextTokens,
      note: opts.note,
      progress: facts.progress,
      pushed: facts.pushed,
    },
    now,
  );
  faultPoint("hand-over.after-event");
  // The push may have taken a while: release only a claim that is still ours (compare-and-set).
  const out = releaseClaimIf(
    program.stateDir,
    (c) => isHolder(c, opts.manager),
    () => ({ type: "released", pid: opts.manager.pid, start_time: opts.manager.start_time }),
    { now },
  );
  faultPoint("hand-over.after-release");
  if (!out.released)
    facts.notices.push(
      `the claim was no longer ours to release: ${out.state ? holderOf(out.state) : out.busy.describe()}`,
    );
  return saveAnswer(program, facts, now);
}
