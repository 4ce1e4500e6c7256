import { formatDuration } from "../util/duration.js";
import { stamp, zoneDescription } from "../util/local-time.js";
import { escapeHtml as esc } from "./escape.js";
import { spellWords } from "./idle.js";
import { INCIDENT_CSS, incidentRows } from "./incidents.js";
import { type NightNumbers, nightNumbers, spanText, standing, verdict } from "./numbers.js";
import { timelineSvg } from "./svg.js";
import {
  ENDINGS,
  type Ending,
  isReplaced,
  kTokens,
  type ManagerBar,
  type Timeline,
} from "./timeline.js";

// The report page: one self-contained file (inline CSS and SVG, no script, no URL fetched),
// readable in any browser with JavaScript off. Every string from the journal is escaped.

const CSS = `
:root{--ink:#1d232b;--muted:#5c6773;--line:#d5dbe1;--bg:#fbfcfd;--hand:#3567c8;--done:#2e8b57;
--run:#17a589;--dead:#c0392b;--stuck:#d9731a;--pause:#e2b93b;--stood:#d64545;--other:#8a94a0;
--idle:#6b7fb0;--wedged:#9c5b2e}
*{box-sizing:border-box}
body{margin:0;padding:24px 32px 48px;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;color:var(--ink);background:var(--bg)}
header.page{border-bottom:1px solid var(--line);margin-bottom:8px;padding-bottom:12px}
h1{font-size:22px;margin:0 0 2px}h2{font-size:19px;margin:28px 0 2px}h3{font-size:15px;margin:22px 0 6px}
.window{color:var(--muted);margin:0}
.verdict{font-size:17px;font-weight:600;margin:8px 0 4px}
.now{display:inline-block;padding:2px 10px;border-radius:12px;font-size:13px;margin:0}
.now.ok{background:#dff3ec;color:#0f6b55}.now.warn{background:#fbf0d2;color:#7a5a00}
.now.bad{background:#fbe0e0;color:#9b1c1c}.now.idle{background:#e9edf1;color:#3c4650}
.legend{display:flex;flex-wrap:wrap;gap:4px 16px;margin:14px 0 6px;padding:0;list-style:none;color:var(--muted);font-size:12.5px}
.legend li{display:flex;align-items:center;gap:6px}
.sw{display:inline-block;width:22px;height:11px;border-radius:2px}
.sw.line{height:0;border-top:2px solid var(--hand);border-radius:0}
.sw.tri{width:0;height:0;border-left:6px solid transparent;border-right:6px solid transparent;border-top:10px solid #3a6fd0;border-radius:0}
.sw.tri.hollow{border-top-color:var(--stood);position:relative}
.sw.tri.hollow::after{content:"";position:absolute;left:-3px;top:-8px;border-left:3px solid transparent;border-right:3px solid transparent;border-top:5px solid var(--bg)}
.sw.idle{background:radial-gradient(circle,var(--idle) 1px,#e6eaf3 1.3px) 0 0/4px 4px;box-shadow:inset 0 0 0 1px var(--idle)}
.sw.nudge{width:7px;height:7px;border-radius:50%;background:var(--ink)}
.sw.nudge.failed{background:#fff;box-shadow:inset 0 0 0 1.5px var(--stood)}
.sw.diamond{width:9px;height:9px;background:var(--stood);transform:rotate(45deg);border-radius:0}
.chart{overflow-x:auto;border:1px solid var(--line);border-radius:6px;background:#fff;padding:8px 4px 2px}
svg.timeline{display:block;width:100%;min-width:900px;height:auto;font-family:inherit}
.token-point{fill:var(--hand)}
.gutter{font-size:11.5px;fill:var(--muted)}.row-label.unplanned{fill:var(--dead);font-weight:600}
.plot-frame{fill:none;stroke:var(--line)}
.grid{stroke:#eef1f4}.grid.vertical{stroke:#f1f3f5}
.axis{stroke:#9aa4ae}.axis-tick{stroke:#9aa4ae}
.tick-label{font-size:11px;fill:var(--muted)}.day-label{font-size:11px;fill:var(--ink);font-weight:600}
.span rect{opacity:.28}.span.paused rect{fill:var(--pause)}.span.stood_down rect{fill:var(--stood);opacity:.16}
.span.finished rect{fill:var(--done);opacity:.12}.span.sleep_gap rect{fill:url(#hatch);opacity:1}
.hatch-line{stroke:#cfd5db;stroke-width:2.5}
.span-label{font-size:11px;font-weight:600;fill:#6b5200}.span.stood_down .span-label{fill:#9b1c1c}
.span.sleep_gap .span-label{fill:#56606a}.span.finished .span-label{fill:#1f6b43}
.tokens{fill:none;stroke:var(--hand);stroke-width:1.8;stroke-linejoin:round}
.hand-over-dot circle{fill:#fff;stroke:var(--hand);stroke-width:2}.dot-label{font-size:10px;fill:var(--hand)}
.empty-note{font-size:12px;fill:var(--muted);font-style:italic}
.bar .body{fill:var(--other)}.bar .starting{fill:#c3cad1}
.bar .tail{fill:url(#hatch);stroke:var(--other);stroke-width:.6}
.idle-spell rect{fill:url(#idle-dots);stroke:var(--idle);stroke-width:.8}
.idle-bg{fill:#e6eaf3}.idle-dot{fill:var(--idle)}
.wedged-spell rect{fill:var(--wedged);opacity:.4}
.nudge-mark line{stroke:var(--ink);stroke-width:1.2}.nudge-mark circle{fill:var(--ink)}
.nudge-mark.failed circle{fill:#fff;stroke:var(--stood);stroke-width:1.5}
.unplanned-mark{fill:var(--dead)}
.bar-label{font-size:11.5px;fill:var(--ink)}.bar-label.inside{fill:#fff;font-weight:600}
.bar:hover .body{filter:brightness(1.15)}
.marker-line{stroke:#7f8b97;stroke-dasharray:2 3;opacity:.55}
.page-marker path{fill:#3a6fd0}.page-marker.priority-5 path{fill:var(--stood)}
.page-marker.priority-4 path{fill:var(--stuck)}.page-marker.priority-2 path,.page-marker.priority-1 path{fill:#9aa4ae}
.page-marker.failed path{fill:#fff;stroke:var(--stood);stroke-width:1.6}
.tick-failed path{fill:var(--stood)}
table{border-collapse:collapse;width:100%;font-size:13px;background:#fff}
th,td{text-align:left;padding:5px 8px;border-bottom:1px solid #e8ecef;vertical-align:top}
th{font-weight:600;color:var(--muted);background:#f4f6f8;border-bottom:1px solid var(--line)}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td.when{white-space:nowrap;font-variant-numeric:tabular-nums}
.pill{display:inline-block;padding:0 7px;border-radius:9px;font-size:12px;color:#fff;background:var(--other);white-space:nowrap}
.unplanned{color:var(--dead);font-weight:600}
.note{color:var(--muted);max-width:520px;overflow-wrap:anywhere}
dl.numbers{display:grid;grid-template-columns:max-content 1fr;gap:4px 18px;margin:0;font-size:14px}
dl.numbers dt{color:var(--muted)}dl.numbers dd{margin:0;font-variant-numeric:tabular-nums}
.nothing{border:1px dashed var(--line);border-radius:6px;padding:28px;text-align:center;color:var(--muted);background:#fff;font-size:15px}
.nothing strong{display:block;color:var(--ink);font-size:18px;margin-bottom:4px}
footer{margin-top:32px;color:var(--muted);font-size:12px}
@media print{body{padding:0}.chart{border:0}}
`;

