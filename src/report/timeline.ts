import type { EventOf, JournalEvent } from "../journal/journal.js";
import { type Life, lifecycle } from "../journal/replay.js";
import {
  closeAtWindowEnd,
  closeEnded,
  type IdleSpell,
  type OpenSpells,
  onIdleEvent,
  onWake,
} from "./idle.js";
import type { IncidentSpan } from "./incidents.js";

// The picture of a night (DESIGN §13) as data: journal events in, bars, spans and markers out.
// Pure: no clock, no files. `report --json` prints exactly this; the HTML is drawn from it.

/** How a manager's time ended, as far as the journal says (every one has a legend entry). */
export const ENDINGS = [
  "hand_over",
  "finished",
  "dead",
  "stuck_stopped",
  /** Stopped by the watchdog as idle (`restart_idle`: nudged and still idle, or no pane). */
  "idle_stopped",
  /** Stopped by the watchdog as wedged (`restart_wedged`: a tool call past its own limit). */
  "wedged_stopped",
  "stopped_for_pause",
  /** Stopped by its own host's watchdog: the program's lease was lost (DESIGN §15, a fence). */
  "lease_lost",
  "stopped",
  "released",
  "never_claimed",
  "start_failed",
  /** Another manager claimed while it held the claim, and nothing said how it ended. */
  "replaced",
  /** Started, not claimed yet, and not over (at the window's end). */
  "starting",
  "running",
] as const;
export type Ending = (typeof ENDINGS)[number];

/** One manager's life: from its start (or claim) to how it ended. */
export interface ManagerBar {
  /** 1-based, in start order over the whole journal (stable across windows). */
  n: number;
  pid: number | null;
  start_time: string | null;
  /**
   * When the start that launched it began (its intent's `launch_began`, else its
   * `manager_started`); null: it claimed without a start we saw.
   */
  started_at: string | null;
  claimed_at: string | null;
  /** The last sign of life: its last save, else its claim, else its start. */
  last_seen_at: string;
  /** When the journal recorded its end (null while running). */
  ended_at: string | null;
  ending: Ending;
  /** "hand-over at 152k", "dead", "stuck-stopped", … */
  ending_label: string;
  /** Whether its start was planned (null: no start seen). */
  planned: boolean | null;
  start_reason: string | null;
  launcher: string | null;
  pane: string | null;
  saves: number;
  /** Context tokens at its last save (or its hand-over). */
  last_tokens: number | null;
  hand_over_tokens: number | null;
  /** The hand-over or finish note, or why it was stopped or broken. */
  end_note: string | null;
  /**
   * Dead, stuck-, idle- or wedged-stopped: from its last sign of life to its successor's claim
   * (null: not replaced).
   */
  replaced_after_ms: number | null;
  /** Its idle spells in the window, oldest first; a nudge is drawn on its spell. */
  idle: IdleSpell[];
  /** Wedged-stopped: when the tool call it hung in began (the `restart_wedged` note's `since`). */
  wedged_since: string | null;
}

export interface TokenPoint {
  at: string;
  pid: number | null;
  context_tokens: number;
}

export type SpanKind = "paused" | "stood_down" | "finished" | "sleep_gap";

/** A stretch of program time: a pause, a stand-down, a finish, a gap in the watchdog's runs. */
export interface Span {
  kind: SpanKind;
  from: string;
  /** When it ended, or the end of the window when it still holds (`ongoing`). */
  to: string;
  ongoing: boolean;
  reason: string;
  /** Pauses: until when; gaps: how much was not counted against any manager. */
  until?: string | null;
  discounted_ms?: number;
}

/** A moment worth a marker: a page sent or failed, a failed tick. */
export interface Marker {
  at: string;
  kind: "paged" | "page_failed" | "tick_failed";
  /** The page's kind (`stood_down`, `paused`, …) or null. */
  page_kind: string | null;
  text: string;
  priority: number | null;
}

