import type { JournalEvent } from "../journal/journal.js";
import { isPersonsUnpause } from "../journal/replay.js";

// Incidents (DESIGN §8, "An incident closes its own page"): every page that reports a problem
// opens one, with an id its pages carry as their ntfy sequence id; when the condition ends it is
// closed, once. Derived from the journal (`incident_opened`, `incident_closed`), never stored
// twice. Pure: no clock, no files.

/** The kinds of page that report a problem, and so open an incident. */
export const INCIDENT_KINDS = [
  "stood_down",
  "paused",
  "tick_failed",
  "blocked",
  "api_errors",
  "lease_lost",
  "config_invalid",
  "start_failed",
] as const;
export type IncidentKind = (typeof INCIDENT_KINDS)[number];

export function isIncidentKind(kind: unknown): kind is IncidentKind {
  return typeof kind === "string" && (INCIDENT_KINDS as readonly string[]).includes(kind);
}

/** An incident id: 12 characters of [a-z0-9] (the caller draws them at random). */
export const INCIDENT_ID = /^[a-z0-9]{12}$/;

/** The ntfy sequence id of an incident's pages (ntfy allows [-_A-Za-z0-9]{1,64}). */
export function sequenceIdOf(incident: string): string {
  return `sheepdog-${incident}`;
}

/** The incident a page belongs to, from its sequence id; null for a page of none. */
export function incidentOfSequenceId(sequenceId: unknown): string | null {
  if (typeof sequenceId !== "string" || !sequenceId.startsWith("sheepdog-")) return null;
  const id = sequenceId.slice("sheepdog-".length);
  return INCIDENT_ID.test(id) ? id : null;
}

export interface Incident {
  id: string;
  kind: IncidentKind;
  sequence_id: string;
  /** When its `incident_opened` was journaled. */
  opened_at: string;
  /** When the problem began: the event that opened it (its page's cause). */
  since: string;
  /** The title of the page that opened it. */
  title: string;
  /** Index of its `incident_opened` in the journal it was read from. */
  index: number;
  /** A page of it reached the server (`paged` with its id): a close is worth publishing. */
  delivered: boolean;
  /** Its `incident_closed`, when it has one. */
  closed: JournalEvent | null;
}

/** Every incident of a journal, by id, in the order they opened. */
export function incidentsOf(journal: readonly JournalEvent[]): Map<string, Incident> {
  const all = new Map<string, Incident>();
  journal.forEach((e, index) => {
    const id = typeof e.incident === "string" ? e.incident : null;
    if (!id) return;
    if (e.type === "incident_opened" && isIncidentKind(e.kind) && !all.has(id)) {
      all.set(id, {
        id,
        kind: e.kind,
        sequence_id: typeof e.sequence_id === "string" ? e.sequence_id : sequenceIdOf(id),
        opened_at: e.at,
        since: typeof e.since === "string" ? e.since : e.at,
        title: typeof e.title === "string" ? e.title : "",
        index,
        delivered: false,
        closed: null,
      });
      return;
    }
    const inc = all.get(id);
    if (!inc) return;
    if (e.type === "paged") inc.delivered = true;
    else if (e.type === "incident_closed" && !inc.closed) inc.closed = e;
  });
  return all;
}

/** The open incident of each kind (at most one a kind: a repeat joins the one still open). */
export function openIncidents(journal: readonly JournalEvent[]): Map<IncidentKind, Incident> {
  const open = new Map<IncidentKind, Incident>();
  for (const inc of incidentsOf(journal).values()) if (!inc.closed) open.set(inc.kind, inc);
  return open;
}

/** What the journal alone cannot say: what this call (a tick, a command) knows. */
export interface CloseContext {
  /** This call ends a tick or a watch pass. */
  tick: boolean;
  /** …and that pass failed. */
  tickFailed: boolean;
  /** program.json loaded (the program is not running on its last valid copy). */
  configValid: boolean;
  /** The live claim holder's pid, when one holds the claim. */
  holderPid: number | null;
  now: string;
}

/** How an incident's condition ended: by itself, or by a person's command (where from). */
export type CloseHow = "recovered" | "person" | "phone";

export interface Closing {
  incident: Incident;
  how: CloseHow;
  /** When the condition ended. */
  at: string;
  /** The manager that runs now, when known. */
  pid: number | null;
}

const num = (v: unknown): number | null => (typeof v === "number" ? v : null);

/** The events after which a manager is known to run again (its claim, a save, a hand-over). */
const MANAGER_RUNS = new Set(["claimed", "saved", "hand_over"]);

/**
 * Whether an incident's condition has ended, from the events journaled after it opened (and,
 * where the journal cannot say, the context: a tick that went through, a config that loads).
 * `context` null: the journal's word only (a command from the phone is judged by it).
 */
export function closingOf(
  incident: Incident,
  after: readonly JournalEvent[],
  context: CloseContext | null,
): Closing | null {
  const close = (how: CloseHow, at: string, pid: number | null): Closing => ({
    incident,
    how,
    at,
    pid: pid ?? context?.holderPid ?? null,
  });
  const byWhom = (e: JournalEvent): CloseHow => (e.by === "phone" ? "phone" : "person");
  const first = (pick: (e: JournalEvent) => boolean) => after.find(pick) ?? null;
  switch (incident.kind) {
    case "stood_down": {
      const e = first((x) => x.type === "cleared");
      return e ? close(byWhom(e), e.at, null) : null;
    }
    case "paused": {
      const e = first((x) => x.type === "unpaused");
      if (!e) return null;
      return close(isPersonsUnpause(e) ? byWhom(e) : "recovered", e.at, null);
    }
    case "start_failed": {
      const e = first((x) => x.type === "claimed");
      return e ? close("recovered", e.at, num(e.pid)) : null;
    }
    case "blocked":
    case "api_errors": {
      const e = first((x) => MANAGER_RUNS.has(x.type));
      return e ? close("recovered", e.at, num(e.pid)) : null;
    }
    case "lease_lost": {
      const e = first((x) => x.type === "lease_acquired" || x.type === "claimed");
      return e ? close("recovered", e.at, num(e.pid)) : null;
    }
    case "tick_failed":
      return context?.tick && !context.tickFailed ? close("recovered", context.now, null) : null;
    case "config_invalid":
      return context?.configValid ? close("recovered", context.now, null) : null;
  }
}

/** Every open incident whose condition has ended, oldest first. */
export function closings(journal: readonly JournalEvent[], context: CloseContext): Closing[] {
  const out: Closing[] = [];
  for (const inc of incidentsOf(journal).values()) {
    if (inc.closed) continue;
    const c = closingOf(inc, journal.slice(inc.index + 1), context);
    if (c) out.push(c);
  }
  return out;
}

/** Whether an incident is still open by the journal's word (closed, or its condition ended). */
export function stillOpen(incident: Incident, journal: readonly JournalEvent[]): boolean {
  return !incident.closed && closingOf(incident, journal.slice(incident.index + 1), null) === null;
}
