import type { ProgramContext } from "../config/context.js";
import { appendEvent, type JournalEvent, readEvents } from "../journal/journal.js";
import { replay } from "../journal/replay.js";
import { pauseUntil, RESUME, UNPAUSE } from "../lifecycle/answers.js";
import { undoHeld } from "../lifecycle/undo-state.js";
import { readToken } from "../page/ntfy.js";
import { machineId } from "../process/identity.js";
import { iso } from "../util/time.js";
import {
  type ControlMessage,
  type ControlTarget,
  pollControl,
  readControlState,
  writeControlState,
} from "./control-topic.js";
import { takeStreamed } from "./inbox.js";
import { handledIds, type Judgement, judgeCommand, usedTokens } from "./judge.js";
import { hostKey } from "./secret.js";
import { PHONE_PAUSE_MS, type Verb } from "./verbs.js";

// A pass's answers from the phone (DESIGN §8): the control topic's new messages, each judged
// (judge.ts) and carried out exactly as the CLI command would, journaled `by: "phone"`, or
// refused and journaled `remote_refused` with why. Runs under the pass's tick lock, so a token
// is never used twice by a timer tick and a watcher at once.

/** Commands judged in one pass at most; a flood beyond it is journaled as one count. */
export const MAX_PER_PASS = 20;

/** The control topic this program reads. */
export function controlTarget(program: ProgramContext): ControlTarget | null {
  const ntfy = program.config.page?.ntfy;
  if (!ntfy?.control_topic) return null;
  return { server: ntfy.server, topic: ntfy.control_topic };
}

/**
 * Carries out one accepted command through the CLI's own code; returns its event, or null
 * when there was nothing to do (the stand-down or pause already ended).
 */
function carryOut(
  program: ProgramContext,
  verb: Verb,
  extra: Record<string, unknown>,
  now: number,
): JournalEvent | null {
  switch (verb) {
    case "resume":
      return undoHeld(RESUME, program, undefined, extra, now)?.event ?? null;
    case "unpause":
      return undoHeld(UNPAUSE, program, undefined, extra, now)?.event ?? null;
    case "pause-2h":
      return pauseUntil(program, now + PHONE_PAUSE_MS, extra, now);
  }
}

/** Reads the control topic (the watcher's stream, else a poll) and answers what it holds. */
export async function answerPhone(program: ProgramContext, now: number): Promise<JournalEvent[]> {
  const target = controlTarget(program);
  if (!target) return [];
  const state = readControlState(program.stateDir, target);
  const out: JournalEvent[] = [];
  const journal = (event: { type: string; [field: string]: unknown }) => {
    const e = appendEvent(program.stateDir, event, now);
    out.push(e);
    return e;
  };
  let messages: ControlMessage[] | null = takeStreamed(program.root);
  if (messages === null) {
    try {
      const ntfy = program.config.page?.ntfy;
      messages = await pollControl(target, state.last_id, ntfy ? readToken(ntfy) : null);
    } catch (err) {
      const error = (err as Error).message;
      // Journaled once while it lasts: a topic that cannot be read turns the buttons off.
      if (error !== state.error) {
        journal({ type: "remote_poll_failed", topic: target.topic, error });
        writeControlState(program.stateDir, { ...state, error });
      }
      return out;
    }
  }
  if (messages.length > 0) answer(program, messages, now, journal, out);
  const last = messages.at(-1)?.id ?? state.last_id;
  if (last !== state.last_id || state.error !== null)
    writeControlState(program.stateDir, { ...state, last_id: last, error: null });
  return out;
}

function answer(
  program: ProgramContext,
  messages: ControlMessage[],
  now: number,
  journal: (event: { type: string; [field: string]: unknown }) => JournalEvent,
  out: JournalEvent[],
): void {
  let key: Buffer | null = null;
  try {
    key = hostKey({ create: false });
  } catch {
    // an unsafe key file verifies nothing: every command is refused as forged
  }
  const host = machineId();
  const events = readEvents(program.stateDir);
  const seen = { handled: handledIds(events), used: usedTokens(events) };
  let judged = 0;
  let skipped = 0;
  for (const m of messages) {
    const context = {
      program: program.name,
      host,
      key,
      journal: events,
      now,
      configInvalid: program.configInvalid !== undefined,
    };
    const j: Judgement = judgeCommand(m, context, seen);
    if (j.kind === "ignore") continue;
    if (++judged > MAX_PER_PASS) {
      skipped++;
      continue;
    }
    seen.handled.add(m.id);
    const about = { message_id: m.id, sent_at: iso(m.time * 1000) };
    if (j.kind === "refuse") {
      const { kind: _k, ...why } = j;
      events.push(journal({ type: "remote_refused", ...why, ...about }));
      continue;
    }
    // Nothing left to end (a person at a terminal was quicker): refused, the token unused.
    const spec = j.verb === "resume" ? RESUME : j.verb === "unpause" ? UNPAUSE : null;
    if (spec && !spec.held(replay(events))) {
      events.push(
        journal({
          type: "remote_refused",
          reason: "incident_closed",
          detail: j.verb === "resume" ? "not stood down any more" : "not paused any more",
          verb: j.verb,
          incident: j.incident.id,
          ...about,
        }),
      );
      continue;
    }
    // The token is spent before the act: a crash between them can never let it act twice.
    seen.used.add(j.digest);
    events.push(
      journal({
        type: "remote_accepted",
        by: "phone",
        verb: j.verb,
        incident: j.incident.id,
        token_sha256: j.digest,
        expires_at: iso(j.exp * 1000),
        ...about,
      }),
    );
    const done = carryOut(program, j.verb, { by: "phone", incident: j.incident.id }, now);
    if (done) {
      out.push(done);
      events.push(done);
    }
  }
  if (skipped > 0)
    journal({
      type: "remote_refused",
      reason: "too_many",
      detail: `${skipped} more commands in one read than the ${MAX_PER_PASS} answered; not read`,
      count: skipped,
    });
}
