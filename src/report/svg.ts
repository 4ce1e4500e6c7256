import { clock, stamp } from "../util/local-time.js";
import { axisTicks } from "./axis.js";
import { escapeHtml as esc } from "./escape.js";
import { type IdleSpell, spellWords } from "./idle.js";
import { incidentsSvg } from "./incidents.js";
import {
  isReplaced,
  kTokens,
  type ManagerBar,
  type Marker,
  type Span,
  type Timeline,
} from "./timeline.js";

// One program's night as inline SVG: pages on top, context tokens, one row per manager, the
// time axis below; pauses, stand-downs and sleep gaps shaded across all of it. Every shape
// carries a <title>, so hovering shows the details without any script.

const W = 1100;
// Wide enough for the longest row label ("#123 unplanned") at the gutter font size.
const LEFT = 124;
const RIGHT = 28;
const PAGES_Y = 14;
const TOKENS_TOP = 34;
const TOKENS_H = 110;
const LANES_TOP = TOKENS_TOP + TOKENS_H + 16;
const ROW_H = 22;
const BAR_H = 12;
/** More managers than this share one row, unlabelled (each still has its title). */
export const MAX_ROWS = 40;

interface Scale {
  from: number;
  to: number;
  x(t: number | string): number;
}

function scaleOf(t: Timeline): Scale {
  const from = Date.parse(t.axis.from);
  const to = Math.max(Date.parse(t.axis.to), from + 1000);
  const k = (W - LEFT - RIGHT) / (to - from);
  return {
    from,
    to,
    x: (at) => {
      const v = typeof at === "number" ? at : Date.parse(at);
      return LEFT + (Math.min(Math.max(v, from), to) - from) * k;
    },
  };
}

const f1 = (n: number) => (Math.round(n * 10) / 10).toString();

/** The chart's SVG for one timeline (the caller has checked it is not empty). */
export function timelineSvg(t: Timeline): string {
  const s = scaleOf(t);
  const compact = t.managers.length > MAX_ROWS;
  const rows = compact ? 1 : Math.max(t.managers.length, 1);
  const lanesBottom = LANES_TOP + rows * ROW_H;
  const height = lanesBottom + 44;
  const parts = [
    `<svg class="timeline" viewBox="0 0 ${W} ${height}" width="${W}" height="${height}" role="img" aria-label="${esc(`timeline of ${t.program}`)}">`,
    `<defs><pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><line x1="0" y1="0" x2="0" y2="6" class="hatch-line"/></pattern><pattern id="idle-dots" width="4" height="4" patternUnits="userSpaceOnUse"><rect width="4" height="4" class="idle-bg"/><circle cx="2" cy="2" r="0.9" class="idle-dot"/></pattern></defs>`,
    gutter(lanesBottom, compact),
    spansSvg(t.spans, s, lanesBottom),
    tokensSvg(t, s),
    lanesSvg(t.managers, s, compact),
    incidentsSvg(t.incidents ?? [], s.x, PAGES_Y + 9),
    markersSvg(t.markers, s, lanesBottom),
    pagesNote(t),
    axisSvg(s, lanesBottom),
    "</svg>",
  ];
  return parts.join("\n");
}

function gutter(lanesBottom: number, compact: boolean): string {
  const label = (y: number, text: string) =>
    `<text class="gutter" x="${LEFT - 10}" y="${y}" text-anchor="end">${text}</text>`;
  const side = (y: number, text: string) => `<text class="gutter" x="8" y="${y}">${text}</text>`;
  return [
    side(PAGES_Y + 4, "pages"),
    side(TOKENS_TOP + TOKENS_H / 2 + 4, "context"),
    label(LANES_TOP - 4 + (compact ? ROW_H / 2 + 8 : 0), compact ? "managers" : ""),
    `<rect class="plot-frame" x="${LEFT}" y="${TOKENS_TOP}" width="${W - LEFT - RIGHT}" height="${lanesBottom - TOKENS_TOP}"/>`,
  ].join("");
}

