import { randomInt } from "node:crypto";
import type { ProgramContext } from "../config/context.js";
import type { JournalEvent, NewEvent } from "../journal/journal.js";
import { machineId } from "../process/identity.js";
import { hostKey } from "../remote/secret.js";
import { formatDuration } from "../util/duration.js";
import { clock, zoneName } from "../util/local-time.js";
import { iso } from "../util/time.js";
import { pageActions } from "./actions.js";
import { programArg } from "./compose.js";
import {
  type CloseContext,
  type Closing,
  closings,
  type Incident,
  type IncidentKind,
  incidentOfSequenceId,
  incidentsOf,
  isIncidentKind,
  sequenceIdOf,
} from "./incident.js";
import type { NtfyTarget, Page } from "./ntfy.js";
import type { Attempt } from "./plan.js";

// The pages hook's incident step (DESIGN §8): closes the incidents whose condition ended (and
// publishes their close under the same sequence id), and gives every problem page its incident's
// sequence id and its actions, opening an incident for a problem that has none.

type Recorder = (event: NewEvent) => void;

const ID_CHARS = "abcdefghijklmnopqrstuvwxyz0123456789";
function newIncidentId(): string {
  let id = "";
  for (let i = 0; i < 12; i++) id += ID_CHARS[randomInt(ID_CHARS.length)];
  return id;
}

/** `1 h 10 m`, `45 s`: a duration as a page says it. */
export function spokenDuration(ms: number): string {
  return formatDuration(ms)
    .replace(/(\d+)([a-z]+)/g, "$1 $2 ")
    .trim();
}

/** The close's title and the words its message begins with. */
function closeWords(c: Closing, name: string): { title: string; what: string } {
  const kind = c.incident.kind;
  const verb = kind === "paused" ? "unpaused" : "resumed";
  if (c.how === "person") return { title: `${name} ${verb}`, what: `${verb} by a person` };
  if (c.how === "phone") return { title: `${name} ${verb}`, what: `${verb} from the phone` };
  if (kind === "paused") return { title: `${name}: the pause is over`, what: "recovered" };
  return { title: `${name} recovered`, what: "recovered" };
}

/**
 * The close of an incident, published under its sequence id at low priority, e.g. "recovered
 * at 07:12 CET after 1 h 10 m; manager pid 4242" (times in the host's zone, named).
 */
export function composeClose(c: Closing, program: { name: string }): Page {
  const at = Date.parse(c.at);
  const since = Date.parse(c.incident.since);
  const words = closeWords(c, program.name);
  const after = Number.isFinite(since) ? ` after ${spokenDuration(Math.max(0, at - since))}` : "";
  const pid = c.pid !== null ? `; manager pid ${c.pid}` : "";
  return {
    title: words.title,
    message: [
      `${words.what} at ${clock(at)} ${zoneName(at)}${after}${pid}`,
      c.incident.title && `It was: ${c.incident.title}`,
    ]
      .filter(Boolean)
      .join("\n"),
    priority: 2,
    tags: ["white_check_mark"],
    sequence_id: c.incident.sequence_id,
  };
}

/** Where a page's buttons publish, when a control topic is set and this host's key is at hand. */
function controlOf(ntfy: NtfyTarget & { control_topic?: string | undefined }): {
  control: { server: string; topic: string; host: string; key: Buffer } | null;
  error?: string;
} {
  if (!ntfy.control_topic) return { control: null };
  try {
    const key = hostKey({ create: true });
    if (!key) return { control: null };
    return {
      control: { server: ntfy.server, topic: ntfy.control_topic, host: machineId(), key },
    };
  } catch (err) {
    return { control: null, error: (err as Error).message };
  }
}

export interface IncidentInput {
  program: ProgramContext;
  ntfy: NtfyTarget & { control_topic?: string | undefined };
  /** The whole journal, as the planner read it. */
  journal: readonly JournalEvent[];
  /** What planPages asked for. */
  attempts: Attempt[];
  context: Omit<CloseContext, "now">;
  now: number;
  record: Recorder;
}

/** An attempt and the fields its `paged`/`page_failed` event adds. */
export interface IncidentAttempt extends Attempt {
  extra?: { incident?: string; actions_error?: string };
}

