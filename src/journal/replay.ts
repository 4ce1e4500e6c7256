import type { JournalEvent } from "./journal.js";

/**
 * Program state derived by replaying the journal (DESIGN §2: never stored twice).
 * Each field is the newest event that still holds, or null.
 */
export interface ReplayedState {
  /** `finished` not followed by `reopened`. */
  finished: JournalEvent | null;
  /** `stood_down` not followed by `cleared`. */
  stoodDown: JournalEvent | null;
  /** `paused` not followed by `unpaused`. */
  paused: JournalEvent | null;
  /**
   * The last `unpaused` a person made (`sheepdog unpause`): it overrides every reading and
   * refusal recorded before it (DESIGN §5).
   */
  unpausedByPerson: JournalEvent | null;
}

/**
 * Whether an `unpaused` event was a person's (`by: "person"`, or `"phone"` for a page's button;
 * older ones only said so).
 */
export function isPersonsUnpause(e: JournalEvent): boolean {
  return (
    e.type === "unpaused" &&
    (e.by === "person" || e.by === "phone" || e.reason === "unpaused by a person")
  );
}

/** Replays the latest-wins pairs of events. */
export function replay(
  events: readonly JournalEvent[],
  /** The state so far, when `events` are what was appended since (see journal/follow.ts). */
  from?: ReplayedState,
): ReplayedState {
  const state: ReplayedState = from
    ? { ...from }
    : { finished: null, stoodDown: null, paused: null, unpausedByPerson: null };
  for (const e of events) {
    switch (e.type) {
      case "finished":
        state.finished = e;
        break;
      case "reopened":
        state.finished = null;
        break;
      case "stood_down":
        state.stoodDown = e;
        break;
      case "cleared":
        state.stoodDown = null;
        break;
      case "paused":
        state.paused = e;
        break;
      case "unpaused":
        state.paused = null;
        if (isPersonsUnpause(e)) state.unpausedByPerson = e;
        break;
    }
  }
  return state;
}

/** A `manager_started` event: what a start launched, so a start that never claimed can be stopped. */
export interface StartRecord {
  at: string;
  reason: string;
  planned: boolean;
  launcher: string;
  pid?: number;
  start_time?: string;
  /** The process was already gone when the start was recorded (it died at once). */
  exited?: boolean;
  /** When its launch began (a slow start is journaled when the launcher returns). */
  launch_began?: string;
  pane?: string;
  window?: string;
  agent?: string;
  /** Under systemd: the transient scope it runs in. */
  unit?: string;
  /**
   * A `manager_starting` no `manager_started` or `manager_start_failed` followed: the tick
   * ended mid-launch, so what it launched, if anything, is not known.
   */
  intent?: true;
  /** An intent journaled `start_cut_short`: over, with no pid or pane to stop. */
  cut_short?: true;
  /** The monotonic time it was journaled at (util/mono.ts). */
  mono_ms?: number;
  boot?: string | null;
}

/** A `hand_over` event. */
export interface HandOverRecord {
  at: string;
  pid: number | null;
  /** The start time of the manager that handed over (from the event, its claim or its release). */
  start_time: string | null;
  /** When that manager claimed (null when the hand-over matched no open claim). */
  claimed_at: string | null;
  context_tokens: number | null;
  note: string;
  progress: string | null;
}

/** One manager's time holding the claim, from `claimed` to how it ended. */
export interface ManagerRecord {
  pid: number;
  start_time: string | null;
  claimed_at: string;
  /** The progress fingerprint at its first save (or its hand-over when it never saved). */
  first_progress: string | null;
  /** How the claim ended: `hand_over`, `released`, `claim_broken`, `finished`; null while held. */
  ended: string | null;
  ended_at: string | null;
  /** The fingerprint its hand-over carried. */
  hand_over_progress: string | null;
  /** Its claim ended before the last `cleared`: the no-progress rule no longer counts it. */
  before_cleared?: true;
}

