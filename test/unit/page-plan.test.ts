import { describe, expect, it } from "vitest";
import type { JournalEvent } from "../../src/journal/journal.js";
import { kindOf } from "../../src/page/compose.js";
import { type PagePolicy, planPages } from "../../src/page/plan.js";
import { pageStatusOf } from "../../src/page/status.js";
import { asEvent } from "../helpers/events.js";

const H = 3_600_000;
const T0 = Date.parse("2026-01-01T00:00:00.000Z");
const policy: PagePolicy = { pageCooldown: 6 * H, remindEvery: 4 * H, reminders: 2 };
const program = { name: "catalog", arg: "catalog" };

/** An event at T0 + hours. */
function ev(hours: number, type: string, fields: Record<string, unknown> = {}): JournalEvent {
  return asEvent({ at: new Date(T0 + hours * H).toISOString(), type, ...fields });
}
const page = { title: "catalog stood down", message: "m", priority: 5, tags: ["rotating_light"] };
/** A pause at a refusal naming no reset (DESIGN §5). */
const NEEDS = {
  until: "x",
  reason: "r",
  window: "seven_day",
  needs_person: "ask your admin to raise it at https://claude.ai/admin-settings/usage",
  limit_text:
    "You've hit your org's monthly spend limit · ask your admin to raise it at https://claude.ai/admin-settings/usage",
};

describe("kindOf", () => {
  const rows: [Record<string, unknown> & { type: string }, string | null][] = [
    [{ type: "stood_down", reason: "x" }, "stood_down"],
    [{ type: "tick_failed", error: "x" }, "tick_failed"],
    [{ type: "paused", until: "x" }, "paused"],
    [{ type: "paused", until: "x", needs_person: "contact support" }, "needs_person"],
    [{ type: "cleared" }, "cleared"],
    [{ type: "finished", note: "x" }, "finished"],
    [
      {
        type: "manager_stopped",
        decision: "restart_stuck",
        reason: "pid 7: no save for 50m (stale after 45m)",
      },
      "stuck_restart",
    ],
    [{ type: "manager_stopped", decision: "restart_stuck", reason: "?" }, "stuck_restart"],
    // Only the decision counts, never the reason's wording.
    [{ type: "manager_stopped", reason: "pid 7: no save for 50m (stale after 45m)" }, null],
    [
      {
        type: "manager_stopped",
        decision: "start",
        reason: "started 2026-01-01T00:00:00Z and never claimed",
      },
      null,
    ],
    [
      {
        type: "manager_stopped",
        decision: "start_after_hand_over",
        reason: "handed over; stopping it before its successor starts",
      },
      null,
    ],
    [
      {
        type: "manager_stopped",
        decision: "restart_stuck",
        planned: true,
        reason: "stopped for the usage pause; pid 7: no save for 3h (stale after 45m)",
      },
      null,
    ],
    [
      {
        type: "manager_stopped",
        decision: "stand_down",
        reason: "pid 7 was stuck: no save for 50m (stale after 45m); stopped, and crash loop: …",
      },
      null,
    ],
    [{ type: "unpaused" }, null],
    [{ type: "reopened" }, null],
    [{ type: "paged", kind: "stood_down" }, null],
  ];
  for (const [e, kind] of rows) {
    it(`${e.type} ${e.reason ?? ""} → ${kind}`, () => {
      expect(kindOf(asEvent({ at: "", ...e }))).toBe(kind);
    });
  }
});

