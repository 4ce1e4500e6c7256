// The pure part of `sheepdog report`: journal events in, bars, spans, markers and numbers out.
import { describe, expect, it } from "vitest";
import type { JournalEvent } from "../../src/journal/journal.js";
import { escapeHtml } from "../../src/report/escape.js";
import { reportHtml } from "../../src/report/html.js";
import { median, nightNumbers, spanTime, verdict } from "../../src/report/numbers.js";
import { buildTimeline, type Ending } from "../../src/report/timeline.js";

const T0 = Date.parse("2026-11-30T00:00:00.000Z");
/** An event `s` seconds after T0. */
const ev = (s: number, type: string, fields: Record<string, unknown> = {}): JournalEvent => ({
  at: new Date(T0 + s * 1000).toISOString(),
  type,
  ...fields,
});
const timeline = (events: JournalEvent[], from = T0, to = T0 + 3600_000) =>
  buildTimeline({ program: "catalog", root: "/loops/catalog", events, from, to });

const started = (s: number, pid: number, planned = true, reason = "r") =>
  ev(s, "manager_started", { pid, planned, reason, launcher: "command" });
const claimed = (s: number, pid: number) => ev(s, "claimed", { pid, start_time: `st-${pid}` });
const saved = (s: number, pid: number, tokens: number) =>
  ev(s, "saved", { pid, context_tokens: tokens, progress: null, pushed: null });

const ENDINGS: { name: string; events: JournalEvent[]; ending: Ending; label: string }[] = [
  {
    name: "a hand-over (then its release and its stop do not change it)",
    events: [
      ev(10, "hand_over", { pid: 1, context_tokens: 152_340, note: "item 3 done" }),
      ev(10, "released", { pid: 1 }),
      ev(12, "manager_stopped", { pid: 1, reason: "handed over; stopping it", decision: "x" }),
    ],
    ending: "hand_over",
    label: "hand-over at 152k",
  },
  {
    name: "found dead: its claim broken",
    events: [
      ev(10, "claim_broken", { pid: 1, holder_state: "dead", reason: "holder pid 1 is dead" }),
    ],
    ending: "dead",
    label: "dead",
  },
  {
    name: "stuck: stopped by the watchdog, then its claim broken",
    events: [
      ev(10, "manager_stopped", { pid: 1, decision: "restart_stuck", reason: "no save for 47m" }),
      ev(10, "claim_broken", { pid: 1, holder_state: "alive", reason: "stopped" }),
    ],
    ending: "stuck_stopped",
    label: "stuck-stopped",
  },
  {
    name: "finished by the manager",
    events: [ev(10, "finished", { pid: 1, note: "backlog done" }), ev(10, "released", { pid: 1 })],
    ending: "finished",
    label: "finished",
  },
  {
    name: "still holding the claim",
    events: [saved(10, 1, 50_000)],
    ending: "running",
    label: "running",
  },
  {
    name: "found dead at a stand-down (its claim is left for the start after resume)",
    events: [ev(10, "stood_down", { reason: "holder pid 1 is dead; crash loop" })],
    ending: "dead",
    label: "dead",
  },
  {
    name: "removed by a person",
    events: [ev(10, "released", { pid: 1, forced: true, note: "moving the rack" })],
    ending: "released",
    label: "released",
  },
  {
    name: "stopped for a pause (planned stop of a stale holder)",
    events: [
      ev(8, "paused", {
        until: new Date(T0 + 900_000).toISOString(),
        reason: "usage",
        window: "five_hour",
      }),
      ev(10, "manager_stopped", {
        pid: 1,
        decision: "restart_stuck",
        planned: true,
        reason: "stopped for the usage pause",
      }),
    ],
    ending: "stopped_for_pause",
    label: "stopped for the pause",
  },
  {
    name: "stopped itself at a pause, found dead later",
    events: [
      ev(8, "paused", {
        until: new Date(T0 + 20_000).toISOString(),
        reason: "usage",
        window: "five_hour",
      }),
      saved(9, 1, 60_000),
      ev(21, "unpaused", { reason: "over" }),
      ev(21, "claim_broken", { pid: 1, holder_state: "dead", reason: "holder pid 1 is dead" }),
    ],
    ending: "stopped_for_pause",
    label: "stopped for the pause",
  },
];

