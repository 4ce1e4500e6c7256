import { existsSync, statSync } from "node:fs";
import { resolve } from "node:path";
import type { Agent } from "../agent/agent.js";
import { agentFor } from "../agent/index.js";
import { readClaim, sameProcess } from "../claim/claim.js";
import type { ProgramContext } from "../config/context.js";
import { appendEvent, readEvents } from "../journal/journal.js";
import { replay, STATE_EVENT_TYPES } from "../journal/replay.js";
import { type LeaseAnswer, leaseAnswer, readLocalLease } from "../lease/local.js";
import type { ProcessIdentity } from "../process/identity.js";
import { appendReadings } from "../usage/readings.js";
import { seatOf } from "../usage/seat.js";
import type { TailState } from "../usage/transcript-tail.js";
import { faultPoint } from "../util/fault-point.js";
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
  /** A program with a lease (DESIGN §15): whether this host holds it, its epoch, its holder. */
  lease?: LeaseAnswer;
  notices: string[];
}

export interface SaveOptions {
  manager: ProcessIdentity;
  transcript?: string;
  progress?: string;
  now?: number;
  /** Where the manager runs (its transcript folder is named after it); default process.cwd(). */
  cwd?: string;
}

/** What save and hand-over gather before they stamp. */
export interface SaveFacts {
  contextTokens: number | null;
  transcript: string | null;
  progress: string | null;
  pushed: boolean | null;
  notices: string[];
  /**
   * The manager session's context window as its agent reported it (Claude: the statusline's
   * record of the session; Codex: the rollout's `model_context_window`), when known.
   */
  contextWindow: number | null;
  /** The window assumed when the agent never said (200000 for Claude Code: 150000 at auto). */
  defaultWindow?: number;
}

/** Claude Code's window when the statusline never said (DESIGN §4: 200000 → 150000 at auto). */
const DEFAULT_WINDOW = 200_000;
/** The agents compact by themselves before the window is full: hand over at three quarters. */
const AUTO_SHARE = 0.75;

