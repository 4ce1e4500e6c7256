import { chmodSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { afterEvents as pagesHook } from "../../src/page/hooks.js";
import { pageStatus } from "../../src/page/status.js";
import { tempDir } from "../helpers/cli.js";
import { loose } from "../helpers/events.js";
import { ntfyServer, useNtfyServer } from "../helpers/ntfy-server.js";
import { eventsOf, journal, journalText, pagedProgram } from "../helpers/page.js";

const TOKEN = "tk_pagehookssecret0123456789";
const TOKEN_ENV = "SHEEPDOG_TEST_NTFY_TOKEN";

/**
 * The pages hook, answering with the page events it journaled (`paged`, `page_failed`, …): the
 * incidents it opens and closes are held to their rules in page-incidents.test.ts.
 */
async function afterEvents(...args: Parameters<typeof pagesHook>) {
  const out = await pagesHook(...args);
  return loose(out.filter((e) => e.type !== "incident_opened" && e.type !== "incident_closed"));
}

const server = useNtfyServer();
beforeEach(() => {
  delete process.env[TOKEN_ENV];
});
afterEach(async () => {
  delete process.env[TOKEN_ENV];
  // A test that stopped the server leaves it running again for the next one.
  if (!server.running) await server.start();
});

/** A time ahead of the clock, so every stamp in the test is the `now` it passes. */
function future(): number {
  return Date.now() + 60_000;
}

function ntfy(extra: Record<string, unknown> = {}) {
  return { server: server.url, topic: "catalog-alerts", ...extra };
}

/** Every file in the state directory, concatenated: a secret must be in none of them. */
function allState(stateDir: string): string {
  return readdirSync(stateDir, { withFileTypes: true })
    .filter((d) => d.isFile())
    .map((d) => readFileSync(join(stateDir, d.name), "utf8"))
    .join("\n");
}

describe("publishing", () => {
  it("sends the token from token_env as a Bearer Authorization header and never journals it", async () => {
    server.token = TOKEN;
    process.env[TOKEN_ENV] = TOKEN;
    const { ctx } = pagedProgram({ ntfy: ntfy({ token_env: TOKEN_ENV }) });
    const e = journal(ctx, { type: "stood_down", reason: "3 unplanned starts within 1h" });
    const out = await afterEvents(ctx, [e], { tick: true });

    expect(server.received).toHaveLength(1);
    expect(server.received[0]?.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(server.received[0]?.via).toBe("json");
    expect(out.map((x) => x.type)).toEqual(["paged"]);
    expect(out[0]).toMatchObject({
      kind: "stood_down",
      priority: 5,
      title: "catalog stood down",
      topic: "catalog-alerts",
      id: server.received[0]?.id,
    });
    expect(allState(ctx.stateDir)).not.toContain(TOKEN);
  });

  it("reads the token from a 0600 token file", async () => {
    server.token = TOKEN;
    const dir = tempDir();
    const file = join(dir, "ntfy-token");
    writeFileSync(file, `${TOKEN}\n`, { mode: 0o600 });
    chmodSync(file, 0o600);
    const { ctx } = pagedProgram({ ntfy: ntfy({ token_file: file }) });
    const e = journal(ctx, { type: "tick_failed", error: "EACCES on heartbeat.json" });
    const out = await afterEvents(ctx, [e], { tick: true });

    expect(out.map((x) => x.type)).toEqual(["paged"]);
    expect(server.delivered).toHaveLength(1);
    expect(server.received[0]?.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(allState(ctx.stateDir)).not.toContain(TOKEN);
  });

  it("refuses a token file others can read, naming the file and its mode, and sends nothing", async () => {
    const dir = tempDir();
    const file = join(dir, "ntfy-token");
    writeFileSync(file, `${TOKEN}\n`);
    chmodSync(file, 0o644);
    const { ctx } = pagedProgram({ ntfy: ntfy({ token_file: file }) });
    const e = journal(ctx, { type: "stood_down", reason: "crash loop" });
    const out = await afterEvents(ctx, [e], { tick: true });

    expect(server.received).toHaveLength(0);
    expect(out.map((x) => x.type)).toEqual(["page_failed"]);
    expect(out[0]?.error).toContain(file);
    expect(out[0]?.error).toContain("0644");
    expect(allState(ctx.stateDir)).not.toContain(TOKEN);
  });

  it("scrubs the token from a server's error answer", async () => {
    server.token = TOKEN;
    server.failWith = 500;
    server.echoAuthInErrors = true;
    process.env[TOKEN_ENV] = TOKEN;
    const { ctx } = pagedProgram({ ntfy: ntfy({ token_env: TOKEN_ENV }) });
    const e = journal(ctx, { type: "stood_down", reason: "crash loop" });
    const out = await afterEvents(ctx, [e], { tick: true });

    expect(out.map((x) => x.type)).toEqual(["page_failed"]);
    expect(out[0]?.error).toContain("500");
    expect(out[0]?.error).toContain("[token]"); // the server did echo it; we did not keep it
    expect(allState(ctx.stateDir)).not.toContain(TOKEN);
  });

  it("delivers non-ASCII titles and messages intact", async () => {
    const { ctx } = pagedProgram({ ntfy: ntfy() }, "cafe-loop");
    const note = "tests · flaky — gave up after 3 tries “again”";
    const e = journal(ctx, { type: "stood_down", reason: `no progress: last note "${note}"` });
    await afterEvents(ctx, [e], { tick: true });

    const got = server.received[0];
    expect(got?.message).toContain(note);
    expect(got?.message).toContain("sheepdog resume --program cafe-loop");
    expect(got?.title).toBe("cafe-loop stood down");

    // A title of its own with non-ASCII text: a paused page names when it lifts.
    const until = new Date(Date.now() + 3 * 3_600_000).toISOString();
    const p = journal(ctx, {
      type: "paused",
      until,
      window: "five_hour",
      reason: "5h window at 100 % · resets 14:00 — seat ~/.claude-loop",
    });
    await afterEvents(ctx, [p], { tick: true });
    expect(server.received[1]?.title).toBe("cafe-loop paused at a usage limit");
    expect(server.received[1]?.message).toContain("100 % · resets 14:00 — seat");
    expect(server.received[1]?.message).toContain(until);
  });

  it("journals nothing and sends nothing without a page section", async () => {
    const { ctx } = pagedProgram({ ntfy: ntfy() });
    const bare = { ...ctx, config: { ...ctx.config, page: undefined } };
    const e = journal(ctx, { type: "stood_down", reason: "crash loop" });
    const before = journalText(ctx);
    const out = await afterEvents(bare, [e], { tick: true });
    expect(out).toEqual([]);
    expect(server.received).toHaveLength(0);
    expect(journalText(ctx)).toBe(before);
  });
});

describe("which pages", () => {
  const table: {
    event: Record<string, unknown> & { type: string };
    priority: number | null;
    title?: string;
    tag?: string;
    command?: string;
  }[] = [
    {
      event: { type: "stood_down", reason: "crash loop: 3 unplanned starts in 1h" },
      priority: 5,
      title: "catalog stood down",
      tag: "rotating_light",
      command: "sheepdog resume --program catalog",
    },
    {
      event: { type: "tick_failed", error: "ENOSPC writing last-tick.json" },
      priority: 4,
      title: "catalog: watchdog tick failed",
      tag: "warning",
      command: "sheepdog journal --program catalog",
    },
    {
      event: {
        type: "manager_stopped",
        pid: 4242,
        decision: "restart_stuck",
        reason: "restart_stuck: heartbeat stale for 52m",
        evidence: "evidence/1",
      },
      priority: 3,
      title: "catalog: stuck manager restarted",
      tag: "arrows_counterclockwise",
      command: "sheepdog status --program catalog",
    },
    {
      event: { type: "manager_stopped", pid: 4243, reason: "a start that never claimed" },
      priority: null,
    },
    {
      event: {
        type: "paused",
        until: "2099-01-01T00:00:00.000Z",
        window: "seven_day",
        reason: "7d at 100 %",
      },
      priority: 3,
      title: "catalog paused at a usage limit",
      tag: "pause_button",
      command: "sheepdog status --program catalog",
    },
    {
      event: { type: "paused", until: "2099-01-01T00:00:00.000Z", reason: "sheepdog pause" },
      priority: 3,
      title: "catalog paused",
      tag: "pause_button",
    },
    {
      event: { type: "cleared", note: "fixed the flaky test" },
      priority: 2,
      title: "catalog resumed",
      tag: "white_check_mark",
      command: "sheepdog status --program catalog",
    },
    {
      event: { type: "finished", note: "backlog empty" },
      priority: 2,
      title: "catalog finished",
      tag: "checkered_flag",
      command: "sheepdog reopen --program catalog",
    },
    { event: { type: "saved", pid: 1, context_tokens: 5 }, priority: null },
    { event: { type: "unpaused" }, priority: null },
    { event: { type: "manager_started", reason: "first start", planned: true }, priority: null },
  ];

  for (const row of table) {
    const label = `${row.event.type}${row.event.reason ? ` (${row.event.reason})` : ""}`;
    it(`${label} → ${row.priority === null ? "no page" : `priority ${row.priority}`}`, async () => {
      const { ctx } = pagedProgram({ ntfy: ntfy() });
      const e = journal(ctx, row.event);
      const out = await afterEvents(ctx, [e], { tick: false });
      if (row.priority === null) {
        expect(server.received).toHaveLength(0);
        expect(out).toEqual([]);
        return;
      }
      expect(server.delivered).toHaveLength(1);
      const got = server.received[0];
      expect(got?.priority).toBe(row.priority);
      expect(got?.title).toBe(row.title);
      expect(got?.tags).toContain(row.tag);
      expect(got?.topic).toBe("catalog-alerts");
      const why = (row.event.reason ?? row.event.note ?? row.event.error) as string;
      expect(got?.message).toContain(why);
      if (row.command) expect(got?.message).toContain(row.command);
      expect(out[0]).toMatchObject({ type: "paged", priority: row.priority, title: row.title });
    });
  }
});

describe("failures and retries", () => {
  it("journals page_failed while the server is down and delivers on a later tick once it is up", async () => {
    const { ctx } = pagedProgram({ ntfy: ntfy() });
    await server.stop();
    const e = journal(ctx, { type: "stood_down", reason: "crash loop" });
    const out = await afterEvents(ctx, [e], { tick: true });
    expect(out.map((x) => x.type)).toEqual(["page_failed"]);
    expect(out[0]).toMatchObject({
      kind: "stood_down",
      page: { title: "catalog stood down", priority: 5, tags: ["rotating_light"] },
    });
    expect(String(out[0]?.error)).toContain(server.url);
    // Refused, or (a pooled connection to the stopped server) closed by the other side.
    expect(String(out[0]?.error)).toMatch(/ECONNREFUSED|UND_ERR_SOCKET/);
    expect(pageStatus(ctx).undelivered).toMatchObject([{ kind: "stood_down" }]);

    // Still down: a tick within the first 5 minutes does not try again (backing off)…
    expect(await afterEvents(ctx, [], { tick: true })).toEqual([]);
    // …the next tick past them tries once and fails again, journaling a count, not the page.
    const later = Date.now() + 6 * 60_000;
    const again = await afterEvents(ctx, [], { tick: true, now: later });
    expect(again.map((x) => [x.type, x.retry, x.failures])).toEqual([["page_failed", true, 2]]);
    expect(again[0]?.page).toBeUndefined();

    await server.start();
    // Not a tick (resume, finish): no retry.
    expect(await afterEvents(ctx, [], { tick: false })).toEqual([]);
    expect(server.received).toHaveLength(0);

    // the second retry waits 10 minutes after the second failure
    expect(await afterEvents(ctx, [], { tick: true, now: later + 9 * 60_000 })).toEqual([]);
    const retried = await afterEvents(ctx, [], { tick: true, now: later + 11 * 60_000 });
    expect(retried.map((x) => [x.type, x.kind, x.retry])).toEqual([["paged", "stood_down", true]]);
    expect(server.received).toHaveLength(1);
    expect(server.received[0]?.title).toBe("catalog stood down");
    expect(server.received[0]?.priority).toBe(5);
    expect(pageStatus(ctx).undelivered).toEqual([]);

    // Delivered: nothing more to retry.
    await afterEvents(ctx, [], { tick: true });
    expect(server.received).toHaveLength(1);
  });

  it("reports a non-2xx answer with the server's status and text", async () => {
    server.failWith = 500;
    const { ctx } = pagedProgram({ ntfy: ntfy() });
    const e = journal(ctx, { type: "tick_failed", error: "boom" });
    const out = await afterEvents(ctx, [e], { tick: true });
    expect(out[0]?.type).toBe("page_failed");
    expect(out[0]?.error).toContain(`ntfy server ${server.url} answered 500`);
    expect(out[0]?.error).toContain("internal server error");
  });

  it("a 401 from a server that needs a token is a failure", async () => {
    server.token = TOKEN;
    const { ctx } = pagedProgram({ ntfy: ntfy() });
    const e = journal(ctx, { type: "stood_down", reason: "crash loop" });
    const out = await afterEvents(ctx, [e], { tick: true });
    expect(out[0]?.type).toBe("page_failed");
    expect(out[0]?.error).toContain("401");
    expect(server.delivered).toHaveLength(0);
  });

  it("drops a failed pause page once the pause has lifted", async () => {
    const { ctx } = pagedProgram({ ntfy: ntfy() });
    server.failWith = 503;
    const e = journal(ctx, { type: "paused", until: new Date(Date.now() + 60_000).toISOString() });
    await afterEvents(ctx, [e], { tick: true });
    server.failWith = null;
    journal(ctx, { type: "unpaused" });
    server.received.length = 0;
    await afterEvents(ctx, [], { tick: true });
    expect(server.received).toHaveLength(0);
  });
});

describe("cooldown", () => {
  it("sends one page per kind within the cooldown and pages again after it", async () => {
    const { ctx } = pagedProgram({ ntfy: ntfy(), cooldown: "1h" });
    const t0 = future();
    const first = journal(ctx, { type: "stood_down", reason: "crash loop" }, t0);
    expect((await afterEvents(ctx, [first], { now: t0, tick: true })).map((x) => x.type)).toEqual([
      "paged",
    ]);

    const t1 = t0 + 30 * 60_000;
    const second = journal(ctx, { type: "stood_down", reason: "crash loop again" }, t1);
    expect(await afterEvents(ctx, [second], { now: t1, tick: false })).toEqual([]);
    expect(server.received).toHaveLength(1);

    // Another kind is not held back by the first kind's cooldown.
    const failed = journal(ctx, { type: "tick_failed", error: "boom" }, t1);
    await afterEvents(ctx, [failed], { now: t1, tick: false });
    expect(server.received.map((r) => r.priority)).toEqual([5, 4]);

    const t2 = t0 + 61 * 60_000;
    const third = journal(ctx, { type: "stood_down", reason: "crash loop a third time" }, t2);
    const out = await afterEvents(ctx, [third], { now: t2, tick: false });
    expect(out.map((x) => [x.type, x.kind])).toEqual([["paged", "stood_down"]]);
    expect(server.received.at(-1)?.message).toContain("crash loop a third time");
    expect(eventsOf(ctx, "paged")).toHaveLength(3);
  });
});

describe("reminders", () => {
  it("repeats the stand-down page every remind_every, `reminders` times, then stays quiet", async () => {
    const { ctx } = pagedProgram({
      ntfy: ntfy(),
      cooldown: "1h",
      remind_every: "2s",
      reminders: 2,
    });
    const t0 = future();
    const e = journal(ctx, { type: "stood_down", reason: "crash loop" }, t0);
    await afterEvents(ctx, [e], { now: t0, tick: true });
    expect(pageStatus(ctx).next_reminder).toBe(new Date(t0 + 2000).toISOString());

    const sentAt: number[] = [];
    for (let s = 1; s <= 12; s++) {
      const before = server.received.length;
      await afterEvents(ctx, [], { now: t0 + s * 1000, tick: true });
      if (server.received.length > before) sentAt.push(s);
    }
    expect(sentAt).toEqual([2, 4]);
    const reminders = eventsOf(ctx, "paged").filter((x) => x.reminder);
    expect(reminders.map((x) => [x.kind, x.reminder, x.priority])).toEqual([
      ["stood_down", 1, 5],
      ["stood_down", 2, 5],
    ]);
    expect(server.received[1]?.title).toBe("catalog still stood down (reminder 1 of 2)");
    expect(server.received[2]?.message).toContain("sheepdog resume --program catalog");
    expect(pageStatus(ctx)).toMatchObject({ next_reminder: null, reminders_left: 0 });

    // Cleared by a person: a low page, and no more reminders.
    const cleared = journal(ctx, { type: "cleared", note: "fixed it" }, t0 + 13_000);
    await afterEvents(ctx, [cleared], { now: t0 + 13_000, tick: false });
    expect(server.received.at(-1)?.priority).toBe(2);
    const n = server.received.length;
    await afterEvents(ctx, [], { now: t0 + 30_000, tick: true });
    expect(server.received).toHaveLength(n);
  });

  it("counts reminders per stand-down: a new stand-down gets its own", async () => {
    const { ctx } = pagedProgram({
      ntfy: ntfy(),
      cooldown: "1s",
      remind_every: "2s",
      reminders: 1,
    });
    const t0 = future();
    const a = journal(ctx, { type: "stood_down", reason: "first" }, t0);
    await afterEvents(ctx, [a], { now: t0, tick: true });
    await afterEvents(ctx, [], { now: t0 + 2000, tick: true }); // reminder 1 of 1
    await afterEvents(ctx, [], { now: t0 + 4000, tick: true }); // quiet
    expect(server.received).toHaveLength(2);
    journal(ctx, { type: "cleared" }, t0 + 5000);
    const b = journal(ctx, { type: "stood_down", reason: "second" }, t0 + 6000);
    await afterEvents(ctx, [b], { now: t0 + 6000, tick: true });
    await afterEvents(ctx, [], { now: t0 + 8000, tick: true });
    await afterEvents(ctx, [], { now: t0 + 10_000, tick: true });
    expect(server.received.map((r) => r.title)).toEqual([
      "catalog stood down",
      "catalog still stood down (reminder 1 of 1)",
      "catalog resumed", // the first stand-down's incident closes, under its sequence id
      "catalog stood down",
      "catalog still stood down (reminder 1 of 1)",
    ]);
  });

  it("sends no reminders when reminders is 0", async () => {
    const { ctx } = pagedProgram({ ntfy: ntfy(), remind_every: "1s", reminders: 0 });
    const t0 = future();
    const e = journal(ctx, { type: "stood_down", reason: "crash loop" }, t0);
    await afterEvents(ctx, [e], { now: t0, tick: true });
    await afterEvents(ctx, [], { now: t0 + 5000, tick: true });
    expect(server.received).toHaveLength(1);
  });
});

describe("heartbeat URL", () => {
  it("is requested once per tick call, and not by resume/finish", async () => {
    const { ctx } = pagedProgram({ heartbeat_url: `${server.url}/hc/0b1c-uuid` });
    await afterEvents(ctx, [], { tick: true });
    await afterEvents(ctx, [], { tick: true });
    await afterEvents(ctx, [], { tick: false });
    expect(server.heartbeats).toEqual(["/hc/0b1c-uuid", "/hc/0b1c-uuid"]);
    expect(eventsOf(ctx)).toEqual([]);
  });

  it("a tick whose events include tick_failed requests <url>/fail instead (DESIGN §6)", async () => {
    const { ctx } = pagedProgram({ heartbeat_url: `${server.url}/hc/0b1c-uuid` });
    const e = journal(ctx, { type: "tick_failed", error: "boom" });
    await afterEvents(ctx, [e], { tick: true });
    await afterEvents(ctx, [], { tick: true });
    expect(server.heartbeats).toEqual(["/hc/0b1c-uuid/fail", "/hc/0b1c-uuid"]);
  });

  it("journals an unreachable heartbeat URL and does not throw", async () => {
    const gone = await ntfyServer();
    const url = `${gone.url}/hc/gone`;
    await gone.stop();
    const { ctx } = pagedProgram({ ntfy: ntfy(), heartbeat_url: url });
    const e = journal(ctx, { type: "tick_failed", error: "boom" });
    const out = await afterEvents(ctx, [e], { tick: true });
    expect(out.map((x) => x.type)).toEqual(["paged", "heartbeat_failed"]);
    // by its origin only (DESIGN §18): the path is a check's secret key
    expect(out[1]?.error).toContain(`${gone.url}/…: `);
    expect(out[1]?.error).not.toContain("/hc/gone");
    expect(out[1]?.error).toMatch(/ECONNREFUSED/);
  });
});
