import { join } from "node:path";
import * as z from "zod/mini";
import { readClaim } from "../../claim/claim.js";
import type { ProgramContext } from "../../config/context.js";
import { readHeartbeat } from "../../heartbeat/heartbeat.js";
import { type JournalEvent, readJournal } from "../../journal/journal.js";
import { type History, history, replay, type StartRecord } from "../../journal/replay.js";
import { isZombie, livenessOf, machineId, processInfo } from "../../process/identity.js";
import { seatLimit } from "../../usage/limit.js";
import { seatOf } from "../../usage/seat.js";
import { readJsonFile } from "../../util/json-file.js";
import { monoNow } from "../../util/mono.js";
import { iso } from "../../util/time.js";
import { readTickLock, type TickLockState } from "../pass/tick-lock.js";
import { type Decision, decide, isHoldersBeat, isNeeds } from "../rules/decide.js";
import { startOfHolder } from "../rules/holder-start.js";
import type { ClaimFacts, FactName, Facts, Gap } from "./facts.js";
import { seatWithRefusal } from "./refusal.js";

export const LAST_TICK = "last-tick.json";

/** last-tick.json: what the last tick saw and decided. */
export interface LastTick {
  at: string;
  decision: string;
  reason: string;
  /** The sleep/clock gaps that can still matter (DESIGN §6), oldest first. */
  gaps?: Gap[];
  /** The cadence (ms) the tick that wrote it ran at (DESIGN §6). */
  cadence_ms?: number;
  facts?: Facts;
}

// Validated with zod (DESIGN §1): a hand edit or an older version may lack a field, and what
// is malformed is dropped field by field rather than taken on trust.
const gapSchema = z.object({ from: z.string(), to: z.string() });
const lastTickSchema = z.object({
  at: z.string(),
  decision: z._default(z.string(), ""),
  reason: z._default(z.string(), ""),
  gaps: z.optional(z.unknown()),
  cadence_ms: z.optional(z.unknown()),
  facts: z.optional(z.unknown()),
});

export function readLastTick(stateDir: string): LastTick | null {
  return readJsonFile(join(stateDir, LAST_TICK), lastTickSchema) as LastTick | null;
}

/** The well-formed gaps of a last-tick.json (a hand edit or an older version may have none). */
export function gapsOf(last: LastTick | null): Gap[] {
  if (!last || !Array.isArray(last.gaps)) return [];
  return last.gaps.flatMap((g) => {
    const ok = gapSchema.safeParse(g);
    return ok.success ? [ok.data] : [];
  });
}

/** The last tick's cadence when it recorded a sane one (a positive number of ms). */
export function cadenceMsOf(last: LastTick | null): number | undefined {
  const c = last?.cadence_ms;
  return typeof c === "number" && Number.isFinite(c) && c > 0 ? c : undefined;
}

/** The time of a person's last unpause, when it has one: what is older does not limit. */
function unpauseOverride(e: JournalEvent | null): number | undefined {
  const at = e ? Date.parse(e.at) : Number.NaN;
  return Number.isNaN(at) ? undefined : at;
}

/** The last start, when it may still claim and has something to look at (a pid or a pane). */
function pendingStart(hist: History): StartRecord | null {
  const s = hist.last_start;
  if (!s || hist.claimed_since_last_start || s.intent || s.cut_short || s.stopped) return null;
  const pane = s.pane !== undefined || s.window !== undefined || s.agent !== undefined;
  return pane || s.pid !== undefined ? s : null;
}

/** Rule 12: whether the last start's recorded process still runs, when it never claimed. */
function lastStartProcess(hist: History): Facts["last_start_process"] {
  const s = hist.last_start;
  if (!s || hist.claimed_since_last_start || s.pid === undefined) return undefined;
  // Gone before its start was recorded (DESIGN §16): dead, whatever the launcher.
  if (s.exited === true) return "dead";
  if (s.start_time === undefined) {
    // An older start recorded no start time: gone or a zombie is dead; a live pid, unknown.
    const info = processInfo(s.pid);
    return !info || isZombie(info) ? "dead" : undefined;
  }
  const live = livenessOf({ pid: s.pid, start_time: s.start_time, machine_id: machineId() });
  return live === "alive" ? "alive" : "dead";
}