export interface Timeline {
  program: string;
  root: string;
  /** The window asked for (`--since` to the time of the report). */
  window: { from: string; to: string };
  /** The drawn axis: the window, starting no earlier than the program's first event. */
  axis: { from: string; to: string };
  /** Nothing happened in the window and nothing held through it. */
  empty: boolean;
  first_event_at: string | null;
  last_event_at: string | null;
  managers: ManagerBar[];
  tokens: TokenPoint[];
  spans: Span[];
  markers: Marker[];
  /** Every save journaled in the window, whether or not it knew the context size. */
  saves: number;
  /** Whether the program has pages set up (page.ntfy): an empty pages row then means none. */
  pages_configured: boolean;
  /** program.json does not load now (DESIGN §16): the report read the last valid one. */
  config_invalid: { file: string; error: string } | null;
  /** Problem pages' incidents as spans (report/incidents.ts; added by the report command). */
  incidents?: IncidentSpan[];
}

export interface TimelineInput {
  program: string;
  root: string;
  /** Every event kept, oldest first, without rotation's carried copies. */
  events: readonly JournalEvent[];
  from: number;
  to: number;
  pages_configured?: boolean;
  config_invalid?: { file: string; error: string } | null;
}

const ms = (at: string): number => Date.parse(at);

/** `152k`, `1.2M`, `800`. */
export function kTokens(n: number): string {
  if (n >= 1_000_000) return `${(n / 1_000_000).toFixed(1).replace(/\.0$/, "")}M`;
  if (n >= 1000) return `${Math.round(n / 1000)}k`;
  return String(n);
}

export function endingLabel(bar: Pick<ManagerBar, "ending" | "hand_over_tokens">): string {
  switch (bar.ending) {
    case "hand_over":
      return bar.hand_over_tokens === null
        ? "hand-over"
        : `hand-over at ${kTokens(bar.hand_over_tokens)}`;
    case "stuck_stopped":
      return "stuck-stopped";
    case "idle_stopped":
      return "idle-stopped";
    case "wedged_stopped":
      return "wedged-stopped";
    case "stopped_for_pause":
      return "stopped for the pause";
    case "lease_lost":
      return "stopped: lease lost";
    case "never_claimed":
      return "never claimed";
    case "start_failed":
      return "start failed";
    default:
      return bar.ending;
  }
}

/** Builds the timeline of one program's journal over [from, to]. */
export function buildTimeline(input: TimelineInput): Timeline {
  const events = input.events.filter((e) => !Number.isNaN(ms(e.at)));
  const bars = managerBars(events, iso(input.to));
  const spans = programSpans(events, input.to);
  markStoppedForPause(bars, spans);
  const inWindow = (at: string) => ms(at) >= input.from && ms(at) <= input.to;
  const overlaps = (a: number, b: number) => b >= input.from && a <= input.to;
  const managers = bars
    .filter((b) =>
      overlaps(ms(b.started_at ?? b.claimed_at ?? b.last_seen_at), ms(b.ended_at ?? iso(input.to))),
    )
    .map((b) => ({ ...b, idle: b.idle.filter((s) => overlaps(ms(s.from), ms(s.to))) }));
  const shownSpans = spans.filter((s) => overlaps(ms(s.from), ms(s.to)));
  const tokens = tokenPoints(events).filter((p) => inWindow(p.at));
  const markers = markersOf(events).filter((m) => inWindow(m.at));
  const first = events[0]?.at ?? null;
  const axisFrom = first ? Math.max(input.from, ms(first) - 1000) : input.from;
  return {
    program: input.program,
    root: input.root,
    window: { from: iso(input.from), to: iso(input.to) },
    axis: { from: iso(Math.min(axisFrom, input.to)), to: iso(input.to) },
    empty:
      managers.length === 0 &&
      shownSpans.length === 0 &&
      markers.length === 0 &&
      !events.some((e) => inWindow(e.at)),
    first_event_at: first,
    last_event_at: events.at(-1)?.at ?? null,
    managers,
    tokens,
    spans: shownSpans,
    markers,
    saves: events.filter((e) => e.type === "saved" && inWindow(e.at)).length,
    pages_configured: input.pages_configured === true,
    config_invalid: input.config_invalid ?? null,
  };
}