const SPAN_WORD: Record<Span["kind"], string> = {
  paused: "paused",
  stood_down: "stood down",
  finished: "finished",
  sleep_gap: "watchdog asleep",
};

function spanTitle(sp: Span): string {
  const when = `${stamp(sp.from)} → ${sp.ongoing ? "still" : stamp(sp.to)}`;
  const until = sp.until ? ` (until ${stamp(sp.until)})` : "";
  const discounted =
    sp.discounted_ms !== undefined
      ? `; ${Math.round(sp.discounted_ms / 1000)}s not counted against any manager`
      : "";
  return `${SPAN_WORD[sp.kind]}${until}: ${when}\n${sp.reason}${discounted}`;
}

/** Rough width of a span label at its font size (no layout engine here). */
const labelWidth = (text: string) => text.length * 6.4 + 6;
const SPAN_LABEL_ROW = 13;

function spansSvg(spans: readonly Span[], s: Scale, bottom: number): string {
  // Labels go in the first row where they overlap no label already placed, so a gap inside a
  // stand-down (or two spans side by side) keeps both words readable.
  const rowEnds: number[] = [];
  return [...spans]
    .sort((a, b) => Date.parse(a.from) - Date.parse(b.from))
    .map((sp) => {
      const x0 = s.x(sp.from);
      const w = Math.max(s.x(sp.to) - x0, 2);
      const word = SPAN_WORD[sp.kind];
      let label = "";
      if (w > 54) {
        const lx = x0 + 4;
        let row = rowEnds.findIndex((end) => end <= lx);
        if (row < 0) row = rowEnds.length;
        rowEnds[row] = lx + labelWidth(word);
        label = `<text class="span-label" x="${f1(lx)}" y="${TOKENS_TOP + 12 + row * SPAN_LABEL_ROW}">${esc(word)}</text>`;
      }
      return `<g class="span ${sp.kind}" data-kind="${sp.kind}"><title>${esc(spanTitle(sp))}</title><rect x="${f1(x0)}" y="${TOKENS_TOP}" width="${f1(w)}" height="${bottom - TOKENS_TOP}"/>${label}</g>`;
    })
    .join("\n");
}

/** A word in the pages row when it has no marker: none sent, or none configured. */
function pagesNote(t: Timeline): string {
  if (t.markers.some((m) => m.kind !== "tick_failed")) return "";
  const text = t.pages_configured
    ? "no page sent in this window"
    : "pages are not configured (page.ntfy in program.json): nobody was told of anything";
  return `<text class="empty-note pages-note" x="${LEFT + 8}" y="${PAGES_Y + 4}">${esc(text)}</text>`;
}

/** A round maximum for the token scale: 1, 2 or 5 times a power of ten, at least `max`. */
function niceMax(max: number): number {
  const p = 10 ** Math.floor(Math.log10(Math.max(max, 1)));
  return ([1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10].find((m) => m * p >= max) ?? 10) * p;
}

