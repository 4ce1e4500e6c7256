import type { EventOf } from "../journal/journal.js";
import { formatDuration } from "../util/duration.js";
import { stamp } from "../util/local-time.js";

// A manager's idle spells (rule 9a, DESIGN §14) from the journal: each from when its turn ended
// with nothing to wake it (the `since` the tick journaled with `nudged` or `restart_idle`) to
// what came of it. Pure, like the rest of the timeline.

/** What came of an idle spell. */
export type IdleOutcome =
  /** It saved (or handed over) after the nudge. */
  | "woke"
  /** The watchdog stopped it (`restart_idle`). */
  | "restarted"
  /** Its time ended another way (found dead, stuck-stopped, replaced): its ending says how. */
  | "ended"
  /** Still idle at the window's end. */
  | "ongoing";

export interface IdleSpell {
  /** When its turn ended (the journaled `since`), else the nudge's (or the restart's) time. */
  from: string;
  /** Its next save, its stop, or the window's end (`ongoing`). */
  to: string;
  ongoing: boolean;
  outcome: IdleOutcome;
  /** The `nudged` event's time; null: not nudged (no pane: restarted at once). */
  nudged_at: string | null;
  /** How the line was typed (`tmux send-keys …`). */
  nudge_via: string | null;
  /** Why the line could not be typed; the nudge still counted (nudge_wait, then a restart). */
  nudge_error: string | null;
}

/** What the replay of spells needs of a bar. */
export interface SpellBar {
  idle: IdleSpell[];
  last_seen_at: string;
  ending: string | null;
  ended_at: string | null;
}

const later = (a: string, b: string) => (Date.parse(a) >= Date.parse(b) ? a : b);

/** The spells still open while the journal is replayed, one per bar at most. */
export type OpenSpells = Map<SpellBar, IdleSpell>;

/**
 * A `nudged` or `restart_idle` event about `b`: opens its spell, or (a nudge in a spell a
 * restart opened) adds the nudge. A spell never starts before the bar's last sign of life.
 */
export function onIdleEvent(
  open: OpenSpells,
  b: SpellBar,
  e: EventOf<"nudged"> | EventOf<"restart_idle">,
): void {
  let s = open.get(b);
  if (!s) {
    s = {
      from: later(e.since ?? e.at, b.last_seen_at),
      to: e.at,
      ongoing: true,
      outcome: "ongoing",
      nudged_at: null,
      nudge_via: null,
      nudge_error: null,
    };
    open.set(b, s);
    b.idle.push(s);
  }
  if (e.type === "nudged" && s.nudged_at === null) {
    s.nudged_at = e.at;
    s.nudge_via = e.via ?? null;
    s.nudge_error = e.error ?? null;
  }
}

function close(open: OpenSpells, b: SpellBar, at: string, outcome: IdleOutcome): void {
  const s = open.get(b);
  if (!s) return;
  s.to = at;
  s.ongoing = false;
  s.outcome = outcome;
  open.delete(b);
}

/** A save or a hand-over by `b`: it woke. */
export function onWake(open: OpenSpells, b: SpellBar, at: string): void {
  close(open, b, at, "woke");
}

/** After each event: the spells of bars that just ended close with them. */
export function closeEnded(open: OpenSpells): void {
  for (const b of [...open.keys()])
    if (b.ending !== null && b.ended_at !== null)
      close(open, b, b.ended_at, b.ending === "idle_stopped" ? "restarted" : "ended");
}

/** At the end of the replay: what is still open runs to the window's end. */
export function closeAtWindowEnd(open: OpenSpells, to: string): void {
  for (const s of open.values()) s.to = to;
  open.clear();
}

/** The spell in words, for its title and the events table. */
export function spellWords(s: IdleSpell, endingLabel: string): string[] {
  const lasted = formatDuration(Math.max(0, Date.parse(s.to) - Date.parse(s.from)));
  const head = `idle ${stamp(s.from)} → ${s.ongoing ? "still" : stamp(s.to)} (${lasted}${s.ongoing ? " so far" : ""}): the turn ended with nothing to wake it`;
  const nudge =
    s.nudged_at === null
      ? "not nudged (no pane to type into)"
      : s.nudge_error !== null
        ? `nudge at ${stamp(s.nudged_at)} not typed: ${s.nudge_error}`
        : `nudged ${stamp(s.nudged_at)}${s.nudge_via ? ` (${s.nudge_via})` : ""}`;
  const outcome = {
    woke: `it woke: saved at ${stamp(s.to)}`,
    restarted: `restarted: stopped at ${stamp(s.to)} (restart_idle)`,
    ended: `its time ended at ${stamp(s.to)}: ${endingLabel}`,
    ongoing: "still idle at the end of the window",
  }[s.outcome];
  return [head, nudge, outcome];
}