const iso = (t: number) => new Date(t).toISOString();

/** The mutable record of a bar while the journal is replayed. */
type Building = Omit<ManagerBar, "ending" | "ending_label" | "replaced_after_ms"> & {
  ending: Ending | null;
  replaced_after_ms: number | null;
};

function newBar(life: Life, at: string): Building {
  return {
    n: life.n,
    pid: life.pid,
    start_time: life.start_time,
    started_at: null,
    claimed_at: null,
    last_seen_at: at,
    ended_at: null,
    ending: null,
    planned: null,
    start_reason: null,
    launcher: null,
    pane: null,
    saves: 0,
    last_tokens: null,
    hand_over_tokens: null,
    end_note: null,
    replaced_after_ms: null,
    idle: [],
    wedged_since: null,
  };
}

/**
 * One bar per manager's life (replay's lifecycle fold: every order of `manager_starting`,
 * `claimed` and `manager_started` is one life), with what the journal says of each event about
 * it: saves, tokens, idle spells, how it ended. `to`: the window's end.
 */
function managerBars(events: readonly JournalEvent[], to: string): ManagerBar[] {
  const bars = new Map<Life, Building>();
  /** Bars not ended yet, with their lives: the few an event may end. */
  const open = new Map<Building, Life>();
  const spells: OpenSpells = new Map();
  const lives = lifecycle(events, (e, life) => {
    if (life) {
      let b = bars.get(life);
      if (!b) {
        b = newBar(life, e.at);
        bars.set(life, b);
        open.set(b, life);
      }
      onEvent(b, life, e, spells);
    }
    // An event may end a life it does not concern (a claim ends the holder it replaces).
    for (const [b, l] of open) {
      if (l.end && b.ending === null) endBar(b, l);
      if (b.ending !== null) open.delete(b);
    }
    if (spells.size > 0) closeEnded(spells);
  });
  closeAtWindowEnd(spells, to);
  const out = lives.map((l) => {
    const b = bars.get(l) ?? newBar(l, l.claimed_at ?? l.started_at ?? to);
    syncStart(b, l);
    return b;
  });
  markReplacements(out);
  return out.map((b) => {
    const ending = b.ending ?? (b.claimed_at !== null ? "running" : "starting");
    return {
      ...b,
      ending,
      ending_label: endingLabel({ ending, hand_over_tokens: b.hand_over_tokens }),
      // A wedged note whose stop did not follow (it saved meanwhile) is no wedged end.
      wedged_since: ending === "wedged_stopped" ? b.wedged_since : null,
    };
  });
}

/** What the life's start and claim say, onto its bar. */
function syncStart(b: Building, life: Life): void {
  const s = life.start;
  b.pid = life.pid;
  b.start_time = life.start_time;
  // The launch began at its intent (a tmux or herdr start is journaled once its prompt arrived,
  // its claim often before that).
  b.started_at = s ? (s.launch_began ?? s.at) : null;
  b.planned = s ? s.planned : null;
  b.start_reason = s ? s.reason || null : null;
  b.launcher = s ? s.launcher : null;
  b.pane = s?.pane ?? s?.window ?? null;
  b.claimed_at = life.claimed_at;
}

