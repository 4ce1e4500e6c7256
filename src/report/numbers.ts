import { formatDuration } from "../util/duration.js";
import {
  isReplaced,
  kTokens,
  type ManagerBar,
  type ReplacedEnding,
  type Span,
  type Timeline,
} from "./timeline.js";

// The night's numbers (issue 13): counted from the timeline, within its window only.

export interface Replacement {
  n: number;
  pid: number | null;
  ending: ReplacedEnding;
  /** From its last sign of life to its successor's claim; null: not replaced in the window. */
  replaced_after_ms: number | null;
}

export interface NightNumbers {
  managers: number;
  managers_started: number;
  planned_starts: number;
  unplanned_starts: number;
  failed_starts: number;
  hand_overs: number;
  median_hand_over_tokens: number | null;
  dead: number;
  stuck_stopped: number;
  idle_stopped: number;
  wedged_stopped: number;
  /** Idle spells that began in the window, and the nudges sent in it (typed or not). */
  idle_spells: number;
  nudges: number;
  /** Nudges whose manager saved after them; nudges that could not be typed. */
  nudges_woke: number;
  nudges_failed: number;
  replacements: Replacement[];
  median_replace_ms: number | null;
  paused_ms: number;
  stood_down_ms: number;
  sleep_gaps: number;
  sleep_gap_discounted_ms: number;
  pages_sent: number;
  pages_failed: number;
  ticks_failed: number;
  saves: number;
}

export function median(values: readonly number[]): number | null {
  if (values.length === 0) return null;
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2
    ? (s[mid] as number)
    : Math.round(((s[mid - 1] as number) + (s[mid] as number)) / 2);
}

/** Time of the spans of one kind inside [from, to], overlaps merged. */
export function spanTime(
  spans: readonly Span[],
  kind: Span["kind"],
  from: number,
  to: number,
): number {
  const parts = spans
    .filter((s) => s.kind === kind)
    .map((s) => [Math.max(Date.parse(s.from), from), Math.min(Date.parse(s.to), to)] as const)
    .filter(([a, b]) => b > a)
    .sort((x, y) => x[0] - y[0]);
  let total = 0;
  let reach = Number.NEGATIVE_INFINITY;
  for (const [a, b] of parts) {
    const start = Math.max(a, reach);
    if (b > start) total += b - start;
    reach = Math.max(reach, b);
  }
  return total;
}

export function nightNumbers(t: Timeline): NightNumbers {
  const from = Date.parse(t.window.from);
  const to = Date.parse(t.window.to);
  const inWindow = (at: string | null) =>
    at !== null && Date.parse(at) >= from && Date.parse(at) <= to;
  const started = t.managers.filter((b) => inWindow(b.started_at));
  // Planned and unplanned add up to the managers started; a failed start is counted apart.
  const launched = started.filter((b) => b.ending !== "start_failed");
  const ended = (ending: ManagerBar["ending"]) =>
    t.managers.filter((b) => b.ending === ending && inWindow(b.ended_at));
  const handOvers = ended("hand_over");
  const replacements: Replacement[] = t.managers
    .filter((b) => isReplaced(b.ending) && inWindow(b.ended_at))
    .map((b) => ({
      n: b.n,
      pid: b.pid,
      ending: b.ending as ReplacedEnding,
      replaced_after_ms: b.replaced_after_ms,
    }));
  const spells = t.managers.flatMap((b) => b.idle);
  const nudged = spells.filter((s) => inWindow(s.nudged_at));
  const gaps = t.spans.filter((s) => s.kind === "sleep_gap");
  return {
    managers: t.managers.length,
    managers_started: launched.length,
    planned_starts: launched.filter((b) => b.planned === true).length,
    unplanned_starts: launched.filter((b) => b.planned === false).length,
    failed_starts: started.filter((b) => b.ending === "start_failed").length,
    hand_overs: handOvers.length,
    median_hand_over_tokens: median(
      handOvers.flatMap((b) => (b.hand_over_tokens === null ? [] : [b.hand_over_tokens])),
    ),
    dead: ended("dead").length,
    stuck_stopped: ended("stuck_stopped").length,
    idle_stopped: ended("idle_stopped").length,
    wedged_stopped: ended("wedged_stopped").length,
    idle_spells: spells.filter((s) => inWindow(s.from)).length,
    nudges: nudged.length,
    nudges_woke: nudged.filter((s) => s.outcome === "woke").length,
    nudges_failed: nudged.filter((s) => s.nudge_error !== null).length,
    replacements,
    median_replace_ms: median(
      replacements.flatMap((r) => (r.replaced_after_ms === null ? [] : [r.replaced_after_ms])),
    ),
    paused_ms: spanTime(t.spans, "paused", from, to),
    stood_down_ms: spanTime(t.spans, "stood_down", from, to),
    sleep_gaps: gaps.length,
    sleep_gap_discounted_ms: gaps.reduce((sum, g) => sum + (g.discounted_ms ?? 0), 0),
    pages_sent: t.markers.filter((m) => m.kind === "paged").length,
    pages_failed: t.markers.filter((m) => m.kind === "page_failed").length,
    ticks_failed: t.markers.filter((m) => m.kind === "tick_failed").length,
    saves: t.saves,
  };
}

