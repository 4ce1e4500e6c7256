// Pages end to end: real `sheepdog tick`/`statusline`/`resume` processes, a real ntfy stand-in.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readEvents } from "../src/journal/journal.js";
import { sheepdogAsync, tempProgram } from "./helpers/cli.js";
import { useNtfyServer } from "./helpers/ntfy-server.js";

const server = useNtfyServer();

/** A program whose manager exits at once without claiming: every start is a start that never claimed. */
function crashingProgram(page: Record<string, unknown> = {}) {
  const p = tempProgram("catalog", {
    manager: { launcher: "command", command: [process.execPath, "-e", "process.exit(0)"] },
    watchdog: { claim_grace: "1s", crash_loop: { starts: 1, within: "1h" } },
    page: {
      ntfy: { server: server.url, topic: "catalog-alerts" },
      heartbeat_url: `${server.url}/hc/catalog`,
      ...page,
    },
  });
  const seat = join(p.home, "seat");
  mkdirSync(seat);
  return { ...p, seat };
}

async function tick(env: Record<string, string>): Promise<string> {
  const r = await sheepdogAsync(["tick", "--json"], { env });
  expect(r.stderr).toBe("");
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout).programs[0].decision;
}

/** Ticks (bounded) until one decides `want`; returns how many ticks ran. */
async function tickUntil(env: Record<string, string>, want: string, max = 40): Promise<number> {
  for (let n = 1; n <= max; n++) {
    if ((await tick(env)) === want) return n;
    await new Promise((r) => setTimeout(r, 300));
  }
  throw new Error(`no tick decided ${want} in ${max} ticks`);
}

describe("pages through tick", () => {
  it("a 100 % reading pauses the program and pages once", async () => {
    const p = tempProgram("catalog", {
      manager: { launcher: "command", command: [process.execPath, "-e", "process.exit(0)"] },
      page: { ntfy: { server: server.url, topic: "catalog-alerts" } },
    });
    const seat = join(p.home, "seat");
    mkdirSync(seat);
    const resets = Math.floor(Date.now() / 1000) + 3600;
    const reading = {
      rate_limits: { five_hour: { used_percentage: 100, resets_at: resets } },
      session_id: "s1",
      model: { display_name: "Opus" },
    };
    const env = { ...p.env, CLAUDE_CONFIG_DIR: seat };
    const line = await sheepdogAsync(["statusline"], { env, input: JSON.stringify(reading) });
    expect(line.code).toBe(0);

    expect(await tick(env)).toBe("pause");
    expect(await tick(env)).toBe("wait_pause");
    expect(await tick(env)).toBe("wait_pause");

    expect(server.received).toHaveLength(1);
    const got = server.received[0];
    expect(got?.priority).toBe(3);
    expect(got?.title).toBe("catalog paused at a usage limit");
    expect(got?.tags).toEqual(["pause_button"]);
    expect(got?.message).toContain(new Date(resets * 1000).toISOString());
    expect(got?.message).toContain("sheepdog status --program catalog");
    const paged = readEvents(p.stateDir).filter((e) => e.type === "paged");
    expect(paged.map((e) => [e.kind, e.priority])).toEqual([["paused", 3]]);
  });

  it("a crash loop stands down with an urgent page naming sheepdog resume; resume sends a low one", async () => {
    const p = crashingProgram();
    const ticks = await tickUntil(p.env, "stand_down");
    // Held: a stood-down program pages no more (its reminders are 4h away).
    expect(await tick(p.env)).toBe("hold");

    const urgent = server.received.filter((r) => r.priority === 5);
    expect(urgent).toHaveLength(1);
    expect(server.received).toHaveLength(1);
    expect(urgent[0]?.title).toBe("catalog stood down");
    expect(urgent[0]?.tags).toEqual(["rotating_light"]);
    expect(urgent[0]?.message).toContain("sheepdog resume --program catalog");
    const stood = readEvents(p.stateDir).find((e) => e.type === "stood_down");
    expect(urgent[0]?.message).toContain(String(stood?.reason));
    // Who watches the watchdog: one heartbeat request per tick.
    expect(server.heartbeats).toHaveLength(ticks + 1);

    const r = await sheepdogAsync(["resume"], { env: p.env });
    expect(r.code).toBe(0);
    expect(server.received).toHaveLength(2);
    expect(server.received[1]).toMatchObject({ priority: 2, title: "catalog resumed" });
    // resume is not a tick: no heartbeat request.
    expect(server.heartbeats).toHaveLength(ticks + 1);
  });

  it("reminds while stood down, `reminders` times, then stays quiet", async () => {
    const p = crashingProgram({ remind_every: "1s", reminders: 2 });
    await tickUntil(p.env, "stand_down");
    // Tick (bounded) until both reminders went out, then a few more ticks add nothing.
    const reminders = () => server.received.filter((r) => /reminder/.test(r.title ?? ""));
    for (let n = 0; n < 40 && reminders().length < 2; n++) {
      expect(await tick(p.env)).toBe("hold");
      await new Promise((r) => setTimeout(r, 400));
    }
    expect(reminders().map((r) => r.title)).toEqual([
      "catalog still stood down (reminder 1 of 2)",
      "catalog still stood down (reminder 2 of 2)",
    ]);
    for (let n = 0; n < 2; n++) {
      await new Promise((r) => setTimeout(r, 1100));
      expect(await tick(p.env)).toBe("hold");
    }
    expect(server.received.filter((r) => r.priority === 5)).toHaveLength(3);
    expect(server.received).toHaveLength(3);
    const paged = readEvents(p.stateDir).filter((e) => e.type === "paged");
    expect(paged.map((e) => e.reminder ?? 0)).toEqual([0, 1, 2]);
  });

  it("retries through ticks: a page that failed while the server was down arrives once it is up", async () => {
    const p = crashingProgram();
    server.failWith = 503;
    try {
      await tickUntil(p.env, "stand_down");
    } finally {
      server.failWith = null;
    }
    expect(server.delivered).toHaveLength(0);
    expect(readEvents(p.stateDir).filter((e) => e.type === "page_failed")).toHaveLength(1);
    server.received.length = 0;
    // a failed page waits 5 minutes before its first retry (DESIGN §18): the clock steps past it
    const clock = join(p.home, "clock");
    writeFileSync(clock, String(6 * 60_000));
    const later = { ...p.env, SHEEPDOG_CLOCK_FILE: clock };
    expect(await tick(later)).toBe("hold");
    expect(server.received).toHaveLength(1);
    expect(server.received[0]).toMatchObject({ priority: 5, title: "catalog stood down" });
    const last = readEvents(p.stateDir).filter((e) => e.type === "paged");
    expect(last.map((e) => [e.kind, e.retry])).toEqual([["stood_down", true]]);
    expect(await tick(later)).toBe("hold");
    expect(server.received).toHaveLength(1);
  });
});