/**
 * Each ending's colour and its words in the legend: the bars, the pills of the table and the
 * legend all come from here, so no ending is drawn without its key (endings with one colour share
 * one entry).
 */
export const ENDING_STYLE: Record<Ending, { color: string; legend: string }> = {
  hand_over: { color: "var(--hand)", legend: "hand-over" },
  running: { color: "var(--run)", legend: "running" },
  finished: { color: "var(--done)", legend: "finished" },
  dead: { color: "var(--dead)", legend: "dead" },
  stuck_stopped: { color: "var(--stuck)", legend: "stuck-stopped" },
  idle_stopped: { color: "var(--idle)", legend: "idle-stopped" },
  wedged_stopped: { color: "var(--wedged)", legend: "wedged-stopped" },
  stopped_for_pause: { color: "#b89020", legend: "stopped for a pause" },
  lease_lost: { color: "#7d5ba6", legend: "stopped: lease lost" },
  replaced: { color: "#4f6d8a", legend: "replaced (another manager claimed)" },
  released: { color: "var(--other)", legend: "released / stopped" },
  stopped: { color: "var(--other)", legend: "released / stopped" },
  never_claimed: { color: "#b07cc6", legend: "starting / never claimed / start failed" },
  start_failed: { color: "#b07cc6", legend: "starting / never claimed / start failed" },
  starting: { color: "#b07cc6", legend: "starting / never claimed / start failed" },
};

