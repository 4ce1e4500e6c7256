// A failing page is retried with backoff, through real ticks and a real HTTP server on
// 127.0.0.1 (DESIGN §18, issue 31): a 503 (or a 429) is tried again 5 min after the first
// failure, then 10, 20, 40 and at most every hour, each repeat journaled as a count; a 401 is
// not retried and is journaled once. Time is simulated through the clock-step hook.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { sheepdog, sheepdogAsync, tempProgram } from "./helpers/cli.js";
import { useNtfyServer } from "./helpers/ntfy-server.js";

const server = useNtfyServer();
const M = 60_000;

/** A program paused at a 100 % reading: its `paused` page is what fails, tick after tick. */
function pausedProgram() {
  const p = tempProgram("catalog", {
    page: { ntfy: { server: server.url, topic: "catalog-alerts" } },
  });
  const seat = join(p.home, "seat");
  mkdirSync(seat);
  const clock = join(p.home, "clock");
  writeFileSync(clock, "0");
  const env = { ...p.env, CLAUDE_CONFIG_DIR: seat, SHEEPDOG_CLOCK_FILE: clock };
  // the seven-day window at 100 % until three days from now: paused through every tick below
  const resets = Math.floor(Date.now() / 1000) + 3 * 24 * 3600;
  const reading = {
    rate_limits: { seven_day: { used_percentage: 100, resets_at: resets } },
    session_id: "s1",
    model: { display_name: "Opus" },
  };
  expect(sheepdog(["statusline"], { env, input: JSON.stringify(reading) }).code).toBe(0);
  /** One tick at `minutes` past the start, on the stepped clock. */
  const tickAt = async (minutes: number) => {
    writeFileSync(clock, String(minutes * M));
    const r = await sheepdogAsync(["tick", "--json"], { env });
    expect(r.code, r.stderr).toBe(0);
    return JSON.parse(r.stdout).programs[0].decision as string;
  };
  const failures = () =>
    readFileSync(join(p.stateDir, "journal.jsonl"), "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((e) => e.type === "page_failed");
  return { ...p, env, tickAt, failures };
}

/** Minutes past the start at which a POST reached the server. */
const postsAt = (p: { tickAt: (m: number) => Promise<string> }, minutes: number[]) =>
  (async () => {
    const out: number[] = [];
    for (const m of minutes) {
      const before = server.received.length;
      await p.tickAt(m);
      if (server.received.length > before) out.push(m);
    }
    return out;
  })();

describe("a page that keeps failing", () => {
  it("503: retried at 5, 15, 35, 75 min and then hourly, the page journaled once and the repeats as a count", async () => {
    server.failWith = 503;
    const p = pausedProgram();
    const ticks = [...Array.from({ length: 17 }, (_, i) => i * 5), 130, 140, 195, 200];
    expect(await postsAt(p, ticks)).toEqual([0, 5, 15, 35, 75, 140, 200]);
    expect(server.received.every((r) => r.status === 503)).toBe(true);
    const failed = p.failures();
    expect(failed).toHaveLength(7);
    expect(failed.filter((e) => e.page !== undefined)).toHaveLength(1); // the page, once
    expect(failed.map((e) => e.failures ?? 1)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(failed.every((e) => e.status === 503 && e.kind === "paused")).toBe(true);
    const status = JSON.parse(sheepdog(["status", "--json"], { env: p.env }).stdout);
    expect(status.programs[0].facts.pages.undelivered).toMatchObject([
      { kind: "paused", failures: 7 },
    ]);

    // the server is back: the next retry delivers it, and nothing more is sent
    server.failWith = null;
    expect(await postsAt(p, [255, 260, 330])).toEqual([260]);
    expect(server.delivered).toHaveLength(1);
  });

  it("429: too many requests is a 'later', retried with backoff too", async () => {
    server.failWith = 429;
    const p = pausedProgram();
    expect(await postsAt(p, [0, 4, 5, 10, 15])).toEqual([0, 5, 15]);
  });

  it("401: refused for good, journaled once, never sent again", async () => {
    server.token = "tk_needed"; // the program sends none
    const p = pausedProgram();
    expect(await postsAt(p, [0, 5, 15, 35, 75, 135])).toEqual([0]);
    const failed = p.failures();
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({ kind: "paused", status: 401, permanent: true });
    expect(String(failed[0]?.error)).toContain("answered 401");
    const status = JSON.parse(sheepdog(["status", "--json"], { env: p.env }).stdout);
    expect(status.programs[0].facts.pages.undelivered).toEqual([]);
  });
});