/** One event about a bar's life. */
function onEvent(b: Building, life: Life, e: JournalEvent, spells: OpenSpells): void {
  syncStart(b, life);
  if (e.type === "claimed" && life.claimed_at === e.at) b.last_seen_at = e.at;
  if (b.ending !== null) return;
  switch (e.type) {
    case "saved":
      if (b.claimed_at !== null) {
        b.saves++;
        b.last_seen_at = e.at;
        b.last_tokens = e.context_tokens ?? b.last_tokens;
        onWake(spells, b, e.at);
      }
      break;
    case "hand_over":
      b.hand_over_tokens = e.context_tokens ?? null;
      b.last_tokens = b.hand_over_tokens ?? b.last_tokens;
      b.last_seen_at = e.at;
      onWake(spells, b, e.at);
      break;
    case "nudged":
    case "restart_idle":
      if (b.claimed_at !== null) onIdleEvent(spells, b, e);
      break;
    case "restart_wedged":
      b.wedged_since = e.since ?? null;
      break;
  }
  if (life.end) endBar(b, life);
}

/** How a life's end reads on its bar. */
function endBar(b: Building, life: Life): void {
  const end = life.end;
  if (!end || b.ending !== null) return;
  const e = end.event;
  // The event that ended it (a hand-over, a stop, a break…): what its type says, if it says it.
  const note = "note" in e ? e.note : undefined;
  const reason = "reason" in e ? e.reason : undefined;
  const claimed = life.claimed_at !== null;
  b.ended_at = end.at;
  switch (end.how) {
    case "hand_over":
      b.ending = "hand_over";
      b.end_note = note ?? null;
      break;
    case "finished":
      b.ending = "finished";
      b.end_note = note ?? null;
      break;
    case "released":
      b.ending = "released";
      b.end_note = "forced" in e && e.forced ? `removed by a person: ${note ?? ""}` : null;
      break;
    case "claim_broken":
      b.ending = "holder_state" in e && e.holder_state === "stopped" ? "stopped" : "dead";
      b.end_note = reason ?? null;
      break;
    case "stopped":
      b.ending = claimed ? stoppedEnding(e) : "never_claimed";
      b.end_note = reason ?? null;
      break;
    case "stood_down":
      b.ending = claimed ? "dead" : "never_claimed";
      b.end_note = reason ?? null;
      break;
    case "replaced":
      b.ending = "replaced";
      b.end_note = null;
      break;
    case "start_failed":
      b.ending = "start_failed";
      b.end_note = reason ?? null;
      break;
    case "superseded":
    case "cut_short":
      b.ending = "never_claimed";
      b.end_note = null;
      break;
  }
}

/** The watchdog's unplanned stops of a live holder, by the tick's decision (rules 9, 9a, 9b). */
const STOPPED_AS: Record<string, Ending> = {
  restart_stuck: "stuck_stopped",
  restart_idle: "idle_stopped",
  restart_wedged: "wedged_stopped",
  leased_elsewhere: "lease_lost",
};

function stoppedEnding(e: JournalEvent): Ending {
  if ("planned" in e && e.planned === true) return "stopped_for_pause";
  return STOPPED_AS[("decision" in e ? e.decision : undefined) ?? ""] ?? "stopped";
}

/** The endings a successor replaces, timed from the last sign of life to the next claim. */
export const REPLACED_ENDINGS = [
  "dead",
  "stuck_stopped",
  "idle_stopped",
  "wedged_stopped",
] as const;
export type ReplacedEnding = (typeof REPLACED_ENDINGS)[number];
export const isReplaced = (ending: Ending | null): ending is ReplacedEnding =>
  (REPLACED_ENDINGS as readonly string[]).includes(ending ?? "");

/** Dead or stopped as stuck, idle or wedged: how long until the next manager claimed. */
function markReplacements(bars: Building[]): void {
  bars.forEach((b, i) => {
    if (!isReplaced(b.ending)) return;
    const next = bars.slice(i + 1).find((x) => x.claimed_at !== null);
    if (next?.claimed_at) b.replaced_after_ms = ms(next.claimed_at) - ms(b.last_seen_at);
  });
}