/** A span for people: `2h10m`, and `<1s` rather than a misleading `0s`. */
export function spanText(ms: number): string {
  return ms > 0 && ms < 1000 ? "<1s" : formatDuration(ms);
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** One line a person reads first: "3 managers, 1 unplanned restart, paused 2h10m". */
export function verdict(t: Timeline, n: NightNumbers): string {
  if (t.empty) return "nothing happened in this window";
  const parts = [plural(n.managers, "manager")];
  const restarts = n.unplanned_starts;
  if (restarts > 0) {
    const why = restartCauses(t)
      .map(([cause, count]) => `${count} ${cause}`)
      .join(", ");
    parts.push(`${plural(restarts, "unplanned restart")}${why ? ` (${why})` : ""}`);
  } else if (n.managers_started > 0) {
    parts.push("no unplanned restart");
  }
  if (n.hand_overs > 0) {
    const med = n.median_hand_over_tokens;
    parts.push(
      `${plural(n.hand_overs, "hand-over")}${med !== null ? ` (median ${kTokens(med)})` : ""}`,
    );
  }
  if (n.nudges > 0) parts.push(`${plural(n.nudges, "nudge")} (${n.nudges_woke} woke)`);
  if (n.failed_starts > 0) parts.push(plural(n.failed_starts, "failed start"));
  if (n.paused_ms > 0) parts.push(`paused ${spanText(n.paused_ms)}`);
  if (n.stood_down_ms > 0) parts.push(`stood down ${spanText(n.stood_down_ms)}`);
  if (n.ticks_failed > 0) parts.push(plural(n.ticks_failed, "failed tick"));
  if (n.pages_sent + n.pages_failed > 0)
    parts.push(
      `${plural(n.pages_sent, "page")} sent${n.pages_failed ? `, ${n.pages_failed} not delivered` : ""}`,
    );
  return parts.join(", ");
}

const CAUSE: Partial<Record<ManagerBar["ending"], string>> = {
  dead: "after a death",
  stuck_stopped: "after a stuck stop",
  idle_stopped: "after an idle stop",
  wedged_stopped: "after a wedged stop",
  never_claimed: "after a start that never claimed",
  start_failed: "after a failed start",
};

/**
 * What came before each unplanned start in the window, counted: the ending of the manager
 * before it. The counts add up to the number of unplanned starts (a death that a stand-down or
 * a planned start followed is no restart, so it is not counted here).
 */
export function restartCauses(t: Timeline): [string, number][] {
  const from = Date.parse(t.window.from);
  const to = Date.parse(t.window.to);
  const counts = new Map<string, number>();
  t.managers.forEach((b, i) => {
    const at = b.started_at === null ? Number.NaN : Date.parse(b.started_at);
    if (b.planned !== false || b.ending === "start_failed" || !(at >= from && at <= to)) return;
    const before = i > 0 ? t.managers[i - 1] : undefined;
    const cause = (before && CAUSE[before.ending]) ?? "for another reason";
    counts.set(cause, (counts.get(cause) ?? 0) + 1);
  });
  return [...counts.entries()];
}

/** Where the program stands at the end of the window, in a few words. */
export function standing(
  t: Timeline,
  time: (at: string) => string = (at) => at,
): { text: string; tone: "ok" | "warn" | "bad" | "idle" } {
  const ongoing = (kind: Span["kind"]) => t.spans.find((s) => s.kind === kind && s.ongoing);
  const stood = ongoing("stood_down");
  if (stood) return { text: `stood down since ${time(stood.from)}: ${stood.reason}`, tone: "bad" };
  const finished = ongoing("finished");
  if (finished) return { text: `finished: ${finished.reason}`, tone: "idle" };
  const paused = ongoing("paused");
  if (paused)
    return {
      text: `paused until ${paused.until ? time(paused.until) : "?"}: ${paused.reason}`,
      tone: "warn",
    };
  // The one holding the claim, whatever came after it (a start not claimed yet).
  const holder = t.managers.findLast((b) => b.ending === "running");
  const idle = holder?.idle.find((s) => s.ongoing);
  if (holder && idle)
    return {
      text: `running: pid ${holder.pid}, idle since ${time(idle.from)}${idle.nudged_at ? `, nudged ${time(idle.nudged_at)}` : ""}`,
      tone: "warn",
    };
  if (holder) return { text: `running: pid ${holder.pid}`, tone: "ok" };
  const starting = t.managers.findLast((b) => b.ending === "starting");
  if (starting)
    return {
      text: `starting: ${starting.pid !== null ? `pid ${starting.pid}, ` : ""}started ${time(starting.started_at ?? starting.last_seen_at)}, not claimed yet`,
      tone: "warn",
    };
  const last = t.managers.at(-1);
  if (last) return { text: `no manager running (the last: ${last.ending_label})`, tone: "warn" };
  return { text: "no manager seen", tone: "idle" };
}
