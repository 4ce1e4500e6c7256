import type { StartRecord } from "../../journal/replay.js";
import type { NewReading } from "../../usage/readings.js";

/**
 * What a decision does, as data, in the order `act` carries it out (DESIGN §6 "what the tick
 * does"). One list serves the real tick (act's loop), `--dry-run` and `tick --json`'s actions.
 */
export type Effect =
  | { kind: "unpause"; reason: string }
  | {
      kind: "pause";
      until: string;
      reason: string;
      window: string | null;
      /**
       * A refusal naming no reset (DESIGN §5): what Claude Code told a person to do, and its
       * words; journaled on `paused`, whose page then says a person must act.
       */
      needs_person?: { advice: string; text: string };
    }
  /** Record a usage-limit refusal found in the manager's transcript as a seat reading. */
  | {
      kind: "record_refusal";
      text: string;
      at: string;
      resets_at: string;
      named_reset: boolean;
      transcript: string;
      window?: "five_hour" | "seven_day";
      exact?: true;
      limit_type?: string;
      needs_person?: string;
      session?: string;
    }
  /** Record the usage readings a manager's transcript carries (Codex's rate_limits) for the seat. */
  | { kind: "record_readings"; transcript: string; readings: NewReading[] }
  /** Keep the live holder's evidence (transcript tail, screen) before it is stopped. */
  | { kind: "keep_evidence"; pid: number }
  | StopEffect
  /** Break the claim of a dead, reused, unreadable or just-stopped holder. */
  | { kind: "break_claim" }
  | { kind: "stand_down"; reason: string }
  | { kind: "start"; reason: string; planned: boolean }
  /** Journal what an activity verdict found (DESIGN §14); `api_errors` and `blocked` page. */
  | {
      kind: "note";
      type: "api_errors" | "blocked" | "restart_idle" | "restart_wedged";
      /** The holder's pid; for a start held before its claim, its pid when it recorded one. */
      pid: number | null;
      reason: string;
      /** `since`: when the spell began (the turn's end, the call's start), journaled as `since`. */
      activity: { verdict: string; evidence: string[]; since?: string };
      /** `blocked`: the holder's start, whose pane's screen goes into the page. */
      start?: StartRecord | null;
      /** `blocked` before a claim (rule 12): what it waits for, in a few words. */
      waiting_for?: string;
      /** The screen gather read (act reads it again where it can). */
      screen?: string;
      /** The Notification that said it waits. */
      notification?: { at: string; type: string | null; message: string | null };
    }
  /**
   * This host no longer holds the program's lease (DESIGN §15): journaled `lease_lost` and
   * paged; lease.json stops saying it is held, so `save` and `wait` tell the manager.
   */
  | {
      kind: "lease_lost";
      reason: string;
      cause: "elsewhere" | "lost_race" | "unreadable" | "unreachable";
      holder?: string;
      epoch?: number;
    }
  /**
   * Type the resume line into a live holder waiting at its prompt when a usage pause ended
   * (DESIGN §19: an agent that does not go on by itself), journaled `resume_typed`.
   */
  | { kind: "resume_line"; pid: number; start: StartRecord; text: string; reason: string }
  /** Type one line into an idle manager's pane (rule 9a), journaled `nudged`. */
  | {
      kind: "nudge";
      pid: number;
      start: StartRecord;
      text: string;
      reason: string;
      /** When the idle spell began (the turn's end), so the report can draw the spell. */
      since?: string;
    };

/** The three things a tick stops, each with what it needs to find the process and its pane. */
export type StopEffect =
  | {
      kind: "stop";
      who: "holder";
      pid: number;
      start_time: string;
      machine_id: string;
      /** The start that launched it (its pane), when the last start came before its claim. */
      start: StartRecord | null;
      /** An expected stop (a manager told at a pause to save and stop that did not): not paged. */
      note?: { reason: string; planned: true };
    }
  /** Rule 11: the manager that handed over, if it still runs (a pane may keep it up). */
  | { kind: "stop"; who: "handed_over"; pid: number; start_time: string; start: StartRecord | null }
  /** Rule 13: what a start that never claimed left running. */
  | { kind: "stop"; who: "leftover"; start: StartRecord };

export type EffectKind = Effect["kind"];

/**
 * Every kind of effect, a record so the compiler holds it to the union above (docs/rules.md
 * lists each; test/docs.test.ts holds the page to this list).
 */
const KINDS: Record<EffectKind, true> = {
  lease_lost: true,
  record_refusal: true,
  record_readings: true,
  resume_line: true,
  unpause: true,
  pause: true,
  note: true,
  nudge: true,
  keep_evidence: true,
  stop: true,
  break_claim: true,
  stand_down: true,
  start: true,
};
export const EFFECT_KINDS = Object.keys(KINDS) as EffectKind[];

/** What an effect would do, for `--dry-run` (the same words whatever the caller). */
export function describeEffect(e: Effect): string {
  switch (e.kind) {
    case "unpause":
      return "would journal unpaused";
    case "pause":
      return `would pause until ${e.until}`;
    case "record_refusal":
      return `would record the usage-limit refusal in ${e.transcript} as a seat reading`;
    case "record_readings":
      return `would record ${e.readings.length} usage reading(s) from ${e.transcript} for the seat`;
    case "keep_evidence":
      return "would keep evidence";
    case "stop":
      if (e.who === "holder") return `would stop the holder pid ${e.pid}`;
      if (e.who === "handed_over")
        return `would stop pid ${e.pid}, which handed over, if it still runs`;
      return `would stop the unclaimed start${e.start.pid !== undefined ? ` pid ${e.start.pid}` : ""}`;
    case "break_claim":
      return "would break the claim";
    case "stand_down":
      return "would stand down";
    case "start":
      return `would start a manager${e.planned ? " (planned)" : ""}`;
    case "note":
      return `would journal ${e.type}`;
    case "lease_lost":
      return "would journal lease_lost";
    case "nudge":
      return `would nudge pid ${e.pid} in its ${e.start.launcher} pane`;
    case "resume_line":
      return `would type the resume line into pid ${e.pid}'s ${e.start.launcher} pane`;
  }
}

/** A short name for an effect (`stop:holder`), for tables and tests. */
export function effectName(e: Effect): string {
  return e.kind === "stop" ? `stop:${e.who}` : e.kind;
}