describe("buildTimeline: how a manager's bar ends", () => {
  it.each(ENDINGS)("$name → $ending", ({ events, ending, label }) => {
    const t = timeline([started(0, 1), claimed(1, 1), saved(2, 1, 40_000), ...events]);
    expect(t.managers).toHaveLength(1);
    expect(t.managers[0]).toMatchObject({ pid: 1, ending, ending_label: label, n: 1 });
  });

  it("a start that never claimed ends when the next start comes; a failed start is its own bar", () => {
    const t = timeline([
      started(0, 7),
      started(700, 8, false),
      claimed(701, 8),
      ev(899, "claim_broken", { pid: 8, holder_state: "dead", reason: "dead" }),
      ev(900, "manager_start_failed", { launcher: "herdr", reason: "held at a dialog" }),
    ]);
    expect(t.managers.map((m) => [m.pid, m.ending])).toEqual([
      [7, "never_claimed"],
      [8, "dead"],
      [null, "start_failed"],
    ]);
  });

  it("a pane launcher's start (no pid) takes the pid of the claim that follows it", () => {
    const t = timeline([
      ev(0, "manager_started", {
        planned: true,
        reason: "first",
        launcher: "herdr",
        pane: "w1:p2",
      }),
      claimed(5, 4242),
      ev(50, "hand_over", { pid: 4242, context_tokens: 150_000, note: "n" }),
    ]);
    expect(t.managers).toHaveLength(1);
    expect(t.managers[0]).toMatchObject({ pid: 4242, pane: "w1:p2", ending: "hand_over" });
  });

  it("dead and stuck managers: the time from their last save to the next claim", () => {
    const t = timeline([
      started(0, 1),
      claimed(1, 1),
      saved(100, 1, 10),
      ev(400, "claim_broken", { pid: 1, holder_state: "dead", reason: "dead" }),
      started(400, 2, false),
      claimed(430, 2),
    ]);
    expect(t.managers[0]?.replaced_after_ms).toBe(330_000);
    expect(t.managers[0]?.last_seen_at).toBe(ev(100, "x").at);
  });
});

