// The fixed moment, policy and journal-event maker the decide tables share (rules 0–13, 9a–9c).

import type { JournalEvent } from "../../src/journal/journal.js";
import { history } from "../../src/journal/replay.js";
import type { Facts } from "../../src/watchdog/gather/facts.js";
import type { DecidePolicy } from "../../src/watchdog/rules/decide.js";
import { asEvent } from "../helpers/events.js";

export const MIN = 60_000;
export const NOW = Date.parse("2026-11-30T12:00:00.000Z");
/** An ISO time `m` minutes before NOW (negative: after). */
export const ago = (m: number) => new Date(NOW - m * MIN).toISOString();
/** The holder's start time in every row. */
export const ST = "linux:boot:1000";

/** The defaults (DESIGN §6), as decide takes them. */
export const POLICY: DecidePolicy = {
  cadence: 5 * MIN,
  staleAfter: 45 * MIN,
  claimGrace: 10 * MIN,
  mergeMax: 120 * MIN,
  quietAfter: 10 * MIN,
  nudgeWait: 3 * MIN,
  crashLoopStarts: 3,
  crashLoopWithin: 60 * MIN,
  noProgressHandOvers: 3,
  pauseFallback: 60 * MIN,
};

/** A journal event `m` minutes before NOW. */
export const ev = (m: number, type: string, fields: Record<string, unknown> = {}): JournalEvent =>
  asEvent({ at: ago(m), type, ...fields });

/** Facts at NOW from `events`: no claim, no heartbeat, a tick 5m ago, unless `over` says so. */
export function factsAt(events: readonly JournalEvent[], over: Partial<Facts> = {}): Facts {
  return {
    program: "catalog",
    now: ago(0),
    tick_lock: { held: false },
    last_tick_at: ago(5),
    gaps: [],
    finished: null,
    stood_down: null,
    paused: null,
    seat: { seat: "/home/u/.claude", limited: false, until: null, reason: "under", window: null },
    claim: { state: "none" },
    heartbeat: null,
    merge_lock: null,
    history: history(events),
    ...over,
  };
}