/** The bars' and pills' colours, one rule per ending; a replaced ending's hatched tail too. */
function endingCss(): string {
  return ENDINGS.map((e) => {
    const c = ENDING_STYLE[e].color;
    const tail = isReplaced(e) ? `.bar.ending-${e} .tail{stroke:${c}}` : "";
    return `.bar.ending-${e} .body{fill:${c}}${tail}.pill.${e}{background:${c}}`;
  }).join("\n");
}

const LEGEND: [string, string, string][] = [
  ...[
    ...new Map(ENDINGS.map((e) => [ENDING_STYLE[e].legend, ENDING_STYLE[e].color])).entries(),
  ].map(([text, color]): [string, string, string] => ["sw", color, text]),
  ["sw hatched", "", "after its last save, until the watchdog acted"],
  ["sw idle", "", "idle spell (the turn ended, nothing to wake it)"],
  ["sw line", "", "context tokens (from saves)"],
  ["sw", "rgba(226,185,59,.45)", "paused"],
  ["sw", "rgba(214,69,69,.25)", "stood down"],
  ["sw hatched", "", "watchdog asleep (not counted)"],
];

/** The page markers, one legend entry per priority (ntfy's 1–5) and kind. */
const MARKER_LEGEND: [string, string][] = [
  ["var(--stood)", "urgent page"],
  ["var(--stuck)", "high page"],
  ["#3a6fd0", "page"],
  ["#9aa4ae", "low page"],
];

function legend(): string {
  const items = LEGEND.map(([cls, color, text]) => {
    const style =
      cls === "sw hatched"
        ? "background:repeating-linear-gradient(45deg,#c3cad1 0 3px,transparent 3px 6px)"
        : color
          ? `background:${color}`
          : "";
    return `<li><span class="${cls}"${style ? ` style="${style}"` : ""}></span>${esc(text)}</li>`;
  });
  items.push(
    `<li><span class="sw" style="background:var(--dead);width:3px"></span>unplanned start</li>`,
    `<li><span class="sw nudge"></span>nudge</li>`,
    `<li><span class="sw nudge failed"></span>nudge not typed</li>`,
    ...MARKER_LEGEND.map(
      ([color, text]) =>
        `<li class="marker-key"><span class="sw tri" style="border-top-color:${color}"></span>${esc(text)}</li>`,
    ),
    `<li class="marker-key"><span class="sw tri hollow"></span>page not delivered</li>`,
    `<li class="marker-key"><span class="sw diamond"></span>failed tick</li>`,
  );
  return `<ul class="legend">${items.join("")}</ul>`;
}

const dur = (ms: number | null) => (ms === null ? "–" : spanText(ms));

function managersTable(bars: readonly ManagerBar[]): string {
  const rows = bars.map((b) => {
    const start = b.started_at ?? b.claimed_at;
    const life =
      b.claimed_at && b.ended_at
        ? formatDuration(Date.parse(b.ended_at) - Date.parse(b.claimed_at))
        : b.ending === "running"
          ? "running"
          : "–";
    const kind =
      b.planned === null ? "–" : b.planned ? "planned" : `<span class="unplanned">unplanned</span>`;
    const note = [
      b.start_reason ? `started: ${b.start_reason}` : "",
      b.end_note ? `ended: ${b.end_note}` : "",
    ]
      .filter(Boolean)
      .map(esc)
      .join("<br>");
    const nudged = b.idle.filter((x) => x.nudged_at !== null).length;
    const idle = b.idle.length
      ? `<br>${b.idle.length} idle spell${b.idle.length > 1 ? "s" : ""}, ${nudged} nudged, ${b.idle.filter((x) => x.outcome === "woke").length} woke`
      : "";
    const replaced =
      b.replaced_after_ms !== null
        ? `<br>replaced ${formatDuration(b.replaced_after_ms)} after its last save`
        : "";
    return `<tr class="manager-row" data-ending="${b.ending}"><td class="num">${b.n}</td><td class="num">${b.pid ?? "?"}</td><td class="when">${start ? esc(stamp(start)) : "–"}</td><td>${kind}</td><td class="when">${b.claimed_at ? esc(stamp(b.claimed_at)) : "never"}</td><td class="num">${b.saves}</td><td class="num">${b.last_tokens !== null ? kTokens(b.last_tokens) : "–"}</td><td class="when">${b.ended_at ? esc(stamp(b.ended_at)) : "–"}</td><td><span class="pill ${b.ending}">${esc(b.ending_label)}</span></td><td class="num">${life}</td><td class="note">${note}${idle}${replaced}</td></tr>`;
  });
  return `<table class="managers"><thead><tr><th>#</th><th>pid</th><th>started</th><th>start</th><th>claimed</th><th>saves</th><th>context</th><th>ended</th><th>how it ended</th><th>held</th><th>notes</th></tr></thead><tbody>${rows.join("")}</tbody></table>`;
}

