// A page that fails is retried with backoff (DESIGN §18): 5 min after the first failure, then
// twice as long each time, at most 1 h; a permanent 4xx is not retried; a retry that fails
// journals a count, not the page again. planPages is pure: these drive it as ticks would.

import { describe, expect, it } from "vitest";
import type { JournalEvent } from "../../src/journal/journal.js";
import { type PagePolicy, pageHistory, planPages, retryDelay } from "../../src/page/plan.js";
import { asEvent } from "../helpers/events.js";

const M = 60_000;
const H = 60 * M;
const T0 = Date.parse("2026-01-01T00:00:00.000Z");
const policy: PagePolicy = { pageCooldown: 6 * H, remindEvery: 4 * H, reminders: 2 };
const program = { name: "catalog", arg: "catalog" };
const page = { title: "catalog stood down", message: "m", priority: 5, tags: ["rotating_light"] };
const at = (ms: number) => new Date(ms).toISOString();

describe("retryDelay", () => {
  it.each([
    [1, 5 * M],
    [2, 10 * M],
    [3, 20 * M],
    [4, 40 * M],
    [5, H],
    [6, H],
    [500, H],
  ])("after failure %i: %i ms", (n, ms) => {
    expect(retryDelay(n)).toBe(ms);
  });
});

/** Ticks every `every` ms for `hours` against a server that always fails; returns the POST times. */
function simulate(every: number, hours: number, fail: { permanent?: boolean } = {}): number[] {
  const journal: JournalEvent[] = [{ at: at(T0), type: "stood_down", reason: "loop" }];
  const posts: number[] = [];
  for (let now = T0; now <= T0 + hours * H; now += every) {
    const fresh = now === T0 ? journal.slice() : [];
    for (const a of planPages({ journal, events: fresh, policy, now, tick: true, program })) {
      posts.push(now);
      journal.push({
        at: at(now),
        type: "page_failed",
        kind: a.kind,
        error: fail.permanent ? "answered 401" : "answered 503",
        ...(a.retry ? { retry: true, failures: (a.failures ?? 1) + 1 } : { page: a.page }),
        ...(fail.permanent ? { permanent: true } : {}),
      });
    }
  }
  return posts;
}

describe("a server that keeps failing, ticked every 5 minutes", () => {
  it("8 hours: 11 POSTs, not 97, at 0, 5, 15, 35, 75 min and then hourly", () => {
    const posts = simulate(5 * M, 8).map((ms) => (ms - T0) / M);
    expect(posts).toEqual([0, 5, 15, 35, 75, 135, 195, 255, 315, 375, 435]);
  });

  it("a permanent 4xx: one POST, never retried", () => {
    expect(simulate(5 * M, 8, { permanent: true })).toEqual([T0]);
  });

  it("the history counts the repeats and keeps the page of the first failure", () => {
    const journal: JournalEvent[] = [
      { at: at(T0), type: "stood_down" },
      { at: at(T0), type: "page_failed", kind: "stood_down", error: "503", page },
      {
        at: at(T0 + 5 * M),
        type: "page_failed",
        kind: "stood_down",
        error: "502",
        retry: true,
        failures: 2,
      },
    ].map(asEvent);
    const h = pageHistory(journal);
    expect(h.pending.get("stood_down")?.page).toEqual(page);
    expect(h.failures.get("stood_down")).toEqual({ count: 2, at: at(T0 + 5 * M), error: "502" });
    const plan = (now: number) =>
      planPages({ journal, events: [], policy, now, tick: true, program }).map((a) => [
        a.kind,
        a.retry,
        a.failures,
      ]);
    expect(plan(T0 + 14 * M)).toEqual([]);
    expect(plan(T0 + 15 * M)).toEqual([["stood_down", true, 2]]);
  });

  it("a retry refused for good drops the page", () => {
    const journal: JournalEvent[] = [
      { at: at(T0), type: "stood_down" },
      { at: at(T0), type: "page_failed", kind: "stood_down", error: "503", page },
      {
        at: at(T0 + 5 * M),
        type: "page_failed",
        kind: "stood_down",
        error: "401",
        retry: true,
        failures: 2,
        permanent: true,
      },
    ].map(asEvent);
    expect(pageHistory(journal).pending.size).toBe(0);
    expect(
      planPages({ journal, events: [], policy, now: T0 + 9 * H, tick: true, program }),
    ).toEqual([]);
  });
});
