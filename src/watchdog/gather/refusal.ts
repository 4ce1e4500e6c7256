// Refusal records feed the seat (DESIGN §5): a usage-limit refusal at the end of the manager's
// transcript is evidence about the whole seat, recorded as a 100 % reading so every program on
// the seat pauses alike. One tail read of one transcript per tick, and only when there is a
// manager of this program to read. An agent with no statusline (Codex, DESIGN §19) carries its
// usage readings in the same transcript: they are judged with the seat's, and recorded.
import { agentFor } from "../../agent/index.js";
import type { ProgramContext } from "../../config/context.js";
import type { History } from "../../journal/replay.js";
import { cwdOf, livenessOf, machineId } from "../../process/identity.js";
import {
  recordedRefusal,
  recordRefusalReading,
  refusalReading,
  type SeatLimit,
  seatLimit,
} from "../../usage/limit.js";
import {
  appendReadings,
  type NewReading,
  type Reading,
  readReadings,
} from "../../usage/readings.js";
import type { Refusal } from "../../usage/refusal.js";
import { seatOf } from "../../usage/seat.js";
import { managerTranscriptEnv } from "../../usage/transcript.js";
import { iso } from "../../util/time.js";
import { startOfHolder } from "../rules/holder-start.js";
import type { ClaimFacts, SeatReadings, SeatRefusal } from "./facts.js";

/** The manager whose transcript may end in a refusal, and the time a refusal must not predate. */
interface Subject {
  manager?: { pid: number; start_time: string };
  /** Whether `pid` is still that process (only then is its working directory its own). */
  alive: boolean;
  /** Its claim time, or its start when the start record is older (epoch ms). */
  since: number;
}

/**
 * The claim holder (alive or dead: a manager that hit the limit often exits), else the last
 * start that never claimed. Never a claim from another machine, nor an unreadable one.
 */
function subjectOf(claim: ClaimFacts, history: History): Subject | null {
  const start = history.last_start;
  if (claim.state === "alive" || claim.state === "dead" || claim.state === "reused") {
    let since = Date.parse(claim.claimed_at);
    const made = startOfHolder(start, claim);
    if (made) since = Math.min(since, Date.parse(made.launch_began ?? made.at));
    return {
      manager: { pid: claim.pid, start_time: claim.start_time },
      alive: claim.state === "alive",
      since,
    };
  }
  if (claim.state !== "none" || !start || history.claimed_since_last_start) return null;
  const subject: Subject = { alive: false, since: Date.parse(start.at) };
  if (start.pid !== undefined && start.start_time !== undefined) {
    subject.manager = { pid: start.pid, start_time: start.start_time };
    subject.alive = livenessOf({ ...subject.manager, machine_id: machineId() }) === "alive";
  }
  return subject;
}

/**
 * Looks for a usage-limit refusal newer than the manager's start at the end of its transcript.
 * Returns the seat's limit with it counted, and the refusal when one counts, `recorded: false`
 * when the seat's readings do not hold it yet (the tick's record_refusal effect writes it).
 * Nothing is written here: gather never acts (DESIGN §1).
 */