const text = (v: unknown): string => (typeof v === "string" ? v : "");

/**
 * The holder's own latest save (`saved` or `hand_over`) since it claimed, from the journal: what
 * its heartbeat says when another process saved over heartbeat.json. An event's pid must be the
 * holder's, and its start time too when it has one.
 */
function holdersLastSave(
  events: readonly JournalEvent[],
  claim: { pid: number; start_time: string; claimed_at: string },
): Facts["heartbeat"] {
  const since = Date.parse(claim.claimed_at);
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i] as JournalEvent;
    if (Date.parse(e.at) < since) break;
    if (e.type !== "saved" && e.type !== "hand_over") continue;
    if (e.pid !== claim.pid) continue;
    if (typeof e.start_time === "string" && e.start_time !== claim.start_time) continue;
    return {
      at: e.at,
      pid: claim.pid,
      start_time: claim.start_time,
      context_tokens: typeof e.context_tokens === "number" ? e.context_tokens : null,
      source: "journal",
    };
  }
  return null;
}

/** The claim as facts: none, unreadable, or its holder with its liveness. */
function claimFactsOf(stateDir: string): ClaimFacts {
  const c = readClaim(stateDir);
  if (!c.held) return { state: "none" };
  if (!c.holder) return { state: "unreadable", problem: c.problem };
  const h = c.holder;
  return {
    state: c.liveness,
    pid: h.pid,
    start_time: h.start_time,
    machine_id: h.machine_id,
    hostname: h.hostname,
    claimed_at: h.claimed_at,
  };
}

/** The merge lock, read (git) only when it can matter. */
async function mergeLockFacts(
  program: ProgramContext,
  cfg: NonNullable<ProgramContext["config"]["merge_lock"]>,
  now: number,
): Promise<Facts["merge_lock"]> {
  const { readMergeLock } = await import("../../merge-lock/lock.js");
  try {
    return await readMergeLock(cfg, { root: program.root, now });
  } catch (err) {
    // A merge needs the remote: where the lock cannot be read, no merge is in flight to protect,
    // and failing the tick would leave a stuck manager in place for as long as the outage lasts.
    return { held: false, error: (err as Error).message.split("\n")[0] ?? "unreadable" };
  }
}

/**
 * Reads what the rules need about one program; changes nothing. `lock` is the tick lock as
 * this tick found it (a live holder is rule 0). The manager's transcript and the merge lock
 * are left `unread`: decide asks for them when a rule reaches them (see judge()).
 */