/** What the watchdog's rules need from the journal's history (DESIGN §6). */
export interface History {
  /** Every `manager_started` ever replayed (rotation carries the newest forward). */
  starts_total: number;
  last_start: StartRecord | null;
  /** Whether any manager claimed after the last start. */
  claimed_since_last_start: boolean;
  /** The newest `hand_over` after the last start (rule 11), or null. */
  hand_over_since_last_start: HandOverRecord | null;
  /**
   * Why the next start is planned apart from a hand-over: the program's very first start,
   * or the first start after `unpaused`, `cleared` or `reopened`. Null: the next is unplanned.
   */
  planned_next: string | null;
  /**
   * Times of unplanned starts after the last `cleared`, failed starts included (newest last,
   * the last 50 at most).
   */
  unplanned_starts: string[];
  /** The newest `manager_start_failed` since the last start or claim, or null. */
  last_failed_start: { at: string; launcher: string; reason: string } | null;
  /** The last managers that held the claim, oldest first (the last `keepManagers` at most). */
  managers: ManagerRecord[];
  /** The last usage pauses, oldest first (the last 20 at most): their time counts against no manager. */
  pauses: PauseSpan[];
  /**
   * The newest `nudged`, `api_errors` and `blocked` events (DESIGN §14), each with the pid it
   * was about: decide acts on an activity verdict once per spell. Absent: none yet.
   */
  activity_events?: Partial<Record<ActivityEventType, { at: string; pid: number | null }>>;
}

export const ACTIVITY_EVENTS = ["nudged", "api_errors", "blocked"] as const;
export type ActivityEventType = (typeof ACTIVITY_EVENTS)[number];

/** A pause from its `paused` event to its end: `until`, or an earlier `unpaused` (a person's). */
export interface PauseSpan {
  from: string;
  /** When it ended or ends: `until`, or the `unpaused` that came first. */
  to: string;
}

const str = (v: unknown): string | null => (typeof v === "string" ? v : null);
const num = (v: unknown): number | null => (typeof v === "number" ? v : null);

function startRecord(e: JournalEvent): StartRecord {
  const r: StartRecord = {
    at: e.at,
    reason: str(e.reason) ?? "",
    planned: e.planned === true,
    launcher: str(e.launcher) ?? "command",
  };
  if (num(e.pid) !== null) r.pid = e.pid as number;
  if (e.exited === true) r.exited = true;
  if (num(e.mono_ms) !== null) r.mono_ms = e.mono_ms as number;
  if (typeof e.boot === "string" || e.boot === null) r.boot = e.boot as string | null;
  for (const k of ["start_time", "pane", "window", "agent", "unit", "launch_began"] as const) {
    const v = str(e[k]);
    if (v !== null) r[k] = v;
  }
  return r;
}

/** Replays the events the watchdog's rules read: starts, claims, hand-overs, clears. */
export function history(events: readonly JournalEvent[], keepManagers = 10): History {
  const r = new Replay(keepManagers);
  for (const e of events) r.apply(e);
  return r.h;
}

const MAX_UNPLANNED = 50;
const MAX_PAUSES = 20;

/** The replay's running state, one step per event type. */
class Replay {
  readonly h: History = {
    starts_total: 0,
    last_start: null,
    claimed_since_last_start: false,
    hand_over_since_last_start: null,
    planned_next: "the program's first start",
    unplanned_starts: [],
    last_failed_start: null,
    managers: [],
    pauses: [],
  };
  /** The manager holding the claim as far as the journal says, if any. */
  private open: ManagerRecord | null = null;
  /** The pending intent's start (the history as it was before it, for a failed launch). */
  private intent: {
    prev: [StartRecord | null, boolean, History["hand_over_since_last_start"]];
    launch_began: string | null;
    /** Counted as a start already (its manager claimed, or another start superseded it). */
    counted: boolean;
  } | null = null;
  /** When the newest claim was made (whoever made it). */
  private lastClaimAt: string | null = null;
  // Managers whose first save has been seen (a first save may carry a null fingerprint).
  private readonly saw = new WeakSet<ManagerRecord>();