function eventsTable(t: Timeline): string {
  type Row = { at: string; what: string; detail: string; cls: string };
  const rows: Row[] = [
    ...t.spans.map((s) => ({
      at: s.from,
      what: {
        paused: "paused",
        stood_down: "stood down",
        finished: "finished",
        sleep_gap: "watchdog asleep",
      }[s.kind],
      detail: `${s.ongoing ? "still, " : `${formatDuration(Date.parse(s.to) - Date.parse(s.from))}, until ${stamp(s.to)}; `}${s.reason}${s.discounted_ms !== undefined ? ` (${formatDuration(s.discounted_ms)} not counted against any manager)` : ""}`,
      cls: `span-row ${s.kind}`,
    })),
    ...t.managers.flatMap((b) =>
      b.idle.map((s) => ({
        at: s.from,
        what: `idle spell (pid ${b.pid ?? "?"})`,
        detail: spellWords(s, b.ending_label).join("; "),
        cls: `idle-row ${s.outcome}`,
      })),
    ),
    ...incidentRows(t.incidents ?? []),
    ...t.markers.map((m) => ({
      at: m.at,
      what:
        m.kind === "paged"
          ? `page${m.page_kind ? ` (${m.page_kind})` : ""}`
          : m.kind === "page_failed"
            ? "page not delivered"
            : "tick failed",
      detail: m.text,
      cls: `marker-row ${m.kind}`,
    })),
  ].sort((a, b) => Date.parse(a.at) - Date.parse(b.at));
  if (rows.length === 0)
    return `<p class="window">No pauses, stand-downs, gaps, idle spells or pages.</p>`;
  const body = rows
    .map(
      (r) =>
        `<tr class="${r.cls}"><td class="when">${esc(stamp(r.at))}</td><td>${esc(r.what)}</td><td class="note">${esc(r.detail)}</td></tr>`,
    )
    .join("");
  return `<table class="events"><thead><tr><th>when</th><th>what</th><th>details</th></tr></thead><tbody>${body}</tbody></table>`;
}

const REPLACED_WORD: Record<NightNumbers["replacements"][number]["ending"], string> = {
  dead: "dead",
  stuck_stopped: "stuck",
  idle_stopped: "idle",
  wedged_stopped: "wedged",
};