export function seatWithRefusal(
  program: ProgramContext,
  seat: string,
  claim: ClaimFacts,
  history: History,
  now: number,
  /** A person's last unpause (epoch ms): a refusal from before it does not count (§5). */
  notBefore?: number,
): { limit: SeatLimit; refusal: SeatRefusal | null; readings?: SeatReadings } {
  const pct = program.policy.pauseAtPercent;
  const subject = subjectOf(claim, history);
  if (!subject || Number.isNaN(subject.since))
    return { limit: seatLimit(seat, pct, now, process.env, [], notBefore), refusal: null };
  const agent = agentFor(program.config);
  const cwd = (subject.alive && subject.manager && cwdOf(subject.manager.pid)) || program.root;
  let transcript: string | null = null;
  try {
    // The manager's own CLAUDE_CODE_PROJECT_DIR_NAME names its project folder, if it sets one.
    transcript = agent.findTranscript(seat, {
      cwd,
      root: program.root,
      since: subject.since,
      ...(subject.manager ? { manager: subject.manager } : {}),
      env: managerTranscriptEnv(program.config.manager.env),
    });
  } catch {
    // no transcript to read: no evidence
  }
  const recordedReadings = readReadings(seat);
  // The agent's own readings (Codex's rate_limits), as the seat would hold them once recorded.
  const unrecorded = transcript ? newReadings(recordedReadings, agent.readings(transcript)) : [];
  const inMemory = unrecorded.map((r) => ({ at: iso(now), seat, ...r }));
  const readings =
    unrecorded.length > 0 && transcript ? { transcript, readings: unrecorded } : null;
  const judged = (extra: Reading[] = []) =>
    seatLimit(seat, pct, now, process.env, [...inMemory, ...extra], notBefore);
  const none = () => ({ limit: judged(), refusal: null, ...(readings ? { readings } : {}) });
  const found = transcript ? agent.refusal(transcript) : null;
  // A refusal with no time of its own cannot be shown to be this manager's: it does not count.
  const at = found?.at ? Date.parse(found.at) : Number.NaN;
  const overridden = notBefore !== undefined && at <= notBefore;
  if (!found || !transcript || Number.isNaN(at) || at < subject.since || overridden) return none();

  const recorded = recordedRefusal(recordedReadings, found);
  const reading: Reading =
    recorded ?? refusalReading(seat, found, program.policy.pauseFallback, now);
  return {
    ...(readings ? { readings } : {}),
    limit: judged(recorded ? [] : [reading]),
    refusal: {
      text: found.text,
      at: found.at as string,
      resets_at: reading.resets_at,
      named_reset: found.resets_at !== null,
      ...(found.untrusted_reset ? { untrusted_reset: found.untrusted_reset } : {}),
      transcript,
      recorded: recorded !== null,
      window: reading.window,
      ...(found.exact ? { exact: true as const } : {}),
      ...(found.limit_type ? { limit_type: found.limit_type } : {}),
      ...(found.needs_person ? { needs_person: found.needs_person } : {}),
      ...(found.session ? { session: found.session } : {}),
    },
  };
}

/**
 * The readings the seat does not hold yet: each unlike the newest recorded one of its window
 * and session (what `appendReadings` would write).
 */
function newReadings(recorded: readonly Reading[], fresh: NewReading[]): NewReading[] {
  return fresh.filter((r) => {
    const same = recorded.findLast(
      (x) => x.window === r.window && x.source === r.source && x.session === r.session,
    );
    return !(
      same &&
      same.used_percentage === r.used_percentage &&
      Date.parse(same.resets_at) === Date.parse(r.resets_at)
    );
  });
}

/** The record_readings effect: the agent's own usage readings, for the seat (DESIGN §19). */
export function recordReadings(program: ProgramContext, readings: NewReading[], now: number): void {
  appendReadings(seatOf(program.config), readings, now);
}

/** The record_refusal effect: the refusal as a seat reading, once (DESIGN §5). */
export function recordRefusal(
  program: ProgramContext,
  refusal: Pick<
    SeatRefusal,
    | "text"
    | "at"
    | "resets_at"
    | "named_reset"
    | "window"
    | "exact"
    | "limit_type"
    | "needs_person"
    | "session"
  >,
  now: number,
): void {
  const found: Refusal = {
    text: refusal.text,
    at: refusal.at,
    // A named reset is the reading's own (epoch seconds: the text's, or the structured field's).
    resets_at: refusal.named_reset ? Math.round(Date.parse(refusal.resets_at) / 1000) : null,
    ...(refusal.window ? { window: refusal.window } : {}),
    ...(refusal.exact ? { exact: true as const } : {}),
    ...(refusal.limit_type ? { limit_type: refusal.limit_type } : {}),
    ...(refusal.needs_person ? { needs_person: refusal.needs_person } : {}),
    ...(refusal.session ? { session: refusal.session } : {}),
    from: "transcript",
  };
  recordRefusalReading(seatOf(program.config), found, program.policy.pauseFallback, now);
}
