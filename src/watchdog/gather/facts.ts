import type { SkippedLines } from "../../journal/journal.js";
import type { History } from "../../journal/replay.js";
import type { MergeLockState } from "../../merge-lock/lock.js";
import type { NewReading } from "../../usage/readings.js";
import type { MonoStamp } from "../../util/mono.js";
import type { Activity } from "../rules/activity.js";
import type { HeldStartFacts } from "../rules/held-start.js";

/**
 * Everything one tick saw about one program (DESIGN §1: gather's output, decide's input).
 * Plain JSON: it is printed by `tick --json`/`status --json` and kept in last-tick.json.
 * Times are ISO-8601 UTC strings; `now` is here so decide never reads a clock.
 */
export interface Facts {
  program: string;
  now: string;
  /** The monotonic clock at `now` (util/mono.ts): how far the wall clock was stepped back. */
  now_mono?: MonoStamp;
  /** Another live tick of this program holds `tick.lock/` (rule 0). */
  tick_lock: { held: false } | { held: true; pid: number | null; at: string | null };
  /** When the watchdog last ran (last-tick.json `at`), for the sleep/clock-gap rule. */
  last_tick_at: string | null;
  /** program.json is invalid: the tick judged with the last valid config (DESIGN §16). */
  config_invalid?: { file: string; error: string };
  /** A person's last `sheepdog unpause`: readings and refusals before it do not limit (§5). */
  unpaused_by_person_at?: string;
  /**
   * Lines of the journal that are not events sheepdog knows (an old or hand-edited journal):
   * skipped by every reader, counted here so the tick and status say so. Absent: none.
   */
  journal_skipped?: SkippedLines;
  /** The cadence the last tick ran at (last-tick.json `cadence_ms`): see `cadenceOf`. */
  last_tick_cadence_ms?: number;
  /**
   * The sleep/clock gaps earlier ticks saw (last-tick.json `gaps`), oldest first, so a gap
   * counts against no manager on every later tick too, not only the first after it.
   */
  gaps: Gap[];
  finished: { at: string; note: string | null } | null;
  stood_down: { at: string; reason: string } | null;
  paused: { at: string; until: string; reason: string; window: string | null } | null;
  seat: {
    seat: string;
    limited: boolean;
    until: string | null;
    reason: string;
    window: string | null;
    /** A usage-limit refusal at the end of this program's manager's transcript, when one counts. */
    refusal?: SeatRefusal | null;
    /** Usage readings the manager's transcript carries that the seat does not hold yet (Codex). */
    readings?: SeatReadings;
  };
  claim: ClaimFacts;
  /**
   * heartbeat.json; or, when that is not the holder's (another process saved over it), the
   * holder's own latest `saved`/`hand_over` in the journal (`source: "journal"`).
   */
  heartbeat: {
    at: string;
    pid: number;
    start_time?: string;
    context_tokens: number | null;
    source?: "journal";
    /** The save's monotonic time (util/mono.ts), when it recorded one. */
    mono_ms?: number;
    boot?: string | null;
  } | null;
  /** Read only when it matters (a live holder with a stale heartbeat); null otherwise. */
  merge_lock: MergeLockState | null;
  history: History;
  /**
   * Rule 12: whether the process the last unclaimed start recorded still runs (`dead` covers a
   * zombie and a reused pid); absent when that start recorded no pid or something claimed since.
   */
  last_start_process?: "alive" | "dead";
  /**
   * Facts gather has not read yet because they cost a process or a file walk: decide asks for
   * them (Decision.needs) only when its rules reach the row that uses them. Absent: all read.
   */
  unread?: FactName[];
  /**
   * What the holder is doing, read only for a live holder quiet for `quiet_after` (DESIGN §14):
   * the verdict and its evidence in words.
   */
  activity?: Activity & {
    transcript: string | null;
    /** The transcript's newest turn has ended: the holder waits at its prompt. */
    turn_ended?: boolean;
  };
  /**
   * Rule 12: what the last start, not yet claimed, shows (its screen's dialog, its session's
   * Notification), read only when decide asks for it (issue 33).
   */
  start_held?: HeldStartFacts;
  /** The program's lease on its git remote (DESIGN §15); absent for a single-host program. */
  lease?: LeaseFacts;
  /** `status` only: pages sent, undelivered, next reminder (the tick does not load page code). */
  pages?: PageStatus;
}