describe("planPages", () => {
  const rows: {
    name: string;
    journal: JournalEvent[];
    /** Indexes into journal of the events this call hands over. */
    given: number[];
    now: number;
    tick: boolean;
    want: [string, { retry?: true; reminder?: number }?][];
  }[] = [
    {
      name: "a stand-down pages",
      journal: [ev(0, "stood_down", { reason: "loop" })],
      given: [0],
      now: 0,
      tick: true,
      want: [["stood_down"]],
    },
    {
      name: "a repeated stand-down inside the cooldown does not page again",
      journal: [ev(0, "stood_down"), ev(0, "paged", { kind: "stood_down" }), ev(2, "stood_down")],
      given: [2],
      now: 2,
      tick: false,
      want: [],
    },
    {
      name: "after the cooldown it pages again",
      journal: [ev(0, "stood_down"), ev(0, "paged", { kind: "stood_down" }), ev(6, "stood_down")],
      given: [2],
      now: 6,
      tick: false,
      want: [["stood_down"]],
    },
    {
      name: "a stand-down after a person's resume is news: it pages inside the cooldown",
      journal: [
        ev(0, "stood_down"),
        ev(0, "paged", { kind: "stood_down" }),
        ev(1, "cleared"),
        ev(2, "stood_down"),
      ],
      given: [3],
      now: 2,
      tick: false,
      want: [["stood_down"]],
    },
    {
      name: "a pause after an unpause stays inside the cooldown (pauses come and go by themselves)",
      journal: [
        ev(0, "paused", { until: "x", reason: "r" }),
        ev(0, "paged", { kind: "paused" }),
        ev(1, "unpaused"),
        ev(2, "paused", { until: "y", reason: "r" }),
      ],
      given: [3],
      now: 2,
      tick: false,
      want: [],
    },
    {
      name: "a refusal naming no reset pages that a person must act, once: its fallback renewals do not page, past the cooldown too",
      journal: [
        ev(0, "paused", NEEDS),
        ev(0, "paged", { kind: "needs_person" }),
        ev(1, "unpaused"),
        ev(1, "manager_started", { planned: true }),
        ev(1.1, "paused", NEEDS),
        ev(2.1, "unpaused"),
        ev(7, "paused", NEEDS),
      ],
      given: [4, 6],
      now: 7,
      tick: true,
      want: [],
    },
    {
      name: "the first such pause pages, inside a usage pause's cooldown",
      journal: [
        ev(0, "paused", { until: "x", reason: "r", window: "five_hour" }),
        ev(0, "paged", { kind: "paused" }),
        ev(1, "unpaused"),
        ev(2, "paused", NEEDS),
      ],
      given: [3],
      now: 2,
      tick: true,
      want: [["needs_person"]],
    },
    {
      name: "after a manager saved in between it is news again (past the cooldown)",
      journal: [
        ev(0, "paused", NEEDS),
        ev(0, "paged", { kind: "needs_person" }),
        ev(1, "unpaused"),
        ev(2, "saved", { pid: 7 }),
        ev(7, "paused", NEEDS),
      ],
      given: [4],
      now: 7,
      tick: true,
      want: [["needs_person"]],
    },
    {
      name: "two events of one kind in one call: one page",
      journal: [ev(0, "tick_failed", { error: "a" }), ev(0, "tick_failed", { error: "b" })],
      given: [0, 1],
      now: 0,
      tick: true,
      want: [["tick_failed"]],
    },
    {
      name: "a stuck stop on the way to a stand-down sends only the urgent page",
      journal: [
        ev(0, "manager_stopped", {
          decision: "stand_down",
          reason: "pid 1 was stuck: no save for 1h (stale after 45m); stopped, and crash loop: …",
        }),
        ev(0, "stood_down", { reason: "loop" }),
      ],
      given: [0, 1],
      now: 0,
      tick: true,
      want: [["stood_down"]],
    },
    {
      name: "an undelivered page is retried on a tick",
      journal: [ev(0, "stood_down"), ev(0, "page_failed", { kind: "stood_down", page })],
      given: [],
      now: 0.1,
      tick: true,
      want: [["stood_down", { retry: true }]],
    },
    {
      name: "…but not outside a tick",
      journal: [ev(0, "stood_down"), ev(0, "page_failed", { kind: "stood_down", page })],
      given: [],
      now: 0.1,
      tick: false,
      want: [],
    },
    {
      name: "…nor once delivered",
      journal: [
        ev(0, "tick_failed"),
        ev(0, "page_failed", { kind: "tick_failed", page }),
        ev(1, "paged", { kind: "tick_failed", retry: true }),
      ],
      given: [],
      now: 2,
      tick: true,
      want: [],
    },
    {
      name: "…nor once the stand-down is cleared",
      journal: [
        ev(0, "stood_down"),
        ev(0, "page_failed", { kind: "stood_down", page }),
        ev(1, "cleared"),
      ],
      given: [],
      now: 2,
      tick: true,
      want: [],
    },
    {
      name: "a failed reminder is retried as that reminder",
      journal: [
        ev(0, "stood_down"),
        ev(0, "paged", { kind: "stood_down" }),
        ev(4, "page_failed", { kind: "stood_down", page, reminder: 1 }),
      ],
      given: [],
      now: 4.1,
      tick: true,
      want: [["stood_down", { retry: true, reminder: 1 }]],
    },
    {
      name: "no reminder before remind_every",
      journal: [ev(0, "stood_down"), ev(0, "paged", { kind: "stood_down" })],
      given: [],
      now: 3.9,
      tick: true,
      want: [],
    },
    {
      name: "the first reminder at remind_every",
      journal: [ev(0, "stood_down"), ev(0, "paged", { kind: "stood_down" })],
      given: [],
      now: 4,
      tick: true,
      want: [["stood_down", { reminder: 1 }]],
    },
    {
      name: "the second reminder remind_every after the first",
      journal: [
        ev(0, "stood_down"),
        ev(0, "paged", { kind: "stood_down" }),
        ev(4, "paged", { kind: "stood_down", reminder: 1 }),
      ],
      given: [],
      now: 8,
      tick: true,
      want: [["stood_down", { reminder: 2 }]],
    },
    {
      name: "no third reminder",
      journal: [
        ev(0, "stood_down"),
        ev(0, "paged", { kind: "stood_down" }),
        ev(4, "paged", { kind: "stood_down", reminder: 1 }),
        ev(8, "paged", { kind: "stood_down", reminder: 2 }),
      ],
      given: [],
      now: 40,
      tick: true,
      want: [],
    },
    {
      name: "no reminder outside a tick",
      journal: [ev(0, "stood_down"), ev(0, "paged", { kind: "stood_down" })],
      given: [],
      now: 5,
      tick: false,
      want: [],
    },
    {
      name: "no reminder when the stand-down page never got through (the retry goes instead)",
      journal: [ev(0, "stood_down"), ev(0, "page_failed", { kind: "stood_down", page })],
      given: [],
      now: 5,
      tick: true,
      want: [["stood_down", { retry: true }]],
    },
  ];

  for (const row of rows) {
    it(row.name, () => {
      const attempts = planPages({
        journal: row.journal,
        events: row.given.map((i) => row.journal[i] as JournalEvent),
        policy,
        now: T0 + row.now * H,
        tick: row.tick,
        program,
      });
      expect(
        attempts.map((a) => {
          const extra: { retry?: true; reminder?: number } = {};
          if (a.retry) extra.retry = true;
          if (a.reminder) extra.reminder = a.reminder;
          return Object.keys(extra).length ? [a.kind, extra] : [a.kind];
        }),
      ).toEqual(row.want);
    });
  }
});