function tokensSvg(t: Timeline, s: Scale): string {
  if (t.tokens.length === 0) {
    return `<text class="empty-note" x="${LEFT + 8}" y="${TOKENS_TOP + TOKENS_H / 2}">no saves with a context size in this window</text>`;
  }
  const top = niceMax(Math.max(...t.tokens.map((p) => p.context_tokens)));
  const y = (v: number) => TOKENS_TOP + TOKENS_H - (v / top) * (TOKENS_H - 14);
  const grid = [0, top / 2, top]
    .map(
      (v) =>
        `<line class="grid" x1="${LEFT}" x2="${W - RIGHT}" y1="${f1(y(v))}" y2="${f1(y(v))}"/><text class="tick-label" x="${LEFT - 6}" y="${f1(y(v) + 4)}" text-anchor="end">${kTokens(v)}</text>`,
    )
    .join("");
  // One line per manager; at most one point per pixel column, so a huge journal stays light.
  const lines: string[] = [];
  let run: string[] = [];
  let runPid: number | null | undefined;
  let lastX = Number.NEGATIVE_INFINITY;
  const flush = () => {
    const [only] = run;
    if (run.length === 1 && only) {
      const [cx, cy] = only.split(",");
      lines.push(`<circle class="token-point" cx="${cx}" cy="${cy}" r="2.5"/>`);
    } else if (run.length > 1) lines.push(`<polyline class="tokens" points="${run.join(" ")}"/>`);
    run = [];
  };
  for (const p of t.tokens) {
    const x = s.x(p.at);
    if (p.pid !== runPid) {
      flush();
      runPid = p.pid;
    } else if (x - lastX < 1 && run.length > 0) {
      run[run.length - 1] = `${f1(x)},${f1(y(p.context_tokens))}`;
      continue;
    }
    run.push(`${f1(x)},${f1(y(p.context_tokens))}`);
    lastX = x;
  }
  flush();
  // A dot per hand-over while they can be told apart; beyond that the line says enough.
  const handOvers = t.managers.filter(
    (b) => b.ending === "hand_over" && b.hand_over_tokens !== null && b.ended_at,
  );
  let lastLabel = Number.NEGATIVE_INFINITY;
  const dots = (handOvers.length <= 60 ? handOvers : []).map((b) => {
    const x = f1(s.x(b.ended_at as string));
    const yy = y(b.hand_over_tokens as number);
    // A label that would overlap the previous one is left to the dot's title.
    const room = Number(x) - lastLabel > 34;
    if (room) lastLabel = Number(x);
    const label = room
      ? `<text class="dot-label" x="${x}" y="${f1(yy - 6)}" text-anchor="middle">${kTokens(b.hand_over_tokens as number)}</text>`
      : "";
    return `<g class="hand-over-dot"><title>${esc(`pid ${b.pid} handed over at ${b.hand_over_tokens} tokens, ${stamp(b.ended_at as string)}`)}</title><circle cx="${x}" cy="${f1(yy)}" r="3.5"/>${label}</g>`;
  });
  return [grid, ...lines, ...dots].join("\n");
}

function barTitle(b: ManagerBar): string {
  const lines = [
    `manager #${b.n}: pid ${b.pid ?? "?"}${b.pane ? ` (pane ${b.pane})` : ""}`,
    b.started_at
      ? `started ${stamp(b.started_at)} (${b.planned ? "planned" : "unplanned"}${b.start_reason ? `: ${b.start_reason}` : ""})`
      : "start not in the journal",
    b.claimed_at ? `claimed ${stamp(b.claimed_at)}` : "never claimed",
    `${b.saves} saves; last sign of life ${stamp(b.last_seen_at)}${b.last_tokens !== null ? `; context ${b.last_tokens} tokens` : ""}`,
    `ended: ${b.ending_label}${b.ended_at ? ` at ${stamp(b.ended_at)}` : ""}`,
  ];
  if (b.end_note) lines.push(b.end_note);
  if (b.wedged_since) lines.push(`wedged in a tool call open since ${stamp(b.wedged_since)}`);
  if (b.idle.length > 0) {
    const nudged = b.idle.filter((s) => s.nudged_at !== null).length;
    const woke = b.idle.filter((s) => s.outcome === "woke").length;
    lines.push(`${b.idle.length} idle spell(s), ${nudged} nudged, ${woke} woke after the nudge`);
  }
  if (b.replaced_after_ms !== null)
    lines.push(`replaced ${Math.round(b.replaced_after_ms / 1000)}s after its last sign of life`);
  return lines.join("\n");
}

