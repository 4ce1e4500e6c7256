import type { JournalEvent } from "../journal/journal.js";
import { isPersonsUnpause, type ReplayedState, replay } from "../journal/replay.js";
import { parseIso } from "../util/time.js";
import { composePage, composeReminder, kindOf, type PageKind } from "./compose.js";
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
}

const KINDS = new Set<string>([
  "stood_down",
  "tick_failed",
  "stuck_restart",
  "paused",
  "needs_person",
  "cleared",
  "finished",
  "start_failed",
  "config_invalid",
  "api_errors",
  "blocked",
  "lease_lost",
  "lease_taken_over",
  "recovered",
]);

function isPageKind(v: unknown): v is SentKind {
  return typeof v === "string" && KINDS.has(v);
}

function isPage(v: unknown): v is Page {
  const p = v as Page;
  return (
    !!p &&
    typeof p.title === "string" &&
    typeof p.message === "string" &&
    typeof p.priority === "number" &&
    Array.isArray(p.tags)
  );
}

/** What the journal says about pages: never stored twice, always derived (DESIGN §2). */
export interface PageHistory {
  /** Newest `paged` event of each kind. */
  lastPaged: Map<SentKind, JournalEvent>;
  /** Newest `paged` of each kind that still holds back a repeat (a resume ends it for stand-downs). */
  cooling: Map<SentKind, JournalEvent>;
  /** Per kind, the newest `page_failed` that no `paged` of that kind followed. */
  pending: Map<SentKind, JournalEvent>;
  state: ReplayedState;
  /** Reminders delivered since the current stand-down began. */
  remindersSent: number;
}

export function pageHistory(journal: readonly JournalEvent[]): PageHistory {
  const lastPaged = new Map<SentKind, JournalEvent>();
  const cooling = new Map<SentKind, JournalEvent>();
  const pending = new Map<SentKind, JournalEvent>();
  const state = replay(journal);
  const standDownAt = state.stoodDown ? journal.indexOf(state.stoodDown) : -1;
  let remindersSent = 0;
  journal.forEach((e, i) => {
    // A person's resume ends that incident: the next stand-down is news, so it pages even
    // inside the cooldown. (Pauses come and go on their own; they keep their cooldown.)
    if (e.type === "cleared") cooling.delete("stood_down");
    // After a recovery the phone says all is well: the next problem of that kind is news. (A
    // pause comes and goes by itself: it keeps its cooldown.)
    if (e.type === "incident_closed" && isPageKind(e.kind) && e.kind !== "paused")
      cooling.delete(e.kind);
    if (!isPageKind(e.kind)) return;
    if (e.type === "paged") {
      lastPaged.set(e.kind, e);
      cooling.set(e.kind, e);
      pending.delete(e.kind);
      if (e.kind === "stood_down" && standDownAt >= 0 && i > standDownAt && e.reminder)
        remindersSent++;
    } else if (e.type === "page_failed" && isPage(e.page)) {
      pending.set(e.kind, e);
    }
  });
  return { lastPaged, cooling, pending, state, remindersSent };
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
export function isRenewal(journal: readonly JournalEvent[], e: JournalEvent): boolean {
  // The journal holds `e` itself (read back from disk: found by its time and type).
  let i = journal.length;
  while (i > 0 && !(journal[i - 1]?.type === e.type && journal[i - 1]?.at === e.at)) i--;
  if (i === 0) i = journal.length + 1;
  for (let j = i - 2; j >= 0; j--) {
    const p = journal[j] as JournalEvent;
    if (p.type === "saved" || p.type === "hand_over" || p.type === "cleared") return false;
    if (isPersonsUnpause(p)) return false;
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
  program: { name: string; arg: string };
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
    if (kind === "needs_person" && isRenewal(journal, e)) continue;
    const last = history.cooling.get(kind);
    if (last && now - parseIso(last.at) < policy.pageCooldown) continue;
    attempts.push({ kind, page: composePage(kind, e, program, now) });
    attempted.add(kind);
  }
  if (!tick) return attempts;

  for (const [kind, failed] of history.pending) {
    if (attempted.has(kind) || !stillRelevant(kind, history.state)) continue;
    const attempt: Attempt = { kind, page: failed.page as Page, retry: true };
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