function numbersList(n: NightNumbers): string {
  const replace = n.replacements
    .map(
      (r) =>
        `pid ${r.pid ?? "?"} (${REPLACED_WORD[r.ending]}): ${r.replaced_after_ms === null ? "not replaced" : formatDuration(r.replaced_after_ms)}`,
    )
    .join("; ");
  const items: [string, string][] = [
    [
      "managers started",
      `${n.managers_started} (${n.planned_starts} planned, ${n.unplanned_starts} unplanned${n.failed_starts ? `; ${n.failed_starts} failed starts` : ""})`,
    ],
    [
      "hand-overs",
      `${n.hand_overs}${n.median_hand_over_tokens !== null ? `, median ${kTokens(n.median_hand_over_tokens)} tokens` : ""}`,
    ],
    ["dead / stuck-stopped", `${n.dead} / ${n.stuck_stopped}`],
    ["idle- / wedged-stopped", `${n.idle_stopped} / ${n.wedged_stopped}`],
    [
      "idle spells / nudges",
      n.idle_spells + n.nudges > 0
        ? `${n.idle_spells} / ${n.nudges} (${n.nudges_woke} woke after the nudge${n.nudges_failed ? `, ${n.nudges_failed} not typed` : ""})`
        : "–",
    ],
    [
      "time to replace",
      replace
        ? `${replace}${n.replacements.length > 1 ? `; median ${dur(n.median_replace_ms)}` : ""}`
        : "–",
    ],
    ["time paused", dur(n.paused_ms)],
    ["time stood down", dur(n.stood_down_ms)],
    [
      "watchdog asleep",
      n.sleep_gaps
        ? `${n.sleep_gaps}× (${formatDuration(n.sleep_gap_discounted_ms)} not counted)`
        : "–",
    ],
    ["pages sent", `${n.pages_sent}${n.pages_failed ? ` (${n.pages_failed} not delivered)` : ""}`],
    ["failed ticks", String(n.ticks_failed)],
    ["saves", String(n.saves)],
  ];
  return `<dl class="numbers">${items.map(([k, v]) => `<dt>${esc(k)}</dt><dd>${esc(v)}</dd>`).join("")}</dl>`;
}

function windowLine(t: Timeline): string {
  const from = Date.parse(t.window.from);
  const to = Date.parse(t.window.to);
  const begins =
    Date.parse(t.axis.from) > from && t.first_event_at
      ? `; its journal begins ${stamp(t.first_event_at)}`
      : "";
  return `${stamp(from)} → ${stamp(to)} (${formatDuration(to - from)}${begins}; times in ${zoneDescription(to)})`;
}

/** One program's section: verdict, chart, tables, numbers; or the "nothing happened" note. */
export function programSection(t: Timeline, heading: "h1" | "h2"): string {
  const n = nightNumbers(t);
  const now = standing(t, stamp);
  const invalid = t.config_invalid
    ? `<p class="now bad config-invalid">${esc(t.config_invalid.file)} is invalid now: ${esc(t.config_invalid.error)} (the watchdog goes on with the last valid config)</p>`
    : "";
  const head = `<${heading}>${esc(t.program)}</${heading}><p class="window">${esc(t.root)} · ${esc(windowLine(t))}</p>${invalid}`;
  if (t.empty) {
    const last = t.last_event_at
      ? `The journal's last event was at ${stamp(t.last_event_at)}.`
      : "The journal is empty.";
    return `<section class="program empty" id="program-${esc(t.program)}">${head}<div class="nothing"><strong>Nothing happened in this window.</strong>No manager ran, nothing paused, stood down or paged. ${esc(last)}</div></section>`;
  }
  return [
    `<section class="program" id="program-${esc(t.program)}">${head}`,
    `<p class="verdict">${esc(verdict(t, n))}</p><p class="now ${now.tone}">now: ${esc(now.text)}</p>`,
    legend(),
    `<div class="chart">${timelineSvg(t)}</div>`,
    `<h3>Managers</h3>${managersTable(t.managers)}`,
    `<h3>Pauses, stand-downs, gaps, idle spells and pages</h3>${eventsTable(t)}`,
    `<h3>The night's numbers</h3>${numbersList(n)}`,
    "</section>",
  ].join("\n");
}

/** The whole page for one program or several (`--all`). */
export function reportHtml(
  timelines: readonly Timeline[],
  generatedAt: number,
  sources: string,
): string {
  const single = timelines.length === 1 ? timelines[0] : undefined;
  const title = single
    ? `sheepdog report: ${single.program}`
    : `sheepdog report: ${timelines.length} programs`;
  const top = single
    ? ""
    : `<header class="page"><h1>${esc(title)}</h1><p class="window">${timelines.map((t) => `<a href="#program-${esc(t.program)}">${esc(t.program)}</a>`).join(" · ") || "no programs found"}</p></header>`;
  const sections = timelines.map((t) => programSection(t, single ? "h1" : "h2")).join("\n");
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)} (${esc(stamp(generatedAt))})</title>
<style>${CSS}${INCIDENT_CSS}${endingCss()}</style></head>
<body>
${top}${sections}
<footer>Written by <code>sheepdog report</code> at ${esc(stamp(generatedAt))} from ${esc(sources)}. Hover a bar, span or marker for its details.</footer>
</body></html>
`;
}