  constructor(private readonly keepManagers: number) {}

  apply(e: JournalEvent): void {
    const h = this.h;
    switch (e.type) {
      case "manager_starting":
        this.starting(e);
        break;
      case "manager_started":
        this.started(e);
        break;
      case "start_cut_short":
        this.cutShort(e);
        break;
      case "manager_start_failed":
        this.startFailed(e);
        break;
      case "claimed":
        this.claimed(e);
        break;
      case "saved":
        if (this.open && num(e.pid) === this.open.pid) this.firstProgress(this.open, e);
        break;
      case "hand_over":
        this.handOver(e);
        break;
      case "released":
        this.released(e);
        break;
      case "claim_broken":
      case "finished":
        this.end(e.type, e.at);
        break;
      case "cleared":
        // `resume` starts the no-progress count afresh: managers that already ended are done.
        for (const m of h.managers) if (m.ended !== null) m.before_cleared = true;
        h.unplanned_starts = [];
        h.planned_next = "the first start after `sheepdog resume`";
        break;
      case "paused":
        this.paused(e);
        break;
      case "unpaused":
        h.planned_next = "the first start after the pause ended";
        this.unpaused(e);
        break;
      case "reopened":
        h.planned_next = "the first start after `sheepdog reopen`";
        break;
      case "nudged":
      case "api_errors":
      case "blocked":
        h.activity_events = { ...h.activity_events, [e.type]: { at: e.at, pid: num(e.pid) } };
        break;
    }
  }

  /**
   * A start's intent, journaled before its launch: until its outcome is journaled it is the
   * last start (rule 12 waits for it to claim; rule 11's hand-over has its start underway).
   */
  private starting(e: JournalEvent): void {
    const h = this.h;
    this.countIntent(); // an intent before it that no outcome followed: cut short
    this.intent = {
      prev: [h.last_start, h.claimed_since_last_start, h.hand_over_since_last_start],
      launch_began: str(e.launch_began),
      counted: false,
    };
    h.last_start = { ...startRecord(e), intent: true };
    h.claimed_since_last_start = false;
    h.hand_over_since_last_start = null;
  }

  /**
   * A pending intent that proved to be a start (its manager claimed) or was cut short (another
   * start came with no outcome for it): it counts as a start, once.
   */
  private countIntent(): void {
    const i = this.intent;
    const s = this.h.last_start;
    if (!i || i.counted) return;
    i.counted = true;
    this.h.starts_total++;
    this.h.planned_next = null;
    if (s?.intent && !s.planned) this.unplanned(s.at);
  }

  /** The tick journaled the pending intent cut short: it is over, with nothing to stop. */
  private cutShort(e: JournalEvent): void {
    const s = this.h.last_start;
    if (!s?.intent || (s.launch_began ?? s.at) !== str(e.launch_began)) return;
    this.countIntent();
    this.intent = null;
    this.h.last_start = { ...s, cut_short: true };
  }

  private started(e: JournalEvent): void {
    const h = this.h;
    const own = this.intent !== null && this.intent.launch_began === str(e.launch_began);
    // Another launch's intent, never resolved, was cut short; this launch's own is this start.
    if (!own) this.countIntent();
    const counted = own && this.intent?.counted === true;
    this.intent = null;
    const s = startRecord(e);
    if (!counted) h.starts_total++;
    h.last_start = s;
    h.last_failed_start = null;
    // A start is journaled when its launcher returns; a herdr start waits for its prompt's
    // arrival, and its manager may claim meanwhile. A claim after the launch began is this
    // start's, so a later manual release is a release, not "never claimed" (the command
    // launcher, whose start is journaled first, already read it so).
    const began = str(e.launch_began);
    h.claimed_since_last_start =
      began !== null &&
      this.lastClaimAt !== null &&
      Date.parse(this.lastClaimAt) >= Date.parse(began);
    h.hand_over_since_last_start = null;
    h.planned_next = null;
    if (!s.planned && !counted) this.unplanned(s.at);
  }