/**
 * A manager told to stop by a pause (it saves, sees the pause and exits) is found dead by a
 * later tick; its last sign of life inside the pause says it did what it was told.
 */
function markStoppedForPause(bars: ManagerBar[], spans: readonly Span[]): void {
  for (const b of bars) {
    if (b.ending !== "dead") continue;
    const seen = ms(b.last_seen_at);
    const pause = spans.find((s) => s.kind === "paused" && ms(s.from) <= seen && seen <= ms(s.to));
    if (pause) {
      b.ending = "stopped_for_pause";
      b.ending_label = endingLabel(b);
    }
  }
}

/** Pauses, stand-downs, finishes and sleep gaps, each from its event to the one that ended it. */
function programSpans(events: readonly JournalEvent[], to: number): Span[] {
  const spans: Span[] = [];
  const open: Partial<Record<SpanKind, Span>> = {};
  const begin = (kind: SpanKind, e: JournalEvent, reason: string, extra: Partial<Span> = {}) => {
    if (open[kind]) return; // a second `paused` while paused: the first still holds
    const s: Span = { kind, from: e.at, to: iso(to), ongoing: true, reason, ...extra };
    open[kind] = s;
    spans.push(s);
  };
  const close = (kind: SpanKind, at: string) => {
    const s = open[kind];
    if (!s) return;
    s.to = at;
    s.ongoing = false;
    delete open[kind];
  };
  for (const e of events) {
    switch (e.type) {
      case "paused":
        begin("paused", e, e.reason ?? "paused", { until: e.until ?? null });
        break;
      case "unpaused":
        close("paused", e.at);
        break;
      case "stood_down":
        begin("stood_down", e, e.reason ?? "stood down");
        break;
      case "cleared":
        close("stood_down", e.at);
        break;
      case "finished":
        begin("finished", e, e.note ?? "finished");
        break;
      case "reopened":
        close("finished", e.at);
        break;
      case "sleep_gap":
        spans.push(sleepGap(e));
        break;
    }
  }
  // A pause whose end passed with no tick since: it ended at its `until` as far as time goes.
  const p = open.paused;
  if (p?.until && ms(p.until) < to) {
    p.to = p.until;
    p.ongoing = false;
  }
  return spans;
}

function sleepGap(e: EventOf<"sleep_gap">): Span {
  const from = e.from ?? e.at;
  const discounted = e.discounted_ms ?? 0;
  return {
    kind: "sleep_gap",
    from,
    to: e.to ?? e.at,
    ongoing: false,
    reason: `the watchdog did not run (the host slept or its timer was held back)`,
    discounted_ms: discounted,
  };
}

function tokenPoints(events: readonly JournalEvent[]): TokenPoint[] {
  const out: TokenPoint[] = [];
  for (const e of events) {
    if (e.type !== "saved" && e.type !== "hand_over") continue;
    const t = e.context_tokens ?? null;
    if (t !== null) out.push({ at: e.at, pid: e.pid ?? null, context_tokens: t });
  }
  return out;
}

function markersOf(events: readonly JournalEvent[]): Marker[] {
  const out: Marker[] = [];
  for (const e of events) {
    if (e.type === "paged") {
      const text = e.title ?? e.kind ?? "page";
      out.push({
        at: e.at,
        kind: "paged",
        page_kind: e.kind ?? null,
        text,
        priority: e.priority ?? null,
      });
    } else if (e.type === "page_failed") {
      const page = e.page;
      const text = `not delivered: ${page?.title ?? e.kind ?? "page"} (${e.error ?? "?"})`;
      out.push({
        at: e.at,
        kind: "page_failed",
        page_kind: e.kind ?? null,
        text,
        priority: page?.priority ?? null,
      });
    } else if (e.type === "tick_failed") {
      const text = `tick failed: ${e.error ?? "?"}`;
      out.push({ at: e.at, kind: "tick_failed", page_kind: null, text, priority: null });
    }
  }
  return out;
}
