// Incidents end to end, continued (DESIGN §8): a pause's incident, older ntfy servers (no
// `copy` below 2.17, no sequence ids below 2.16) and a control topic that cannot be read, through
// real `sheepdog tick` processes against the ntfy stand-in on 127.0.0.1.
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { sheepdogAsync } from "./helpers/cli.js";
import { pressHttpAction, useNtfyServer } from "./helpers/ntfy-server.js";
import { action, CONTROL, PAGES, phoneProgram, tick, tickUntil } from "./helpers/phone.js";
import { ofType } from "./helpers/watchdog.js";

const server = useNtfyServer();
const program = (extra: Record<string, unknown> = {}) => phoneProgram(server, extra);
const pages = () => server.topicMessages(PAGES);

/** A program whose seat is at 100 % until an hour from now: the next tick pauses it. */
async function limited() {
  const p = program({
    manager: { launcher: "command", command: [process.execPath, "-e", "process.exit(0)"] },
  });
  const seat = join(p.home, "seat");
  mkdirSync(seat);
  const env = { ...p.env, CLAUDE_CONFIG_DIR: seat };
  const reading = {
    rate_limits: {
      five_hour: { used_percentage: 100, resets_at: Math.floor(Date.now() / 1000) + 3600 },
    },
    session_id: "s1",
    model: { display_name: "Opus" },
  };
  const line = await sheepdogAsync(["statusline"], { env, input: JSON.stringify(reading) });
  expect(line.code).toBe(0);
  expect(await tick(env)).toBe("pause");
  const page = pages()[0];
  expect(page).toMatchObject({ title: "catalog paused at a usage limit", priority: 3 });
  expect(page?.actions?.map((a) => a.label)).toEqual(["Unpause", "Copy command"]);
  expect(action(page, "Copy command").value).toBe("sheepdog status --program catalog");
  return { ...p, env, page };
}

describe("a pause incident", () => {
  it("closes when the pause ends: the page becomes 'the pause is over' in place", async () => {
    const p = await limited();
    expect(await tick(p.env)).toBe("wait_pause");
    writeFileSync(p.clock, String(3660_000)); // the reset has passed (the clock-step hook)
    await tick(p.env);
    expect(ofType(p.stateDir, "unpaused")).toHaveLength(1);
    expect(ofType(p.stateDir, "incident_closed")).toMatchObject([
      { kind: "paused", how: "recovered" },
    ]);
    const close = pages()[1];
    expect(close).toMatchObject({
      title: "catalog: the pause is over",
      priority: 2,
      sequence_id: p.page?.sequence_id,
    });
    expect(close?.message).toMatch(/^recovered at \d\d:\d\d \S+ after 1 h 1 m/);
    expect(server.notifications(PAGES)).toHaveLength(1);
    // Reminders and the close are sent once: a later tick is quiet.
    await tick(p.env);
    expect(pages()).toHaveLength(2);
  });

  it("Unpause from the phone ends it as sheepdog unpause would, journaled by the phone", async () => {
    const p = await limited();
    expect((await pressHttpAction(action(p.page, "Unpause"))).status).toBe(200);
    expect(await tick(p.env)).not.toBe("wait_pause");
    expect(ofType(p.stateDir, "unpaused")).toMatchObject([
      { by: "phone", reason: "unpaused by a person" },
    ]);
    expect(ofType(p.stateDir, "incident_closed")).toMatchObject([{ kind: "paused", how: "phone" }]);
    expect(pages()[1]).toMatchObject({
      title: "catalog unpaused",
      sequence_id: p.page?.sequence_id,
    });
    expect(pages()[1]?.message).toMatch(/^unpaused from the phone at /);
  });
});

describe("older ntfy servers", () => {
  /** A tick that fails (last-tick.json cannot be written), then one that goes through. */
  async function failThenRecover(p: ReturnType<typeof program>) {
    const lastTick = join(p.stateDir, "last-tick.json");
    mkdirSync(lastTick, { recursive: true });
    const failed = await sheepdogAsync(["tick"], { env: p.env });
    expect(failed.code, failed.stderr).toBe(1);
    rmSync(lastTick, { recursive: true });
    await tick(p.env);
    expect(ofType(p.stateDir, "incident_closed")).toMatchObject([
      { kind: "tick_failed", how: "recovered" },
    ]);
  }

  it("2.16: copy is refused (400, 40018): the page arrives without it, and the close still replaces it", async () => {
    server.version = "2.16.0";
    const p = program();
    await failThenRecover(p);
    const refused = server.received.filter((r) => r.status === 400);
    expect(refused).toHaveLength(1);
    expect(refused[0]?.title).toBe("catalog: watchdog tick failed");
    const [page, close] = pages();
    expect(page?.title).toBe("catalog: watchdog tick failed");
    expect(page?.actions).toBeUndefined(); // no answer to offer a tick failure but the command
    expect(page?.message).toContain("sheepdog journal --program catalog");
    expect(ofType(p.stateDir, "paged")[0]).toMatchObject({
      kind: "tick_failed",
      copy_dropped: true,
    });
    expect(close).toMatchObject({ title: "catalog recovered", sequence_id: page?.sequence_id });
    expect(server.notifications(PAGES)).toHaveLength(1);

    // Remembered: the next problem page goes without copy at once, not refused again.
    await tickUntil(p.env, "stand_down");
    expect(server.received.filter((r) => r.status === 400)).toHaveLength(1);
    const standDown = pages().at(-1);
    expect(standDown?.title).toBe("catalog stood down");
    expect(standDown?.actions?.map((a) => a.label)).toEqual(["Resume"]);
  });

  it("2.15: no sequence ids: the close comes as a second message", async () => {
    server.version = "2.15.0";
    const p = program();
    await failThenRecover(p);
    const [page, close] = pages();
    expect(page?.sequence_id).toBeUndefined();
    expect(close?.title).toBe("catalog recovered");
    expect(server.notifications(PAGES).map((m) => m.title)).toEqual([
      "catalog: watchdog tick failed",
      "catalog recovered",
    ]);
  });
});

describe("a control topic that cannot be read", () => {
  it("is journaled once while it lasts (429, then down), and the ticks go on", async () => {
    const p = program({ watchdog: { interval: "1h" } });
    server.rateLimit = "requests";
    await tick(p.env);
    await tick(p.env);
    const failed = () => ofType(p.stateDir, "remote_poll_failed");
    expect(failed()).toHaveLength(1);
    expect(failed()[0]).toMatchObject({ topic: CONTROL });
    expect(String(failed()[0]?.error)).toContain("answered 429");
    expect(String(failed()[0]?.error)).toContain("limit reached: too many requests");
    server.rateLimit = null;
    await tick(p.env);
    expect(failed()).toHaveLength(1);
    await server.stop();
    await tick(p.env);
    await tick(p.env);
    expect(failed()).toHaveLength(2);
    expect(String(failed()[1]?.error)).toMatch(/ECONNREFUSED/);
  });
});
