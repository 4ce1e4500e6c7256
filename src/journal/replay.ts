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
  /**
   * A `blocked` about this start: it waited for a person before it claimed (issue 33), and
   * what for (the dialog's first line or the Notification's message).
   */
  held?: { at: string; waiting_for: string };
  /** A `manager_stopped` of this start (it never claimed): nothing of it is left to stop. */
  stopped?: { at: string };
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
   * The newest `nudged`, `api_errors` and `blocked` events (DESIGN §14), and `resume_typed`
   * (§19), each with the pid it was about: decide acts on an activity verdict once per spell,
   * and types the resume line once a pause. Absent: none yet.
   */
  activity_events?: Partial<Record<ActivityEventType, { at: string; pid: number | null }>>;
}

export const ACTIVITY_EVENTS = ["nudged", "api_errors", "blocked", "resume_typed"] as const;
export type ActivityEventType = (typeof ACTIVITY_EVENTS)[number];

/** A pause from its `paused` event to its end: `until`, or an earlier `unpaused` (a person's). */
export interface PauseSpan {
  from: string;
  /** When it ended or ends: `until`, or the `unpaused` that came first. */
  to: string;
  /** A person (or a page's button) ended it before its `until`: no tick ended it. */
  by_person?: true;
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

/**
 * Whether an event names this start: its `launch_began`, else its pid (and start time) or pane.
 * Never a start journaled after the event.
 */
function isAbout(e: JournalEvent, s: StartRecord): boolean {
  if (Date.parse(e.at) < Date.parse(s.launch_began ?? s.at)) return false;
  const began = str(e.launch_began);
  if (began !== null) return began === (s.launch_began ?? s.at);
  const pid = num(e.pid);
  if (pid !== null && s.pid !== undefined)
    return pid === s.pid && (str(e.start_time) ?? s.start_time) === s.start_time;
  const pane = str(e.pane);
  return pane !== null && pane === s.pane;
}

/** Replays the events the watchdog's rules read: starts, claims, hand-overs, clears. */
export function history(events: readonly JournalEvent[], keepManagers = 10): History {
  const r = new Replay(keepManagers);
  for (const e of events) r.apply(e);
  return r.h;
}

/**
 * One manager's life as the journal tells it, from its start (its intent, then its launch) or
 * its claim to how it ended: what `report` draws as one bar. The same fold as the watchdog's
 * history matches a launch to its intent and a claim to its start, so every order of
 * `manager_starting`, `claimed` and `manager_started` is one life.
 */
export interface Life {
  /** 1-based, in the order the lives began. */
  n: number;
  /** Its start: the launch's record, else its intent's; null: a claim with no start seen. */
  start: StartRecord | null;
  /** When its launch was journaled (`manager_started`, or `manager_start_failed`). */
  started_at: string | null;
  claimed_at: string | null;
  pid: number | null;
  start_time: string | null;
  /** How its time ended, and the event that says so; null while it holds or is starting. */
  end: LifeEnd | null;
}

export interface LifeEnd {
  how:
    | "hand_over"
    | "finished"
    | "released"
    | "claim_broken"
    /** `manager_stopped`: its `decision`, `planned` and `who` say why. */
    | "stopped"
    /** A stand-down that left it: a dead holder's claim (`holder_state`), or a start not claimed. */
    | "stood_down"
    /** Another manager claimed while it held the claim, with no end journaled for it. */
    | "replaced"
    /** A start that never claimed, over when the next start came. */
    | "superseded"
    | "start_failed"
    /** An intent whose launch was never journaled (`start_cut_short`, or the next start). */
    | "cut_short";
  at: string;
  event: JournalEvent;
}

/**
 * The lives in a journal, oldest first; `visit` sees each event with the life it concerns (a
 * save its holder's, a start its own), or null.
 */
export function lifecycle(
  events: readonly JournalEvent[],
  visit?: (e: JournalEvent, life: Life | null) => void,
): Life[] {
  const r = new Replay(10, true);
  for (const e of events) {
    r.apply(e);
    visit?.(e, r.touched);
  }
  return r.lives ?? [];
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

  /** Every life so far, when the fold keeps them (`lifecycle`); null for the watchdog's. */
  readonly lives: Life[] | null;
  /** The life of the last start while it has not claimed (its intent, or its launch). */
  private pendingLife: Life | null = null;
  /** The life of the pending intent, until its launch is journaled (it may claim before). */
  private intentLife: Life | null = null;
  /** The life holding the claim. */
  private holdingLife: Life | null = null;
  /** The life the last event concerned, for `lifecycle`'s visitor. */
  touched: Life | null = null;

  constructor(
    private readonly keepManagers: number,
    keepLives = false,
  ) {
    this.lives = keepLives ? [] : null;
  }

  apply(e: JournalEvent): void {
    const h = this.h;
    this.touched = null;
    if (this.lives) this.touchByPid(e);
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
        this.endHolding(e.type, e);
        this.end(e.type, e.at);
        break;
      case "stood_down":
        this.lifeStoodDown(e);
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
      case "resume_typed":
        h.activity_events = { ...h.activity_events, [e.type]: { at: e.at, pid: num(e.pid) } };
        if (e.type === "blocked") this.held(e);
        break;
      case "manager_stopped":
        this.stopped(e);
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
    if (this.lives) {
      this.supersedePending(e);
      const life = this.newLife(h.last_start);
      this.pendingLife = life;
      this.intentLife = life;
    }
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
    const life = this.intentLife;
    this.intentLife = null;
    if (life) {
      this.endLife(life, "cut_short", e);
      if (this.pendingLife === life) this.pendingLife = null;
    }
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
    if (this.lives) this.lifeStarted(e, s, own, h.claimed_since_last_start);
  }

  /** A `blocked` about the last start, before it claimed: it waited for a person. */
  private held(e: JournalEvent): void {
    const s = this.h.last_start;
    if (!s || this.h.claimed_since_last_start || !isAbout(e, s)) return;
    if (this.pendingLife) this.touched = this.pendingLife;
    const what = str(e.waiting_for) ?? str(e.reason) ?? "a person";
    this.h.last_start = { ...s, held: { at: e.at, waiting_for: what } };
  }

  /** The last start, never claimed, was stopped (rule 13's leftover, a fence, a stand-down's). */
  private stopped(e: JournalEvent): void {
    this.lifeStopped(e);
    const s = this.h.last_start;
    if (!s || this.h.claimed_since_last_start || !isAbout(e, s)) return;
    this.h.last_start = { ...s, stopped: { at: e.at } };
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
    if (
      last &&
      Date.parse(e.at) < Date.parse(last.to) &&
      Date.parse(e.at) >= Date.parse(last.from)
    ) {
      last.to = e.at;
      if (isPersonsUnpause(e)) last.by_person = true;
    }
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
    if (this.lives) this.lifeFailed(e, counted);
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
    if (this.lives) this.lifeClaimed(e);
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
    this.endHolding("hand_over", e);
  }

  private released(e: JournalEvent): void {
    // The release that follows a hand-over names the start time an older hand-over lacks.
    const hand = this.h.hand_over_since_last_start;
    if (hand && hand.start_time === null && hand.pid !== null && num(e.pid) === hand.pid)
      hand.start_time = str(e.start_time);
    this.endHolding("released", e);
    this.end(e.type, e.at);
  }

  // ---- lives (`lifecycle`): one per manager, from the same matches as the history above ----

  private newLife(start: StartRecord | null): Life {
    const lives = this.lives as Life[];
    const life: Life = {
      n: lives.length + 1,
      start,
      started_at: null,
      claimed_at: null,
      pid: start?.pid ?? null,
      start_time: start?.start_time ?? null,
      end: null,
    };
    lives.push(life);
    this.touched = life;
    return life;
  }

  private endLife(life: Life, how: LifeEnd["how"], e: JournalEvent): void {
    this.touched = life;
    if (life.end) return;
    life.end = { how, at: e.at, event: e };
    if (this.holdingLife === life) this.holdingLife = null;
    if (this.pendingLife === life) this.pendingLife = null;
  }

  /** The holder's life, for an event about it: its pid's, or any holder's when it names none. */
  private holderOf(e: JournalEvent): Life | null {
    const life = this.holdingLife;
    const pid = num(e.pid);
    return life && (pid === null || pid === life.pid) ? life : null;
  }

  /** An event naming the holder's pid concerns its life (saves, nudges, notes). */
  private touchByPid(e: JournalEvent): void {
    const pid = num(e.pid);
    if (pid !== null && this.holdingLife?.pid === pid) this.touched = this.holdingLife;
  }

  private endHolding(how: LifeEnd["how"], e: JournalEvent): void {
    if (!this.lives) return;
    const life = this.holderOf(e);
    if (life) this.endLife(life, how, e);
  }

  /** A start that never claimed is over when the next comes (an intent with no launch: cut short). */
  private supersedePending(e: JournalEvent): void {
    const pending = this.pendingLife;
    if (!pending) return;
    this.endLife(pending, pending.started_at === null ? "cut_short" : "superseded", e);
    if (this.intentLife === pending) this.intentLife = null;
  }

  private lifeStarted(e: JournalEvent, s: StartRecord, own: boolean, claimedSince: boolean): void {
    const intent = own ? this.intentLife : null;
    this.intentLife = null;
    // Its own intent's life, whether it claimed meanwhile (the tmux and herdr launchers journal
    // the start once the prompt arrived) or not.
    let life = intent;
    if (!life) {
      this.supersedePending(e);
      // A claim since this launch began, with no start of its own: this start's manager.
      const holder = this.holdingLife;
      if (claimedSince && holder && holder.start === null) life = holder;
    }
    if (!life) {
      life = this.newLife(s);
      this.pendingLife = life;
    }
    life.start = s;
    life.started_at = e.at;
    if (life.claimed_at === null) {
      life.pid = s.pid ?? life.pid;
      life.start_time = s.start_time ?? life.start_time;
    }
    this.touched = life;
  }

  private lifeFailed(e: JournalEvent, counted: boolean): void {
    const intent = this.intentLife;
    this.intentLife = null;
    // One that claimed first has its life: the failure ends nothing.
    if (intent && counted) {
      this.touched = intent;
      return;
    }
    if (intent && !intent.end) {
      intent.started_at = e.at;
      this.endLife(intent, "start_failed", e);
      return;
    }
    this.supersedePending(e);
    const life = this.newLife(null);
    life.started_at = e.at;
    life.start = { ...startRecord(e), planned: false };
    this.endLife(life, "start_failed", e);
  }

  private lifeClaimed(e: JournalEvent): void {
    const pid = num(e.pid);
    const holder = this.holdingLife;
    if (
      holder &&
      holder.pid === pid &&
      (str(e.start_time) ?? holder.start_time) === holder.start_time
    ) {
      this.touched = holder;
      return;
    }
    if (holder) this.endLife(holder, "replaced", e);
    const life = this.pendingLife ?? this.newLife(null);
    this.pendingLife = null;
    life.claimed_at = e.at;
    life.pid = pid;
    life.start_time = str(e.start_time);
    this.holdingLife = life;
    this.touched = life;
  }

  private lifeStopped(e: JournalEvent): void {
    if (!this.lives) return;
    const who = str(e.who);
    const holder = who === "leftover" ? null : this.holderOf(e);
    if (holder && (who === "holder" || num(e.pid) !== null)) {
      this.endLife(holder, "stopped", e);
      return;
    }
    const pending = this.pendingLife;
    if (pending?.start && isAbout(e, pending.start)) this.endLife(pending, "stopped", e);
  }

  /**
   * A stand-down ends the life of a holder it found dead (`holder_state`; its claim is left for
   * the start after `resume`), and a start's that never claimed: nothing starts until then. A
   * holder left alive (an auth stand-down) goes on.
   */
  private lifeStoodDown(e: JournalEvent): void {
    if (!this.lives) return;
    const state = str(e.holder_state);
    const holder = this.holdingLife;
    if (holder && state !== null && ["dead", "reused", "unreadable"].includes(state))
      this.endLife(holder, "stood_down", e);
    if (this.pendingLife) this.endLife(this.pendingLife, "stood_down", e);
  }

  /** The open manager's time ended, and how. */
  private end(type: string, at: string): void {
    if (!this.open) return;
    this.open.ended = type;
    this.open.ended_at = at;
    this.open = null;
  }
}