/** The hand-over threshold in force (DESIGN §4): a number wins; "auto" is 75 % of the window. */
export function handOverThreshold(
  setting: number | "auto",
  contextWindow: number | null,
  defaultWindow = DEFAULT_WINDOW,
): number {
  if (setting !== "auto") return setting;
  const window = contextWindow !== null && contextWindow > 0 ? contextWindow : defaultWindow;
  return Math.floor(window * AUTO_SHARE);
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** How long a save waits for its own call's entry (Claude Code flushes within ~0.1 s). */
const OWN_CALL_WAIT_MS = 1000;

/**
 * Claude Code 2.1.328 runs a tool as soon as its call has streamed in and writes the call's
 * entry (and the last call's result before it) a moment later: a save that reads at once, on a
 * fast machine, finds the transcript still ending at the request or at the last call (`claim`),
 * and the context of the turn before. A manager's save finds its own call at the end; a save
 * by hand mid-turn, or through a script, waits out the bound and reads what there is.
 */
async function ownCallWritten(path: string, agent: Agent): Promise<void> {
  const end = performance.now() + OWN_CALL_WAIT_MS; // a clock step must not stretch it
  const ready = () => ownCallAtEnd(agent.tail(path), agent.shellTool) && agent.contextReady(path);
  while (!ready() && performance.now() < end) await new Promise((r) => setTimeout(r, 20));
}

/**
 * Whether a transcript's end can be the save's own turn: a Bash call that runs sheepdog save or
 * hand-over, a reply still being written, or a turn that ended (a save by hand); not a request
 * nor any other call (a Read, a git command) whose result is not written yet.
 */
function ownCallAtEnd(tail: TailState, shellTool: string): boolean {
  if (tail.state === "requesting") return false;
  if (tail.state !== "tool_open") return true;
  return (
    tail.tool.name === shellTool &&
    /\bsheepdog(?:\.cjs)?\s+(?:save|hand-over)\b/.test(tail.tool.command ?? "")
  );
}

/** When this manager claimed the program (epoch ms), if it holds the claim. */
function claimedByMe(program: ProgramContext, me: ProcessIdentity): number | undefined {
  const c = readClaim(program.stateDir);
  if (!c.held || !c.holder || !sameProcess(c.holder, me)) return undefined;
  const at = Date.parse(c.holder.claimed_at);
  return Number.isNaN(at) ? undefined : at;
}

interface ContextFacts {
  transcript: string | null;
  contextTokens: number | null;
  contextWindow: number | null;
}

/** The manager's transcript and its context size (DESIGN §4). Missing is a notice, never an error. */
async function contextOf(
  program: ProgramContext,
  agent: Agent,
  opts: SaveOptions,
  notices: string[],
): Promise<ContextFacts> {
  let transcript: string | null = null;
  const manager = { pid: opts.manager.pid, start_time: opts.manager.start_time };
  const windowOnly = () => {
    try {
      return agent.context(null, manager).window;
    } catch {
      return null; // no session map: the default window
    }
  };
  try {
    if (opts.transcript !== undefined) {
      transcript = resolve(opts.transcript);
    } else {
      const since = claimedByMe(program, opts.manager);
      transcript = agent.findTranscript(seatOf(program.config), {
        cwd: opts.cwd ?? process.cwd(),
        root: program.root,
        manager,
        ...(since !== undefined ? { since } : {}),
      });
    }
  } catch (err) {
    notices.push(`cannot look for the transcript: ${message(err)}`);
  }
  if (transcript === null) {
    if (opts.transcript === undefined)
      notices.push(
        `no transcript found for pid ${opts.manager.pid}: context size unknown (pass --transcript PATH)`,
      );
    return { transcript: null, contextTokens: null, contextWindow: windowOnly() };
  }
  if (!existsSync(transcript)) {
    notices.push(`transcript ${transcript} does not exist: context size unknown`);
    return { transcript, contextTokens: null, contextWindow: windowOnly() };
  }
  // A FIFO or a device is refused before it is opened: opening one blocks (DESIGN §18).
  if (!statSync(transcript).isFile()) {
    notices.push(
      `transcript ${transcript} is not a regular file (a FIFO, a device or a folder): not read; context size unknown`,
    );
    return { transcript, contextTokens: null, contextWindow: windowOnly() };
  }
  let read: { tokens: number | null; window: number | null };
  try {
    await ownCallWritten(transcript, agent);
    read = agent.context(transcript, manager);
  } catch (err) {
    notices.push(`cannot read transcript ${transcript}: ${message(err)}`);
    return { transcript, contextTokens: null, contextWindow: windowOnly() };
  }
  if (read.tokens === null)
    notices.push(`transcript ${transcript} has no assistant message with token usage yet`);
  recordReadings(program, agent, transcript, notices);
  return { transcript, contextTokens: read.tokens, contextWindow: read.window };
}

/**
 * The usage readings the transcript carries (a Codex rollout's rate_limits: Codex has no
 * statusline), recorded for the seat as they are read (DESIGN §19). Never fails the save.
 */
function recordReadings(
  program: ProgramContext,
  agent: Agent,
  transcript: string,
  notices: string[],
): void {
  try {
    const readings = agent.readings(transcript);
    if (readings.length > 0) appendReadings(seatOf(program.config), readings);
  } catch (err) {
    notices.push(`cannot record the usage readings: ${message(err)}`);
  }
}

/**
 * Gathers what a save reports: context size, progress fingerprint, and the ledger push.
 * Git and glob code is loaded only when the program configures a ledger or progress paths,
 * so a plain save stays fast. Never throws for a missing transcript or a failed push.
 */
export async function gatherSaveFacts(
  program: ProgramContext,
  opts: SaveOptions,
  /** Called once the context size is known and before the ledger push (which may be slow). */
  beforePush?: (contextTokens: number | null) => void,
): Promise<SaveFacts> {
  const now = opts.now ?? Date.now();
  const notices: string[] = [];
  // DESIGN §16: a broken program.json never makes a save fail; it is said, once per save.
  if (program.configInvalid)
    notices.push(
      `${program.configInvalid.file} is invalid (${program.configInvalid.error.split("\n")[0]}); the watchdog goes on with the last valid config: fix it, then run sheepdog check`,
    );
  const agent = agentFor(program.config);
  const { transcript, contextTokens, contextWindow } = await contextOf(
    program,
    agent,
    opts,
    notices,
  );

  let progress: string | null = opts.progress ?? null;
  if (progress === null && program.config.progress) {
    try {
      const { progressFingerprint } = await import("../progress/fingerprint.js");
      progress = progressFingerprint(program.root, program.config.progress.paths);
      if (progress === null)
        notices.push(
          `progress.paths match no file under ${program.root}: no fingerprint this save (check the patterns)`,
        );
    } catch (err) {
      notices.push(`cannot compute the progress fingerprint: ${message(err)}`);
    }
  }

  beforePush?.(contextTokens);
  let pushed: boolean | null = null;
  if (program.config.ledger) {
    try {
      const { commitAndPushLedger } = await import("../ledger/ledger.js");
      const ledger = await commitAndPushLedger(program.config.ledger, {
        root: program.root,
        program: program.name,
        now,
      });
      pushed = ledger.pushed;
      notices.push(...ledger.notices);
    } catch (err) {
      pushed = false;
      notices.push(`ledger: ${message(err)}`);
    }
  }
  return {
    contextTokens,
    transcript,
    progress,
    pushed,
    notices,
    contextWindow,
    defaultWindow: agent.defaultWindow,
  };
}

/** The answer save and hand-over print: the facts plus the watchdog's word (pause, stand-down). */
export function saveAnswer(program: ProgramContext, facts: SaveFacts, now: number): SaveResult {
  const notices = [...facts.notices];
  // Only the events replay reads: a month's saves are most of a journal, and not checked here.
  const state = replay(readEvents(program.stateDir, STATE_EVENT_TYPES));
  const pause =
    state.paused && Date.parse(String(state.paused.until)) > now
      ? { until: String(state.paused.until), reason: String(state.paused.reason ?? "") }
      : null;
  if (pause) notices.push(`the program is paused until ${pause.until}: save and stop`);
  const stoodDown = state.stoodDown ? { reason: String(state.stoodDown.reason ?? "") } : null;
  const threshold = handOverThreshold(
    program.policy.handOverTokens,
    facts.contextWindow,
    facts.defaultWindow,
  );
  // A program staged on several hosts (DESIGN §15): whether this host still holds it, from
  // lease.json (no git: a save must stay fast). Not held: the manager must save and stop.
  const lease = program.config.lease ? leaseAnswer(readLocalLease(program.stateDir), now) : null;
  if (lease && !lease.held_here)
    notices.push(
      `this host does not hold the program's lease${lease.host ? ` (${lease.host} does, epoch ${lease.epoch})` : ""}: save and stop`,
    );
  return {
    program: program.name,
    saved_at: iso(now),
    pushed: facts.pushed,
    context_tokens: facts.contextTokens,
    hand_over: facts.contextTokens !== null && facts.contextTokens >= threshold,
    hand_over_at: threshold,
    transcript: facts.transcript,
    pause,
    stood_down: stoodDown,
    ...(lease ? { lease } : {}),
    notices,
  };
}

/**
 * Stamps the heartbeat for the calling manager and gathers the answer. Never refuses: a
 * missing transcript or a failed push is reported in `notices`, and the stamp still happens —
 * except over the heartbeat of another live process that holds the claim (DESIGN §4: the
 * heartbeat counts only as the holder's; overwriting it would make a healthy holder look
 * silent). The save is journaled either way.
 */
export async function performSave(program: ProgramContext, opts: SaveOptions): Promise<SaveResult> {
  const me = opts.manager;
  const claim = readClaim(program.stateDir);
  const holder = claim.held ? claim.holder : null;
  const othersLiveClaim =
    claim.held &&
    holder !== null &&
    claim.liveness === "alive" &&
    !(holder.pid === me.pid && holder.start_time === me.start_time);
  // The heartbeat is stamped before the push: a save cut short by a hung remote still counts.
  const facts = await gatherSaveFacts(
    program,
    opts,
    othersLiveClaim
      ? undefined
      : (tokens) => stampHeartbeat(program.stateDir, me, tokens, opts.now ?? Date.now()),
  );
  const now = opts.now ?? Date.now();

  if (!claim.held)
    facts.notices.push("this manager does not hold the claim: run sheepdog claim acquire");
  else if (othersLiveClaim && holder) {
    facts.notices.push(
      `the heartbeat was not stamped because pid ${holder.pid} holds the claim (this is pid ${me.pid})`,
    );
  } else if (holder && holder.pid !== me.pid) {
    facts.notices.push(
      `the claim is held by pid ${holder.pid}, not by this manager (pid ${me.pid})`,
    );
  }

  faultPoint("save.before-journal");
  appendEvent(
    program.stateDir,
    {
      type: "saved",
      pid: me.pid,
      ...(me.start_time ? { start_time: me.start_time } : {}),
      context_tokens: facts.contextTokens,
      progress: facts.progress,
      pushed: facts.pushed,
    },
    now,
  );
  return saveAnswer(program, facts, now);
}