describe("the needs_person page", () => {
  it("says a person must act and quotes what Claude Code said", () => {
    const e = ev(0, "paused", { ...NEEDS, until: new Date(T0 + H).toISOString() });
    const [a] = planPages({ journal: [e], events: [e], policy, now: T0, tick: false, program });
    expect(a?.kind).toBe("needs_person");
    expect(a?.page.title).toBe("catalog: a person must act on its seat's usage");
    expect(a?.page.message).toContain(`"${NEEDS.limit_text}"`);
    expect(a?.page.message).toContain(`will not lift by itself: ${NEEDS.needs_person}.`);
    expect(a?.page.priority).toBe(4);
  });
});

describe("pageStatusOf", () => {
  it("names the last page, the undelivered ones and the next reminder", () => {
    const journal = [
      ev(0, "stood_down"),
      ev(0, "paged", { kind: "stood_down", title: "catalog stood down", priority: 5 }),
      ev(1, "tick_failed"),
      ev(1, "page_failed", {
        kind: "tick_failed",
        error: "ntfy server x answered 500",
        page: { ...page, title: "catalog: watchdog tick failed" },
      }),
    ];
    expect(pageStatusOf(journal, policy, true)).toEqual({
      configured: true,
      last_page: {
        at: "2026-01-01T00:00:00.000Z",
        kind: "stood_down",
        title: "catalog stood down",
        priority: 5,
      },
      undelivered: [
        {
          at: "2026-01-01T01:00:00.000Z",
          kind: "tick_failed",
          title: "catalog: watchdog tick failed",
          error: "ntfy server x answered 500",
          failures: 1,
          next_try: "2026-01-01T01:05:00.000Z", // 5 min after the first failure
        },
      ],
      next_reminder: "2026-01-01T04:00:00.000Z",
      reminders_left: 2,
    });
  });

  it("is empty for a quiet program", () => {
    expect(pageStatusOf([], policy, false)).toEqual({
      configured: false,
      last_page: null,
      undelivered: [],
      next_reminder: null,
      reminders_left: null,
    });
  });
});
