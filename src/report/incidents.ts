import type { JournalEvent } from "../journal/journal.js";
import { formatDuration } from "../util/duration.js";
import { stamp } from "../util/local-time.js";
import { escapeHtml as esc } from "./escape.js";

// Incidents in the picture of a night (DESIGN §8, §13): each problem page's incident as a span
// from when the problem began to its close (or the window's end), drawn in the pages row, and
// listed with how it ended. Pure: journal events in.

export interface IncidentSpan {
  incident: string;
  kind: string;
  /** The title of the page that opened it. */
  title: string;
  /** When the problem began. */
  from: string;
  /** When it ended, or the window's end while it is open (`ongoing`). */
  to: string;
  ongoing: boolean;
  /** `recovered`, `person`, `phone`; null while open. */
  how: string | null;
  pid: number | null;
}

const str = (v: unknown): string | null => (typeof v === "string" ? v : null);

/** The incidents that overlap [from, to]. */
export function incidentSpans(
  events: readonly JournalEvent[],
  from: number,
  to: number,
): IncidentSpan[] {
  const byId = new Map<string, IncidentSpan>();
  for (const e of events) {
    const id = str(e.incident);
    if (!id) continue;
    if (e.type === "incident_opened" && !byId.has(id)) {
      byId.set(id, {
        incident: id,
        kind: str(e.kind) ?? "?",
        title: str(e.title) ?? "",
        from: str(e.since) ?? e.at,
        to: new Date(to).toISOString(),
        ongoing: true,
        how: null,
        pid: null,
      });
    } else if (e.type === "incident_closed") {
      const span = byId.get(id);
      if (!span?.ongoing) continue;
      span.to = str(e.ended_at) ?? e.at;
      span.ongoing = false;
      span.how = str(e.how);
      span.pid = typeof e.pid === "number" ? e.pid : null;
    }
  }
  return [...byId.values()].filter(
    (s) =>
      Date.parse(s.to) >= from && Date.parse(s.from) <= to && !Number.isNaN(Date.parse(s.from)),
  );
}

const HOW: Record<string, string> = {
  recovered: "recovered",
  person: "ended by a person",
  phone: "answered from the phone",
};

function spanWords(s: IncidentSpan): string {
  const long = formatDuration(Math.max(0, Date.parse(s.to) - Date.parse(s.from)));
  if (s.ongoing) return `open for ${long} (still open)`;
  const pid = s.pid !== null ? `; manager pid ${s.pid}` : "";
  return `${HOW[s.how ?? ""] ?? s.how ?? "closed"} after ${long}, at ${stamp(s.to)}${pid}`;
}

/** The incidents as bars under the page markers; `x` maps a time to the chart. */
export function incidentsSvg(spans: readonly IncidentSpan[], x: (t: string) => number, y: number) {
  return spans
    .map((s) => {
      const x0 = x(s.from);
      const w = Math.max(x(s.to) - x0, 3);
      const title = `incident (${s.kind}): ${s.title}\n${stamp(s.from)} → ${s.ongoing ? "still" : stamp(s.to)}; ${spanWords(s)}`;
      return `<g class="incident ${esc(s.kind)}${s.ongoing ? " ongoing" : ""}" data-kind="incident"><title>${esc(title)}</title><rect x="${x0.toFixed(1)}" y="${y}" width="${w.toFixed(1)}" height="4" rx="2"/></g>`;
    })
    .join("\n");
}

/** One row each for the report's table of events. */
export function incidentRows(spans: readonly IncidentSpan[]) {
  return spans.map((s) => ({
    at: s.from,
    what: `incident (${s.kind})`,
    detail: `${s.title}: ${spanWords(s)}`,
    cls: `incident-row ${s.ongoing ? "ongoing" : "closed"}`,
  }));
}

export const INCIDENT_CSS =
  ".incident rect{fill:#d64545;opacity:.55}.incident.ongoing rect{opacity:.9}.incident.paused rect{fill:#e2b93b}";