function barSvg(b: ManagerBar, s: Scale, row: number, labelled: boolean): string {
  const y = LANES_TOP + row * ROW_H + (ROW_H - BAR_H) / 2;
  const start = s.x(b.started_at ?? b.claimed_at ?? b.last_seen_at);
  const claimed = b.claimed_at ? s.x(b.claimed_at) : null;
  const end = b.ended_at ? s.x(b.ended_at) : s.x(s.to);
  // Dead or stopped: solid to its last sign of life, hatched until the journal says it ended.
  const tailFrom =
    isReplaced(b.ending) || b.ending === "stopped_for_pause"
      ? Math.max(s.x(b.last_seen_at), claimed ?? start)
      : end;
  const solidFrom = claimed ?? start;
  const shapes: string[] = [];
  if (claimed !== null && claimed > start)
    shapes.push(
      `<rect class="starting" x="${f1(start)}" y="${f1(y + BAR_H / 2 - 2)}" width="${f1(claimed - start)}" height="4"/>`,
    );
  if (claimed === null) {
    // Never claimed: alive at its start, and when it went is not known, so only the start is
    // solid and the rest, up to what ended it (the next start, a stop, a stand-down), hatched.
    shapes.push(
      `<rect class="body unclaimed" x="${f1(start)}" y="${f1(y)}" width="3" height="${BAR_H}"/>`,
    );
    if (end > start + 3.5)
      shapes.push(
        `<rect class="tail" x="${f1(start + 3)}" y="${f1(y)}" width="${f1(end - start - 3)}" height="${BAR_H}"/>`,
      );
  } else {
    shapes.push(
      `<rect class="body" x="${f1(solidFrom)}" y="${f1(y)}" width="${f1(Math.max(tailFrom - solidFrom, 3))}" height="${BAR_H}" rx="2"/>`,
    );
    if (end > tailFrom + 0.5)
      shapes.push(
        `<rect class="tail" x="${f1(tailFrom)}" y="${f1(y)}" width="${f1(end - tailFrom)}" height="${BAR_H}"/>`,
      );
  }
  shapes.push(...quietSvg(b, s, y, claimed ?? start, end));
  if (b.ending === "running")
    shapes.push(
      `<path class="body" d="M${f1(end)},${f1(y - 2)} l7,${BAR_H / 2 + 2} l-7,${BAR_H / 2 + 2} z"/>`,
    );
  if (b.planned === false)
    shapes.push(
      `<rect class="unplanned-mark" x="${f1(start - 1)}" y="${f1(y - 3)}" width="3" height="${BAR_H + 6}"/>`,
    );
  if (labelled) shapes.push(barLabel(b, start, end + (b.ending === "running" ? 8 : 0), y));
  return `<g class="bar ending-${b.ending}" data-pid="${b.pid ?? ""}" data-ending="${b.ending}"><title>${esc(barTitle(b))}</title>${shapes.join("")}</g>`;
}

/**
 * The bar's quiet stretches drawn over it: each idle spell dotted, with a pin at its nudge
 * (hollow: the line could not be typed); a wedged manager's hung call shaded to its stop.
 */
function quietSvg(b: ManagerBar, s: Scale, y: number, from: number, to: number): string[] {
  const clampX = (at: string) => Math.min(Math.max(s.x(at), from), to);
  const out: string[] = [];
  if (b.wedged_since && b.ended_at) {
    const x0 = clampX(b.wedged_since);
    const title = `wedged: a tool call open since ${stamp(b.wedged_since)}, past its own limit; stopped at ${stamp(b.ended_at)} (restart_wedged)`;
    out.push(
      `<g class="wedged-spell"><title>${esc(title)}</title><rect x="${f1(x0)}" y="${f1(y)}" width="${f1(Math.max(clampX(b.ended_at) - x0, 2))}" height="${BAR_H}"/></g>`,
    );
  }
  for (const sp of b.idle) {
    const x0 = clampX(sp.from);
    const words = spellWords(sp, b.ending_label);
    out.push(
      `<g class="idle-spell outcome-${sp.outcome}" data-outcome="${sp.outcome}"><title>${esc(`pid ${b.pid ?? "?"} ${words.join("\n")}`)}</title><rect x="${f1(x0)}" y="${f1(y)}" width="${f1(Math.max(clampX(sp.to) - x0, 2))}" height="${BAR_H}"/></g>`,
    );
    if (sp.nudged_at) out.push(nudgeMark(b, sp, s.x(sp.nudged_at), y));
  }
  return out;
}

