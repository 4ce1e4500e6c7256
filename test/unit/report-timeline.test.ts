// The pure part of `sheepdog report`: journal events in, bars, spans, markers and numbers out.

import { describe, expect, it } from "vitest";
import type { JournalEvent } from "../../src/journal/journal.js";
import { escapeHtml } from "../../src/report/escape.js";
import { reportHtml } from "../../src/report/html.js";
import { median, nightNumbers, spanTime, standing, verdict } from "../../src/report/numbers.js";
import { buildTimeline, type Ending } from "../../src/report/timeline.js";
import { asEvent } from "../helpers/events.js";

const T0 = Date.parse("2026-11-30T00:00:00.000Z");
/** An event `s` seconds after T0. */
const ev = (s: number, type: string, fields: Record<string, unknown> = {}): JournalEvent =>
  asEvent({ at: new Date(T0 + s * 1000).toISOString(), type, ...fields });
/** The time `s` seconds after T0. */
const atS = (s: number) => new Date(T0 + s * 1000).toISOString();
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
    events: [
      ev(10, "stood_down", {
        reason: "holder pid 1 is dead; crash loop",
        holder_state: "dead",
        holder_pid: 1,
      }),
    ],
    ending: "dead",
    label: "dead",
  },
  {
    name: "a stand-down that leaves its holder alive (Claude Code's credentials fail): still running",
    events: [
      ev(10, "stood_down", {
        reason: "pid 1: Claude Code cannot reach the API with its credentials",
        holder_state: "alive",
        holder_pid: 1,
      }),
    ],
    ending: "running",
    label: "running",
  },
  {
    name: "a stand-down that names no holder state (an older journal): it ends nothing",
    events: [ev(10, "stood_down", { reason: "holder pid 1 is dead; crash loop" })],
    ending: "running",
    label: "running",
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
    expect(t.managers[0]?.last_seen_at).toBe(atS(100));
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
        ev(200, "sleep_gap", { from: atS(150), to: atS(190), discounted_ms: 35_000 }),
      ],
      T0,
      T0 + 300_000,
    );
    expect(t.spans).toEqual([
      expect.objectContaining({
        kind: "paused",
        from: atS(10),
        to: atS(70),
        ongoing: false,
      }),
      expect.objectContaining({
        kind: "stood_down",
        to: atS(300),
        ongoing: true,
        reason: "crash loop",
      }),
      expect.objectContaining({ kind: "sleep_gap", from: atS(150), discounted_ms: 35_000 }),
    ]);
    const n = nightNumbers(t);
    expect(n.paused_ms).toBe(60_000);
    expect(n.stood_down_ms).toBe(200_000);
    expect(n.sleep_gap_discounted_ms).toBe(35_000);
  });

  it("a pause whose reset passed with no tick since ends at its until", () => {
    const t = timeline([ev(10, "paused", { until: atS(40), reason: "r" })], T0, T0 + 100_000);
    expect(t.spans[0]).toMatchObject({ to: atS(40), ongoing: false });
  });

  it("pages sent, pages not delivered and failed ticks are markers", () => {
    const t = timeline([
      ev(5, "paged", { kind: "stood_down", priority: 5, title: "catalog stood down" }),
      ev(6, "page_failed", {
        kind: "paused",
        error: "HTTP 500",
        page: { title: "paused", message: "m", priority: 3, tags: [] },
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
        from: atS(0),
        to: atS(10),
        ongoing: false,
        reason: "",
      },
      {
        kind: "paused" as const,
        from: atS(5),
        to: atS(20),
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

describe("buildTimeline: idle spells and nudges (rule 9a)", () => {
  const at = atS;
  const nudged = (s: number, fields: Record<string, unknown> = {}) =>
    ev(s, "nudged", { pid: 1, reason: "pid 1 idle: …", text: "sheepdog: …", ...fields });
  const note = (s: number, type: string, since?: number) =>
    ev(s, type, {
      pid: 1,
      reason: `pid 1 ${type}`,
      verdict: type === "restart_wedged" ? "wedged" : "idle",
      evidence: ["e"],
      ...(since === undefined ? {} : { since: at(since) }),
    });
  const stopped = (s: number, decision: string) =>
    ev(s, "manager_stopped", { pid: 1, decision, reason: `pid 1 ${decision}`, outcome: "term" });
  const life = [started(0, 1), claimed(1, 1), saved(2, 1, 40_000)];
  const via = "tmux send-keys -t %3";
  const replaced = [
    ev(481, "claim_broken", { pid: 1, holder_state: "alive", reason: "stopped" }),
    started(482, 2, false),
    claimed(490, 2),
  ];

  const CASES: {
    name: string;
    events: JournalEvent[];
    idle: Record<string, unknown>[];
    ending: Ending;
    label: string;
  }[] = [
    {
      name: "a nudge, then a save: it woke",
      events: [nudged(300, { since: at(200), via }), saved(400, 1, 41_000)],
      idle: [
        {
          from: at(200),
          to: at(400),
          ongoing: false,
          outcome: "woke",
          nudged_at: at(300),
          nudge_via: via,
          nudge_error: null,
        },
      ],
      ending: "running",
      label: "running",
    },
    {
      name: "a nudge, then restart_idle: restarted, idle-stopped",
      events: [
        nudged(300, { since: at(200), via }),
        note(480, "restart_idle", 200),
        stopped(481, "restart_idle"),
        ...replaced,
      ],
      idle: [{ from: at(200), to: at(481), outcome: "restarted", nudged_at: at(300) }],
      ending: "idle_stopped",
      label: "idle-stopped",
    },
    {
      name: "no pane to nudge: restart_idle at once, from the turn's end",
      events: [note(480, "restart_idle", 200), stopped(481, "restart_idle"), ...replaced],
      idle: [{ from: at(200), to: at(481), outcome: "restarted", nudged_at: null }],
      ending: "idle_stopped",
      label: "idle-stopped",
    },
    {
      name: "a nudge that could not be typed still leads to the restart",
      events: [
        nudged(300, { since: at(200), error: "no server running on /tmp/tmux-0/default" }),
        note(480, "restart_idle", 200),
        stopped(481, "restart_idle"),
        ...replaced,
      ],
      idle: [
        {
          outcome: "restarted",
          nudge_via: null,
          nudge_error: "no server running on /tmp/tmux-0/default",
        },
      ],
      ending: "idle_stopped",
      label: "idle-stopped",
    },
    {
      name: "still idle at the window's end: ongoing",
      events: [nudged(300, { since: at(200), via })],
      idle: [{ from: at(200), to: at(3600), ongoing: true, outcome: "ongoing" }],
      ending: "running",
      label: "running",
    },
    {
      name: "a nudge without `since` (an older journal): the spell begins at the nudge",
      events: [nudged(300, { via }), saved(400, 1, 41_000)],
      idle: [{ from: at(300), to: at(400), outcome: "woke" }],
      ending: "running",
      label: "running",
    },
    {
      name: "a spell never begins before the last save (a turn end read before it)",
      events: [saved(250, 1, 41_000), nudged(300, { since: at(200), via }), saved(400, 1, 1)],
      idle: [{ from: at(250), to: at(400), outcome: "woke" }],
      ending: "running",
      label: "running",
    },
    {
      name: "idle, then found dead before the restart: its time ended",
      events: [
        nudged(300, { since: at(200), via }),
        ev(350, "claim_broken", { pid: 1, holder_state: "dead", reason: "dead" }),
      ],
      idle: [{ to: at(350), outcome: "ended" }],
      ending: "dead",
      label: "dead",
    },
    {
      name: "wedged: restart_wedged, no idle spell",
      events: [note(480, "restart_wedged", 100), stopped(481, "restart_wedged"), ...replaced],
      idle: [],
      ending: "wedged_stopped",
      label: "wedged-stopped",
    },
  ];

  it.each(CASES)("$name", ({ events, idle, ending, label }) => {
    const t = timeline([...life, ...events]);
    const bar = t.managers[0];
    expect(bar).toMatchObject({ pid: 1, ending, ending_label: label });
    expect(bar?.idle).toEqual(idle.map((s) => expect.objectContaining(s)));
  });

  it("idle- and wedged-stopped: replacement time, numbers, the unplanned start's cause", () => {
    for (const [decision, ending, cause] of [
      ["restart_idle", "idle_stopped", "after an idle stop"],
      ["restart_wedged", "wedged_stopped", "after a wedged stop"],
    ] as const) {
      const t = timeline([...life, note(480, decision, 100), stopped(481, decision), ...replaced]);
      expect(t.managers[0]?.replaced_after_ms).toBe(488_000);
      const n = nightNumbers(t);
      expect(n).toMatchObject({
        idle_stopped: ending === "idle_stopped" ? 1 : 0,
        wedged_stopped: ending === "wedged_stopped" ? 1 : 0,
        replacements: [{ n: 1, pid: 1, ending, replaced_after_ms: 488_000 }],
        median_replace_ms: 488_000,
      });
      expect(verdict(t, n)).toContain(`1 unplanned restart (1 ${cause})`);
      if (ending === "wedged_stopped") expect(t.managers[0]?.wedged_since).toBe(at(100));
    }
  });

  it("a manager fenced by its host (the lease lost, DESIGN §15) ends as such, not as a generic stop or a crash", () => {
    const t = timeline([...life, stopped(480, "leased_elsewhere")]);
    expect(t.managers[0]).toMatchObject({
      ending: "lease_lost",
      ending_label: "stopped: lease lost",
    });
    expect(nightNumbers(t).replacements).toEqual([]);
  });

  it("nudges counted: sent, woke, not typed; a spell outside the window is left out", () => {
    const events = [
      ...life,
      nudged(300, { since: at(200), via }),
      saved(400, 1, 41_000),
      nudged(900, { since: at(800), error: "pane gone" }),
      saved(1000, 1, 42_000),
    ];
    const n = nightNumbers(timeline(events));
    expect(n).toMatchObject({ idle_spells: 2, nudges: 2, nudges_woke: 2, nudges_failed: 1 });
    expect(verdict(timeline(events), n)).toContain("2 nudges (2 woke)");
    const late = timeline(events, T0 + 700_000, T0 + 3600_000);
    expect(late.managers[0]?.idle.map((s) => s.from)).toEqual([at(800)]);
  });

  it("the page draws each spell and its nudge, each with a title, and the legend names them", () => {
    const t = timeline([
      ...life,
      nudged(300, { since: at(200), via }),
      saved(400, 1, 41_000),
      nudged(900, { since: at(800), error: "pane gone" }),
      note(1080, "restart_idle", 800),
      stopped(1081, "restart_idle"),
    ]);
    const html = reportHtml([t], T0 + 3600_000, "the journal");
    const spells = [...html.matchAll(/<g class="idle-spell outcome-(\w+)"[^>]*><title>([^<]*)</g)];
    expect(spells.map((m) => m[1])).toEqual(["woke", "restarted"]);
    expect(spells[0]?.[2]).toMatch(
      /^pid 1 idle .* → .*\nnudged .* \(tmux send-keys -t %3\)\nit woke: saved at /,
    );
    expect(spells[1]?.[2]).toMatch(/nudge at .* not typed: pane gone\nrestarted: stopped at /);
    const marks = [...html.matchAll(/<g class="nudge-mark( failed)?"><title>([^<]*)</g)];
    expect(marks.map((m) => [m[1] ?? "", m[2]?.split("\n")[0]])).toEqual([
      ["", expect.stringMatching(/^pid 1: nudged /)],
      [" failed", expect.stringMatching(/^pid 1: nudge at .* not typed: pane gone$/)],
    ]);
    expect(html).toMatch(/<g class="bar ending-idle_stopped" data-pid="1"/);
    expect(html).toContain("pid 1 · idle-stopped");
    for (const word of ["idle-stopped", "wedged-stopped", "nudge", "nudge not typed"])
      expect(html).toContain(`${word}</li>`);
    expect(html).toContain("idle spell (the turn ended, nothing to wake it)</li>");
    expect(html).toContain('<tr class="idle-row woke">');
    expect(html).toContain(
      "<dt>idle spells / nudges</dt><dd>2 / 2 (1 woke after the nudge, 1 not typed)</dd>",
    );
  });

  it("a wedged manager's hung call is shaded on its bar, with its title", () => {
    const t = timeline([...life, note(480, "restart_wedged", 100), stopped(481, "restart_wedged")]);
    const html = reportHtml([t], T0 + 3600_000, "the journal");
    expect(html).toMatch(
      /<g class="wedged-spell"><title>wedged: a tool call open since [^<]*restart_wedged\)<\/title><rect /,
    );
  });

  it("now: a running manager in an idle spell says since when, and the nudge", () => {
    const t = timeline([...life, nudged(300, { since: at(200), via })]);
    expect(standing(t)).toEqual({
      text: `running: pid 1, idle since ${at(200)}, nudged ${at(300)}`,
      tone: "warn",
    });
  });
});