describe("buildTimeline: spans, markers, the window", () => {
  it("pauses and stand-downs run from their event to the one that ends them, or still hold", () => {
    const t = timeline(
      [
        ev(10, "paused", {
          until: new Date(T0 + 7200_000).toISOString(),
          reason: "five_hour at 100%",
        }),
        ev(70, "unpaused", { reason: "over" }),
        ev(100, "stood_down", { reason: "crash loop" }),
        ev(200, "sleep_gap", { from: ev(150, "x").at, to: ev(190, "x").at, discounted_ms: 35_000 }),
      ],
      T0,
      T0 + 300_000,
    );
    expect(t.spans).toEqual([
      expect.objectContaining({
        kind: "paused",
        from: ev(10, "x").at,
        to: ev(70, "x").at,
        ongoing: false,
      }),
      expect.objectContaining({
        kind: "stood_down",
        to: ev(300, "x").at,
        ongoing: true,
        reason: "crash loop",
      }),
      expect.objectContaining({ kind: "sleep_gap", from: ev(150, "x").at, discounted_ms: 35_000 }),
    ]);
    const n = nightNumbers(t);
    expect(n.paused_ms).toBe(60_000);
    expect(n.stood_down_ms).toBe(200_000);
    expect(n.sleep_gap_discounted_ms).toBe(35_000);
  });

  it("a pause whose reset passed with no tick since ends at its until", () => {
    const t = timeline(
      [ev(10, "paused", { until: ev(40, "x").at, reason: "r" })],
      T0,
      T0 + 100_000,
    );
    expect(t.spans[0]).toMatchObject({ to: ev(40, "x").at, ongoing: false });
  });

  it("pages sent, pages not delivered and failed ticks are markers", () => {
    const t = timeline([
      ev(5, "paged", { kind: "stood_down", priority: 5, title: "catalog stood down" }),
      ev(6, "page_failed", {
        kind: "paused",
        error: "HTTP 500",
        page: { title: "paused", priority: 3 },
      }),
      ev(7, "tick_failed", { error: "EACCES" }),
    ]);
    expect(t.markers.map((m) => [m.kind, m.page_kind, m.priority])).toEqual([
      ["paged", "stood_down", 5],
      ["page_failed", "paused", 3],
      ["tick_failed", null, null],
    ]);
    expect(nightNumbers(t)).toMatchObject({ pages_sent: 1, pages_failed: 1, ticks_failed: 1 });
  });

  it("the window: a manager holding through it is shown, one that ended before it is not", () => {
    const events = [
      started(0, 1),
      claimed(1, 1),
      ev(50, "hand_over", { pid: 1, context_tokens: 1, note: "" }),
      started(60, 2),
      claimed(61, 2),
      saved(5000, 2, 10),
    ];
    const t = timeline(events, T0 + 1000_000, T0 + 6000_000);
    expect(t.managers.map((m) => [m.pid, m.ending])).toEqual([[2, "running"]]);
    expect(t.tokens).toHaveLength(1);
    // Counted in the window: no start happened in it.
    expect(nightNumbers(t)).toMatchObject({ managers: 1, managers_started: 0 });
    expect(t.axis.from).toBe(t.window.from);
  });

  it("an empty journal, or one with nothing in the window, is empty", () => {
    expect(timeline([]).empty).toBe(true);
    const old = timeline(
      [started(0, 1), claimed(1, 1), ev(2, "finished", { pid: 1, note: "x" }), ev(3, "reopened")],
      T0 + 10_000,
      T0 + 20_000,
    );
    expect(old.empty).toBe(true);
    expect(verdict(old, nightNumbers(old))).toBe("nothing happened in this window");
  });
});

describe("numbers and escaping", () => {
  it("median, overlapping spans", () => {
    expect(median([])).toBeNull();
    expect(median([3, 1, 2])).toBe(2);
    expect(median([150_000, 160_000])).toBe(155_000);
    const spans = [
      {
        kind: "paused" as const,
        from: ev(0, "x").at,
        to: ev(10, "x").at,
        ongoing: false,
        reason: "",
      },
      {
        kind: "paused" as const,
        from: ev(5, "x").at,
        to: ev(20, "x").at,
        ongoing: false,
        reason: "",
      },
    ];
    expect(spanTime(spans, "paused", T0, T0 + 15_000)).toBe(15_000);
  });

  it("every journal string is escaped in the page: markup in a note is text, not markup", () => {
    const evil = `<script>alert(1)</script><img src=x onerror="alert(2)"> & "quotes" 'too'\u0007`;
    const t = timeline([
      started(0, 1, true, evil),
      claimed(1, 1),
      ev(10, "hand_over", { pid: 1, context_tokens: 5, note: evil }),
      ev(11, "stood_down", { reason: evil }),
      ev(12, "paged", { kind: "stood_down", priority: 5, title: evil }),
    ]);
    const html = reportHtml([{ ...t, program: "catalog" }], T0 + 3600_000, "the journal");
    expect(html).not.toMatch(/<script|<img|onerror="/);
    expect(html).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
    expect(html).not.toContain("\u0007");
    expect(escapeHtml(`a<b>&"'`)).toBe("a&lt;b&gt;&amp;&quot;&#39;");
  });
});