  /** A usage pause (one with a window; a person's `pause` names none: its manager may work). */
  private paused(e: JournalEvent): void {
    const until = str(e.until);
    if (str(e.window) === null || until === null || Number.isNaN(Date.parse(until))) return;
    this.h.pauses.push({ from: e.at, to: until });
    if (this.h.pauses.length > MAX_PAUSES) this.h.pauses.shift();
  }

  /** A pause ended before its `until` (a person's unpause) ends there. */
  private unpaused(e: JournalEvent): void {
    const last = this.h.pauses.at(-1);
    if (last && Date.parse(e.at) < Date.parse(last.to) && Date.parse(e.at) >= Date.parse(last.from))
      last.to = e.at;
  }

  private startFailed(e: JournalEvent): void {
    const h = this.h;
    // The launch its intent announced failed: the last start is again the one before it. One
    // that claimed first was counted then: the failure is not a second start.
    const counted = this.intent?.counted === true;
    if (this.intent && !counted)
      [h.last_start, h.claimed_since_last_start, h.hand_over_since_last_start] = this.intent.prev;
    this.intent = null;
    // A failed start counts as an unplanned start (DESIGN §6): one that can never succeed
    // reaches the crash-loop guard instead of failing on every tick.
    h.planned_next = null;
    // The hand-over it followed has had its start: retries are unplanned, so guarded.
    h.hand_over_since_last_start = null;
    if (!counted) this.unplanned(e.at);
    h.last_failed_start = {
      at: e.at,
      launcher: str(e.launcher) ?? "command",
      reason: str(e.reason) ?? "",
    };
  }

  private unplanned(at: string): void {
    this.h.unplanned_starts.push(at);
    if (this.h.unplanned_starts.length > MAX_UNPLANNED) this.h.unplanned_starts.shift();
  }

  private claimed(e: JournalEvent): void {
    const h = this.h;
    this.countIntent(); // a claim during a launch not yet journaled: it was a start
    h.claimed_since_last_start = true;
    this.lastClaimAt = e.at;
    h.last_failed_start = null;
    this.end("replaced", e.at);
    const open: ManagerRecord = {
      pid: num(e.pid) ?? 0,
      start_time: str(e.start_time),
      claimed_at: e.at,
      first_progress: null,
      ended: null,
      ended_at: null,
      hand_over_progress: null,
    };
    this.open = open;
    h.managers.push(open);
    if (h.managers.length > this.keepManagers) h.managers.shift();
  }

  /** Records a manager's first progress fingerprint (from its first save or its hand-over). */
  private firstProgress(m: ManagerRecord, e: JournalEvent): void {
    if (this.saw.has(m)) return;
    m.first_progress = str(e.progress);
    this.saw.add(m);
  }

  private handOver(e: JournalEvent): void {
    const pid = num(e.pid);
    const open = this.open;
    const mine = open !== null && (pid === null || pid === open.pid) ? open : null;
    this.h.hand_over_since_last_start = {
      at: e.at,
      pid,
      start_time: str(e.start_time) ?? mine?.start_time ?? null,
      claimed_at: mine?.claimed_at ?? null,
      context_tokens: num(e.context_tokens),
      note: str(e.note) ?? "",
      progress: str(e.progress),
    };
    if (mine) {
      this.firstProgress(mine, e);
      mine.hand_over_progress = str(e.progress);
      this.end("hand_over", e.at);
    }
  }

  private released(e: JournalEvent): void {
    // The release that follows a hand-over names the start time an older hand-over lacks.
    const hand = this.h.hand_over_since_last_start;
    if (hand && hand.start_time === null && hand.pid !== null && num(e.pid) === hand.pid)
      hand.start_time = str(e.start_time);
    this.end(e.type, e.at);
  }

  /** The open manager's time ended, and how. */
  private end(type: string, at: string): void {
    if (!this.open) return;
    this.open.ended = type;
    this.open.ended_at = at;
    this.open = null;
  }
}
