import { checkEvent, type EventOf, type JournalEvent } from "./events.js";

// What a rotation copies to the head of the new journal file (DESIGN §2: state is derived from
// the journal, so what is still true must stay in view once the file holding it drops out of
// the two replay reads). Pure: the caller reads the files.
//
// The copies summarise everything before the file that stays in view, in append order: they are
// drawn from the whole view but that file's own lines, the copies it starts with included (so a
// copy is carried again, once: a copy and its original are one event, by identity). A summary
// drawn from the leaving file alone would put a copy of an old stand-down after the copy of the
// `cleared` that ended it, once the two sit in the two files' heads (at every other rotation from
// the fourth on, when the two come from different files).
// What is kept:
// - the newest event of each type (a stand-down, a pause, the last claim, the newest page);
// - an incident still open: its `incident_opened` and its newest `paged` (the phone has its
//   page), so it closes once, under its own sequence id, however many incidents came after it;
//   an incident that closed is never carried, so a rotation cannot make it look open again;
// - the `incident_closed` of an incident whose opening stays in view;
// - a token used and not yet expired (`remote_accepted`): a press of it again is a replay.

/** An event without its `carried` mark: a copy and its original are one event. */
export function identityOf(e: JournalEvent): string {
  const { carried: _carried, ...rest } = e;
  return JSON.stringify(rest);
}

/**
 * The copies two files start with, in the order replay reads them: the older file's, but for
 * the ones the newer file carried again (whose place there is the truer one), then the newer's.
 */
export function copiesInOrder(
  older: readonly JournalEvent[],
  newer: readonly JournalEvent[],
): JournalEvent[] {
  const again = new Set(newer.map(identityOf));
  return [...older.filter((e) => !again.has(identityOf(e))), ...newer];
}

/** What the file that stays in view holds that a rotation must know. */
export interface Staying {
  /** The copies it starts with. */
  carried: readonly JournalEvent[];
  /** The incidents its lines (copies included) open. */
  opened: ReadonlySet<string>;
  /** The incidents its lines close. */
  closed: ReadonlySet<string>;
}

/** A journal file's text, scanned for what `Staying` holds (only those lines are parsed). */
export function stayingOf(text: string): Staying {
  const carried: JournalEvent[] = [];
  const opened = new Set<string>();
  const closed = new Set<string>();
  for (const line of text.split("\n")) {
    const copy = line.includes('"carried":true');
    const incident = line.includes('"incident_opened"') || line.includes('"incident_closed"');
    if (!copy && !incident) continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      continue; // a torn line says nothing
    }
    // What a reader would skip is not carried again, nor does it close an incident.
    const checked = checkEvent(parsed);
    if (!("event" in checked)) continue;
    const e = checked.event;
    if (copy && e.carried === true) carried.push(e);
    const named = incidentOf(e);
    if (named === null) continue;
    if (e.type === "incident_opened") opened.add(named);
    else if (e.type === "incident_closed") closed.add(named);
  }
  return { carried, opened, closed };
}

/** The incident an event names (incident_opened/closed, paged, …), or null. */
function incidentOf(e: JournalEvent): string | null {
  const v = (e as { incident?: unknown }).incident;
  return typeof v === "string" ? v : null;
}

/** Whether a consumed token's `remote_accepted` still refuses a replay at `now`. */
function unexpired(e: EventOf<"remote_accepted">, now: number): boolean {
  const until = typeof e.expires_at === "string" ? Date.parse(e.expires_at) : Number.NaN;
  return !Number.isFinite(until) || until > now; // an unreadable expiry: kept, to be safe
}

/**
 * The events to copy into the new file, in append order: drawn from the copies of `leaving`
 * (the file dropping out of view) and of `staying`, then the own lines of `leaving`.
 */
export function carriedForward(
  leaving: readonly JournalEvent[],
  staying: Staying,
  now: number,
): JournalEvent[] {
  const view = copiesInOrder(
    leaving.filter((e) => e.carried),
    staying.carried,
  );
  for (const e of leaving) if (!e.carried) view.push(e);
  const keep = new Set<number>();
  const newest = new Map<string, number>();
  const opened = new Map<string, number>();
  const paged = new Map<string, number>();
  const closedAt = new Map<string, number>();
  view.forEach((e, i) => {
    const incident = incidentOf(e);
    if (e.type === "incident_opened") {
      if (incident && !opened.has(incident)) opened.set(incident, i);
      return; // carried while open, never as "the newest of its type"
    }
    newest.set(e.type, i);
    if (e.type === "incident_closed" && incident) {
      if (!closedAt.has(incident)) closedAt.set(incident, i);
    } else if (e.type === "paged" && incident) paged.set(incident, i);
    else if (e.type === "remote_accepted" && unexpired(e, now)) keep.add(i);
  });
  for (const i of newest.values()) keep.add(i);
  for (const [incident, i] of opened) {
    if (closedAt.has(incident) || staying.closed.has(incident)) continue;
    keep.add(i);
    const page = paged.get(incident);
    if (page !== undefined) keep.add(page);
  }
  // Its opening stays in view (a copy at the staying file's head): so must its end.
  for (const [incident, i] of closedAt)
    if (staying.opened.has(incident) && !staying.closed.has(incident)) keep.add(i);
  return [...keep].sort((a, b) => a - b).map((i) => view[i] as JournalEvent);
}
