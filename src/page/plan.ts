import type { EventOf, JournalEvent } from "../journal/journal.js";
import { isPersonsUnpause, type ReplayedState, replay } from "../journal/replay.js";
import { parseIso } from "../util/time.js";
import { composePage, composeReminder, isPageKind, kindOf, type PageKind } from "./compose.js";
import type { Page } from "./ntfy.js";

/** The page settings the plan reads (Policy's fields, in ms and counts). */
export interface PagePolicy {
  pageCooldown: number;
  remindEvery: number;
  reminders: number;
}

/** What a page is about: a kind of event, or the close of an incident (`recovered`). */
export type SentKind = PageKind | "recovered";

/** One page to send now. */
export interface Attempt {
  kind: SentKind;
  page: Page;
  /** A page that failed before and is sent again. */
  retry?: true;
  /** The Nth reminder of the current stand-down. */
  reminder?: number;
  /** A retry: how many times the page has failed so far. */
  failures?: number;
}

/** The first retry of a failed page waits this long; each after it twice as long… */
export const RETRY_FIRST_MS = 5 * 60_000;
/** …up to this (DESIGN §18: a failing server is not sent every page at every tick). */
export const RETRY_MAX_MS = 60 * 60_000;

/** How long after its `failures`-th failure a page is tried again: 5 min, 10, 20, 40, then 1 h. */
export function retryDelay(failures: number): number {
  return Math.min(RETRY_MAX_MS, RETRY_FIRST_MS * 2 ** Math.max(0, Math.min(failures, 20) - 1));
}

/** A page that failed and is still to be delivered: how often, and when it last failed. */
export interface Failures {
  count: number;
  at: string;
  error: string;
}

/** A kind a sent page has: a kind of event's, or an incident's close (`recovered`). */
function isSentKind(v: unknown): v is SentKind {
  return v === "recovered" || isPageKind(v);
}

/** What the journal says about pages: never stored twice, always derived (DESIGN §2). */
export interface PageHistory {
  /** Newest `paged` event of each kind. */
  lastPaged: Map<SentKind, EventOf<"paged">>;
  /** Newest `paged` of each kind that still holds back a repeat (a resume ends it for stand-downs). */
  cooling: Map<SentKind, EventOf<"paged">>;
  /**
   * Per kind, the newest `page_failed` carrying its page that no `paged` of that kind followed
   * and that was not given up (a permanent 4xx).
   */
  pending: Map<SentKind, EventOf<"page_failed"> & { page: Page }>;
  /** Per pending kind: how many times it has failed (retries journal a count, not the page). */
  failures: Map<SentKind, Failures>;
  state: ReplayedState;
  /** Reminders delivered since the current stand-down began. */
  remindersSent: number;
}

export function pageHistory(journal: readonly JournalEvent[]): PageHistory {
  const lastPaged = new Map<SentKind, EventOf<"paged">>();
  const cooling = new Map<SentKind, EventOf<"paged">>();
  const pending = new Map<SentKind, EventOf<"page_failed"> & { page: Page }>();
  const failures = new Map<SentKind, Failures>();
  const state = replay(journal);
  const standDownAt = state.stoodDown ? journal.indexOf(state.stoodDown) : -1;
  let remindersSent = 0;
  journal.forEach((e, i) => {
    // A person's resume ends that incident: the next stand-down is news, so it pages even
    // inside the cooldown. (Pauses come and go on their own; they keep their cooldown.)
    if (e.type === "cleared") cooling.delete("stood_down");
    // After a recovery the phone says all is well: the next problem of that kind is news. (A
    // pause comes and goes by itself: it keeps its cooldown.)
    if (e.type === "incident_closed" && isSentKind(e.kind) && e.kind !== "paused")
      cooling.delete(e.kind);
    if (e.type === "paged" && isSentKind(e.kind)) {
      lastPaged.set(e.kind, e);
      cooling.set(e.kind, e);
      pending.delete(e.kind);
      failures.delete(e.kind);
      if (e.kind === "stood_down" && standDownAt >= 0 && i > standDownAt && e.reminder)
        remindersSent++;
    } else if (e.type === "page_failed" && isSentKind(e.kind)) {
      const error = e.error ?? "";
      if (e.permanent === true) {
        // a server that refused it for good: journaled once, never sent again
        pending.delete(e.kind);
        failures.delete(e.kind);
      } else if (e.page) {
        // The page as it was sent (its actions are page/ntfy.ts's own shape).
        pending.set(e.kind, { ...e, page: e.page as unknown as Page });
        failures.set(e.kind, { count: 1, at: e.at, error });
      } else if (pending.has(e.kind)) {
        // a retry that failed again: journaled as a count
        const count = e.failures ?? (failures.get(e.kind)?.count ?? 1) + 1;
        failures.set(e.kind, { count, at: e.at, error });
      }
    }
  });
  return { lastPaged, cooling, pending, failures, state, remindersSent };
}