export async function gather(
  program: ProgramContext,
  now: number,
  lock: TickLockState = readTickLock(program.stateDir, program.policy.tickDeadline, now),
): Promise<Facts> {
  const journal = readJournal(program.stateDir);
  const events: JournalEvent[] = journal.events;
  const state = replay(events);
  const claim = claimFactsOf(program.stateDir);
  const seat = seatOf(program.config);
  const p = state.paused;
  const hist = history(events, Math.max(10, program.policy.noProgressHandOvers));
  const override = unpauseOverride(state.unpausedByPerson);
  const limit = seatLimit(seat, program.policy.pauseAtPercent, now, process.env, [], override);
  const last = readLastTick(program.stateDir);
  const lastCadence = cadenceMsOf(last);
  let heartbeat: Facts["heartbeat"] = readHeartbeat(program.stateDir);
  if ("claimed_at" in claim && !isHoldersBeat(heartbeat, claim))
    heartbeat = holdersLastSave(events, claim) ?? heartbeat;
  // The monotonic clock at the caller's `now` (status and tests may pass one of their own).
  const mono = monoNow();
  const facts: Facts = {
    program: program.name,
    now: iso(now),
    now_mono: { ...mono, mono_ms: mono.mono_ms + (now - Date.now()) },
    tick_lock:
      lock.held && lock.live
        ? { held: true, pid: lock.holder?.pid ?? null, at: lock.holder?.at ?? null }
        : { held: false },
    last_tick_at: last?.at ?? null,
    ...(program.configInvalid
      ? { config_invalid: { file: program.configInvalid.file, error: program.configInvalid.error } }
      : {}),
    ...(override !== undefined ? { unpaused_by_person_at: iso(override) } : {}),
    ...(lastCadence !== undefined ? { last_tick_cadence_ms: lastCadence } : {}),
    ...(journal.skipped.lines > 0 ? { journal_skipped: journal.skipped } : {}),
    gaps: gapsOf(last),
    finished: state.finished
      ? { at: state.finished.at, note: text(state.finished.note) || null }
      : null,
    stood_down: state.stoodDown
      ? { at: state.stoodDown.at, reason: text(state.stoodDown.reason) }
      : null,
    paused: p
      ? {
          at: p.at,
          until: text(p.until),
          reason: text(p.reason),
          window: typeof p.window === "string" ? p.window : null,
        }
      : null,
    seat: {
      seat,
      limited: limit.limited,
      until: limit.until,
      reason: limit.reason,
      window: limit.window,
    },
    claim,
    heartbeat,
    merge_lock: null,
    history: hist,
    unread: [
      "seat_refusal",
      ...(program.config.merge_lock ? (["merge_lock"] as const) : []),
      // A live holder's activity costs a process walk and a CPU sample: read when rule 7 asks.
      ...(claim.state === "alive" ? (["activity"] as const) : []),
      // A start not yet claimed: its screen and hook record, read when rule 12 asks.
      ...(pendingStart(hist) ? (["start_held"] as const) : []),
    ],
  };
  const startProcess = lastStartProcess(hist);
  if (startProcess) facts.last_start_process = startProcess;
  return facts;
}

/** Reads a fact decide asked for into `facts` (and marks it read). */
async function readFact(
  program: ProgramContext,
  facts: Facts,
  fact: FactName,
  now: number,
): Promise<void> {
  if (fact === "seat_refusal") {
    const { limit, refusal, readings } = seatWithRefusal(
      program,
      facts.seat.seat,
      facts.claim,
      facts.history,
      now,
      facts.unpaused_by_person_at ? Date.parse(facts.unpaused_by_person_at) : undefined,
    );
    facts.seat = {
      seat: facts.seat.seat,
      limited: limit.limited,
      until: limit.until,
      reason: limit.reason,
      window: limit.window,
      ...(refusal ? { refusal } : {}),
      ...(readings ? { readings } : {}),
    };
  } else if (fact === "activity") {
    if (facts.claim.state === "alive") {
      const { readActivity } = await import("./activity-read.js");
      const { spellEvent } = await import("../rules/activity-rule.js");
      const nudged = spellEvent(facts, facts.claim, "nudged");
      facts.activity = await readActivity(
        program,
        {
          pid: facts.claim.pid,
          start_time: facts.claim.start_time,
          claimed_at: facts.claim.claimed_at,
        },
        now,
        nudged ? Date.parse(nudged.at) : null,
        startOfHolder(facts.history.last_start, facts.claim),
      );
    }
  } else if (fact === "start_held") {
    const start = pendingStart(facts.history);
    if (start) {
      const { readHeldStart } = await import("./held-start-read.js");
      facts.start_held = await readHeldStart(program, start);
    }
  } else if (program.config.merge_lock) {
    facts.merge_lock = await mergeLockFacts(program, program.config.merge_lock, now);
  }
  const unread = (facts.unread ?? []).filter((f) => f !== fact);
  if (unread.length > 0) facts.unread = unread;
  else delete facts.unread;
}

/**
 * decide, reading the facts it asks for as it reaches the rules that use them: the rule order
 * lives only in decide, and a tick reads a transcript or a remote only when a rule needs it.
 */
export async function judge(program: ProgramContext, facts: Facts, now: number): Promise<Decision> {
  for (;;) {
    const d = decide(facts, program.policy);
    if (!isNeeds(d)) return d;
    for (const fact of d.needs) await readFact(program, facts, fact, now);
  }
}