/**
 * Closes what ended, then returns the pages to send: each close (when a page of its incident
 * got through), then the planned pages with their incident's sequence id and actions. A retry
 * of a page whose incident is closed, and the `cleared` page of a stand-down that closed here
 * (its close says it), are dropped. Journals `incident_closed` and `incident_opened`.
 */
export function withIncidents(input: IncidentInput): IncidentAttempt[] {
  const { program, journal, now, record } = input;
  const out: IncidentAttempt[] = [];
  const closed = new Set<string>();
  for (const c of closings(journal, { ...input.context, now: iso(now) })) {
    closed.add(c.incident.id);
    // A hand-edited `at` makes NaN, which JSON writes as null: left out, or the line is skipped
    // when read and the close is journaled again on every pass.
    const after = Math.max(0, Date.parse(c.at) - Date.parse(c.incident.since));
    record({
      type: "incident_closed",
      incident: c.incident.id,
      kind: c.incident.kind,
      how: c.how,
      ended_at: c.at,
      ...(Number.isFinite(after) ? { after_ms: after } : {}),
      ...(c.pid !== null ? { pid: c.pid } : {}),
    });
    if (c.incident.delivered)
      out.push({
        kind: "recovered",
        page: composeClose(c, program),
        extra: { incident: c.incident.id },
      });
  }
  const all = incidentsOf(journal);
  const open = new Map<string, Incident>();
  for (const inc of all.values()) if (!inc.closed && !closed.has(inc.id)) open.set(inc.kind, inc);
  const isClosed = (id: string) => closed.has(id) || all.get(id)?.closed != null;
  const standDownClosed = [...closed].some((id) => all.get(id)?.kind === "stood_down");
  const arg = programArg(program.name, program.root);
  let control: ReturnType<typeof controlOf> | null = null;

  for (const a of input.attempts) {
    if (a.kind === "cleared" && standDownClosed) continue;
    if (a.retry) {
      const id = incidentOfSequenceId(a.page.sequence_id);
      if (id && isClosed(id)) continue; // what it reported is over
      out.push(id ? { ...a, extra: { incident: id } } : a);
      continue;
    }
    const kind = incidentKindOfPage(a.kind);
    if (kind === null) {
      out.push(a);
      continue;
    }
    let inc = open.get(kind) ?? null;
    if (!inc && a.reminder) {
      out.push(a); // a stand-down from before incidents: reminded as it was paged
      continue;
    }
    if (!inc) {
      const id = newIncidentId();
      const cause = [...journal].reverse().find((e) => e.type !== "paged" && kindMatches(e, kind));
      inc = {
        id,
        kind,
        sequence_id: sequenceIdOf(id),
        opened_at: iso(now),
        since: cause?.at ?? iso(now),
        title: a.page.title,
        index: journal.length,
        delivered: false,
        closed: null,
      };
      open.set(kind, inc);
      record({
        type: "incident_opened",
        incident: id,
        kind,
        sequence_id: inc.sequence_id,
        title: a.page.title,
        since: inc.since,
      });
    }
    control ??= controlOf(input.ntfy);
    const actions = pageActions({
      kind,
      program: program.name,
      arg,
      incident: inc.id,
      control: control.control,
      now,
    });
    out.push({
      ...a,
      page: { ...a.page, sequence_id: inc.sequence_id, actions },
      extra: { incident: inc.id, ...(control.error ? { actions_error: control.error } : {}) },
    });
  }
  return out;
}

/**
 * The incident a page kind opens: its own, or, for a pause a person must end (a refusal that
 * names no reset: `needs_person`), the pause's. Null for a page that reports no problem.
 */
function incidentKindOfPage(kind: string): IncidentKind | null {
  if (kind === "needs_person") return "paused";
  return isIncidentKind(kind) ? kind : null;
}

/** Whether a journal event is the one a planned page of `kind` reports (its kind's event). */
function kindMatches(e: JournalEvent, kind: IncidentKind): boolean {
  if (kind === "start_failed") return e.type === "manager_start_failed";
  return e.type === kind;
}