/** A failed page about something that is over (a lifted pause, a cleared stand-down) is dropped. */
export function stillRelevant(kind: SentKind, state: ReplayedState): boolean {
  if (kind === "stood_down") return state.stoodDown !== null;
  if (kind === "paused" || kind === "needs_person") return state.paused !== null;
  return true;
}

/**
 * A pause at a refusal naming no reset that only renews the one before it (DESIGN §5: it pages
 * once, not at every fallback renewal): the previous `paused` said a person must act about the
 * same words, and since then no manager saved and no person unpaused or resumed.
 */
export function isRenewal(journal: readonly JournalEvent[], e: EventOf<"paused">): boolean {
  // The journal holds `e` itself (read back from disk: found by its time and type).
  let i = journal.length;
  while (i > 0 && !(journal[i - 1]?.type === e.type && journal[i - 1]?.at === e.at)) i--;
  if (i === 0) i = journal.length + 1;
  for (let j = i - 2; j >= 0; j--) {
    const p = journal[j] as JournalEvent;
    if (p.type === "saved" || p.type === "hand_over" || p.type === "cleared") return false;
    if (p.type === "unpaused" && isPersonsUnpause(p)) return false;
    if (p.type === "paused")
      return (
        typeof p.needs_person === "string" &&
        (p.limit_text ?? p.needs_person) === (e.limit_text ?? e.needs_person)
      );
  }
  return false;
}

/** When the next stand-down reminder is due (ms), or null when none will be sent. */
export function nextReminderAt(history: PageHistory, policy: PagePolicy): number | null {
  if (!history.state.stoodDown || policy.reminders <= 0) return null;
  if (history.remindersSent >= policy.reminders) return null;
  const last = history.lastPaged.get("stood_down");
  if (!last) return null; // the first page never got through: retries handle it, not reminders
  const at = parseIso(last.at);
  return Number.isNaN(at) ? null : at + policy.remindEvery;
}

/**
 * Which pages to send now (pure). `journal` is the whole journal, including `events` (the ones
 * the caller just journaled). At most one page per kind per call; a kind paged within the
 * cooldown is not paged again; on a tick, undelivered pages are retried and stand-down
 * reminders fall due.
 */
export function planPages(input: {
  journal: readonly JournalEvent[];
  events: readonly JournalEvent[];
  policy: PagePolicy;
  now: number;
  tick: boolean;
  program: { name: string; arg: string; screen?: boolean };
}): Attempt[] {
  const { journal, events, policy, now, tick, program } = input;
  const history = pageHistory(journal);
  const attempts: Attempt[] = [];
  const attempted = new Set<SentKind>();

  // A stuck manager stopped on the way to a stand-down: the urgent page says it all.
  const standsDown = events.some((e) => e.type === "stood_down");
  for (const e of events) {
    const kind = kindOf(e);
    if (!kind || attempted.has(kind)) continue;
    if (kind === "stuck_restart" && standsDown) continue;
    if (kind === "needs_person" && e.type === "paused" && isRenewal(journal, e)) continue;
    const last = history.cooling.get(kind);
    if (last && now - parseIso(last.at) < policy.pageCooldown) continue;
    attempts.push({ kind, page: composePage(kind, e, program, now) });
    attempted.add(kind);
  }
  if (!tick) return attempts;

  for (const [kind, failed] of history.pending) {
    if (attempted.has(kind) || !stillRelevant(kind, history.state)) continue;
    const failures = history.failures.get(kind);
    // backing off: 5 min after the first failure, then twice as long each time, at most 1 h
    if (failures && now < parseIso(failures.at) + retryDelay(failures.count)) continue;
    const attempt: Attempt = { kind, page: failed.page, retry: true };
    if (failures) attempt.failures = failures.count;
    if (typeof failed.reminder === "number") attempt.reminder = failed.reminder;
    attempts.push(attempt);
    attempted.add(kind);
  }

  const due = nextReminderAt(history, policy);
  const standDown = history.state.stoodDown;
  if (standDown && due !== null && now >= due && !attempted.has("stood_down")) {
    const n = history.remindersSent + 1;
    attempts.push({
      kind: "stood_down",
      page: composeReminder(standDown, n, policy.reminders, program, now),
      reminder: n,
    });
  }
  return attempts;
}