/**
 * The facts read on request: the transcript (a refusal), the merge lock ref, the activity, a
 * pending start's screen and Notification.
 */
export type FactName = "seat_refusal" | "merge_lock" | "activity" | "start_held";

/** A span in which the watchdog did not run for more than two intervals (ISO times). */
export interface Gap {
  /** The tick before the gap. */
  from: string;
  /** The tick that found it. */
  to: string;
}

export type ClaimFacts =
  | { state: "none" }
  | {
      state: "alive" | "dead" | "reused" | "foreign";
      pid: number;
      start_time: string;
      machine_id: string;
      hostname: string;
      claimed_at: string;
    }
  | { state: "unreadable"; problem: string };

/**
 * The usage readings a manager's transcript carries (a Codex rollout's rate_limits, DESIGN §19)
 * that the seat's readings do not hold yet: judged with them, and recorded by the tick.
 */
export interface SeatReadings {
  transcript: string;
  readings: NewReading[];
}

/** A refusal record found in the manager's transcript (DESIGN §5), as the seat's evidence. */
export interface SeatRefusal {
  text: string;
  /** The refusal entry's own time. */
  at: string;
  /** The reset the seat's reading for it carries: the one the text names, else the fallback. */
  resets_at: string;
  /** Whether the text named its reset (false: `usage.pause_fallback` applies). */
  named_reset: boolean;
  transcript: string;
  /** Whether the seat's readings already hold it; false: the tick's record_refusal effect does. */
  recorded?: boolean;
  /** The reset the text named when it did not fit its window (DESIGN §5): not trusted. */
  untrusted_reset?: string;
  /** The window its reading limits (five_hour, or seven_day for every other structured type). */
  window?: "five_hour" | "seven_day";
  /** Read from Claude Code's structured fields: the reset is the header's, to the second. */
  exact?: true;
  /** The structured `rateLimitType` (`seven_day_opus`, `overage`, …). */
  limit_type?: string;
  /** It names no reset: what Claude Code told a person to do (the pause pages it once). */
  needs_person?: string;
  /** The Claude Code session refused (the entry's `sessionId`). */
  session?: string;
}

/**
 * What the tick found of the lease (lease/tick-lease.ts): held here (renewed, created or taken
 * over just now), or why not. decide fences and defers from these; it never asks the remote.
 */
export interface LeaseFacts {
  ref: string;
  state: "held" | "elsewhere" | "lost_race" | "unreadable" | "unreachable";
  how?: "created" | "renewed" | "taken_over";
  /** This host's epoch when it holds the lease. */
  epoch: number | null;
  /** Who holds it, as the remote says (or as this host last saw it), and its age here. */
  holder: {
    machine_id: string;
    hostname: string;
    epoch: number;
    renewed_at: string;
    age_ms: number;
  } | null;
  /** ms since this host last renewed successfully, before this tick (null: never). */
  since_renewal_ms: number | null;
  /** ttl − margin: how long a renewal keeps the lease held here. */
  hold_ms: number;
  /** This host held the lease until now (lease.json): a loss is journaled and paged. */
  was_held: boolean;
  /** What the remote said when it could not be reached. */
  error?: string;
  /** An unreadable lease's commit. */
  sha?: string;
  /** `status`: the facts are this host's lease.json, as of this time (null: never asked). */
  as_of?: string | null;
}

/**
 * What `status` shows about pages (snake_case: it goes into `status --json`), derived by
 * page/status.ts; here beside the facts it is part of, so the facts import nothing of page/.
 */
export interface PageStatus {
  /** Whether `page.ntfy` is configured at all. */
  configured: boolean;
  last_page: { at: string; kind: string; title: string; priority: number } | null;
  /**
   * Pages that failed and have not been delivered since: when and why they last failed, how
   * many times, and when a tick tries again (backing off, DESIGN §18).
   */
  undelivered: {
    at: string;
    kind: string;
    title: string;
    error: string;
    failures: number;
    next_try: string;
  }[];
  /** When the next stand-down reminder falls due (ISO), or null. */
  next_reminder: string | null;
  reminders_left: number | null;
}