function nudgeMark(b: ManagerBar, sp: IdleSpell, x: number, y: number): string {
  const failed = sp.nudge_error !== null;
  const [, nudge, outcome] = spellWords(sp, b.ending_label);
  const title = `pid ${b.pid ?? "?"}: ${nudge}\n${outcome}`;
  return `<g class="nudge-mark${failed ? " failed" : ""}"><title>${esc(title)}</title><line x1="${f1(x)}" x2="${f1(x)}" y1="${f1(y - 3)}" y2="${f1(y + BAR_H)}"/><circle cx="${f1(x)}" cy="${f1(y - 4)}" r="2.6"/></g>`;
}

function barLabel(b: ManagerBar, start: number, end: number, y: number): string {
  const text = `pid ${b.pid ?? "?"} · ${b.ending_label}`;
  const width = text.length * 6.3;
  const baseline = f1(y + BAR_H - 2);
  if (end + 6 + width <= W - RIGHT + 20)
    return `<text class="bar-label" x="${f1(end + 6)}" y="${baseline}">${esc(text)}</text>`;
  if (start - 6 - width >= LEFT)
    return `<text class="bar-label" x="${f1(start - 6)}" y="${baseline}" text-anchor="end">${esc(text)}</text>`;
  return `<text class="bar-label inside" x="${f1(Math.max(start, LEFT) + 6)}" y="${baseline}">${esc(text)}</text>`;
}

function lanesSvg(bars: readonly ManagerBar[], s: Scale, compact: boolean): string {
  const out: string[] = [];
  bars.forEach((b, i) => {
    const row = compact ? 0 : i;
    if (!compact) {
      const y = LANES_TOP + row * ROW_H + ROW_H / 2 + 4;
      const word = b.planned === null ? "" : b.planned ? "planned" : "unplanned";
      out.push(
        `<text class="gutter row-label${b.planned === false ? " unplanned" : ""}" x="${LEFT - 10}" y="${y}" text-anchor="end">#${b.n} ${word}</text>`,
      );
    }
    out.push(barSvg(b, s, row, !compact));
  });
  return out.join("\n");
}

function markersSvg(markers: readonly Marker[], s: Scale, bottom: number): string {
  return markers
    .map((m) => {
      const x = f1(s.x(m.at));
      const cls = `marker ${m.kind === "paged" ? "page-marker" : m.kind === "page_failed" ? "page-marker failed" : "tick-failed"} priority-${m.priority ?? 0}`;
      const shape =
        m.kind === "tick_failed"
          ? `<path d="M${x},${PAGES_Y - 7} l7,7 l-7,7 l-7,-7 z"/>`
          : `<path d="M${Number(x) - 6},${PAGES_Y - 6} h12 l-6,11 z"/>`;
      const title = `${stamp(m.at)} ${m.kind === "tick_failed" ? "" : `page${m.page_kind ? ` (${m.page_kind})` : ""}: `}${m.text}`;
      return `<g class="${cls}" data-kind="${m.kind}"><title>${esc(title)}</title><line class="marker-line" x1="${x}" x2="${x}" y1="${PAGES_Y + 6}" y2="${bottom}"/>${shape}</g>`;
    })
    .join("\n");
}

function axisSvg(s: Scale, bottom: number): string {
  const ticks = axisTicks(s.from, s.to, 9);
  const out = [`<line class="axis" x1="${LEFT}" x2="${W - RIGHT}" y1="${bottom}" y2="${bottom}"/>`];
  for (const tk of ticks) {
    const x = f1(s.x(tk.t));
    out.push(
      `<line class="axis-tick" x1="${x}" x2="${x}" y1="${bottom}" y2="${bottom + 5}"/><line class="grid vertical" x1="${x}" x2="${x}" y1="${TOKENS_TOP}" y2="${bottom}"/><text class="tick-label" x="${x}" y="${bottom + 18}" text-anchor="middle">${tk.label}</text>`,
    );
    if (tk.day)
      out.push(
        `<text class="day-label" x="${x}" y="${bottom + 33}" text-anchor="middle">${tk.day}</text>`,
      );
  }
  out.push(
    `<text class="tick-label edge" x="${W - RIGHT}" y="${bottom + 33}" text-anchor="end">${esc(`report at ${clock(s.to, true)}`)}</text>`,
  );
  return out.join("");
}
