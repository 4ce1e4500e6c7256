// Incidents (DESIGN §8): when each kind closes, how the pages hook opens, joins and closes them,
// what a close says, the actions a page carries, and the copy fallback for older ntfy servers.
import { statSync, writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { JournalEvent } from "../../src/journal/journal.js";
import { answerCommand, pageActions } from "../../src/page/actions.js";
import { composePage } from "../../src/page/compose.js";
import { afterEvents } from "../../src/page/hooks.js";
import {
  type CloseContext,
  closingOf,
  INCIDENT_KINDS,
  type Incident,
  type IncidentKind,
  incidentsOf,
} from "../../src/page/incident.js";
import { composeClose, spokenDuration } from "../../src/page/incident-pages.js";
import { publishPage } from "../../src/page/ntfy-compat.js";
import { planPages } from "../../src/page/plan.js";
import { hostKey, keyPath } from "../../src/remote/secret.js";
import { parseCommand } from "../../src/remote/token.js";
import { tempDir } from "../helpers/cli.js";
import { useNtfyServer } from "../helpers/ntfy-server.js";
import { eventsOf, journal, pagedProgram } from "../helpers/page.js";

const T0 = Date.parse("2026-11-30T02:00:00.000Z");
const M = 60_000;
const at = (min: number) => new Date(T0 + min * M).toISOString();
const ev = (min: number, type: string, extra: Record<string, unknown> = {}): JournalEvent => ({
  at: at(min),
  type,
  ...extra,
});

function incident(kind: IncidentKind): Incident {
  return {
    id: "abcdefabcdef",
    kind,
    sequence_id: "sheepdog-abcdefabcdef",
    opened_at: at(0),
    since: at(0),
    title: "t",
    index: 0,
    delivered: true,
    closed: null,
  };
}
const tickOk: CloseContext = {
  tick: true,
  tickFailed: false,
  configValid: true,
  holderPid: 77,
  now: at(70),
};

describe("when an incident's condition ends", () => {
  const rows: [IncidentKind, JournalEvent[], CloseContext | null, string | null][] = [
    ["stood_down", [ev(70, "cleared")], null, "person@70"],
    ["stood_down", [ev(70, "cleared", { by: "phone" })], null, "phone@70"],
    ["stood_down", [ev(70, "claimed", { pid: 5 })], tickOk, null],
    ["paused", [ev(70, "unpaused", { reason: "the pause ended" })], null, "recovered@70"],
    ["paused", [ev(70, "unpaused", { by: "person" })], null, "person@70"],
    [
      "paused",
      [ev(70, "unpaused", { by: "phone", reason: "unpaused by a person" })],
      null,
      "phone@70",
    ],
    ["start_failed", [ev(70, "claimed", { pid: 5 })], null, "recovered@70 pid 5"],
    ["start_failed", [ev(70, "manager_started", { pid: 5 })], tickOk, null],
    ["blocked", [ev(70, "saved", { pid: 9 })], null, "recovered@70 pid 9"],
    ["api_errors", [ev(70, "claimed", { pid: 10 })], null, "recovered@70 pid 10"],
    ["api_errors", [ev(70, "nudged")], tickOk, null],
    ["lease_lost", [ev(70, "lease_acquired")], tickOk, "recovered@70 pid 77"],
    ["tick_failed", [], tickOk, "recovered@70 pid 77"],
    ["tick_failed", [], { ...tickOk, tickFailed: true }, null],
    ["tick_failed", [], { ...tickOk, tick: false }, null],
    ["tick_failed", [], null, null],
    ["config_invalid", [], tickOk, "recovered@70 pid 77"],
    ["config_invalid", [], { ...tickOk, configValid: false }, null],
  ];
  for (const [kind, after, context, want] of rows)
    it(`${kind} after [${after.map((e) => e.type).join(", ")}]${context ? "" : " (journal only)"} → ${want ?? "open"}`, () => {
      const c = closingOf(incident(kind), after, context);
      const got =
        c && `${c.how}@${(Date.parse(c.at) - T0) / M}${c.pid !== null ? ` pid ${c.pid}` : ""}`;
      expect(got).toBe(want);
    });
});

describe("a close's words", () => {
  it.each([
    [70 * M, "1 h 10 m"],
    [45_000, "45 s"],
    [26 * 3600_000, "1 d 2 h"],
  ])("%i ms is said %s", (ms, words) => expect(spokenDuration(ms)).toBe(words));

  it("recovered at HH:MM ZONE after …; manager pid N, and what it was", () => {
    const page = composeClose(
      {
        incident: { ...incident("tick_failed"), title: "catalog: watchdog tick failed" },
        how: "recovered",
        at: at(70),
        pid: 4242,
      },
      { name: "catalog" },
    );
    expect(page).toMatchObject({
      title: "catalog recovered",
      priority: 2,
      sequence_id: "sheepdog-abcdefabcdef",
    });
    expect(page.message).toMatch(
      /^recovered at \d\d:\d\d \S+ after 1 h 10 m; manager pid 4242\nIt was: catalog: watchdog tick failed$/,
    );
    expect(page.actions).toBeUndefined();
  });
});

describe("a problem page's actions", () => {
  const program = { name: "catalog", arg: "catalog" };
  const who = { program: "catalog", arg: "catalog" };
  const eventOf: Record<IncidentKind, JournalEvent> = {
    stood_down: ev(0, "stood_down", { reason: "r" }),
    paused: ev(0, "paused", { until: at(60), reason: "r" }),
    tick_failed: ev(0, "tick_failed", { error: "r" }),
    blocked: ev(0, "blocked", { reason: "r" }),
    api_errors: ev(0, "api_errors", { reason: "r" }),
    lease_lost: ev(0, "lease_lost", { reason: "r" }),
    config_invalid: ev(0, "config_invalid", { error: "r" }),
    start_failed: ev(0, "manager_start_failed", { reason: "r" }),
  };
  const key = Buffer.alloc(32, 1);
  const control = { server: "http://127.0.0.1:1", topic: "ctl", host: "0123456789abcdef", key };
  const buttons: Record<IncidentKind, string[]> = {
    stood_down: ["Resume"],
    paused: ["Unpause"],
    blocked: ["Pause 2 h"],
    api_errors: ["Pause 2 h"],
    start_failed: ["Pause 2 h"],
    tick_failed: [],
    lease_lost: [],
    config_invalid: [],
  };
  for (const kind of INCIDENT_KINDS)
    it(`${kind}: ${[...buttons[kind], "Copy command"].join(", ")}; the copy is the command its message names`, () => {
      const actions = pageActions({ kind, ...who, incident: "abcdefabcdef", control, now: T0 });
      expect(actions.map((a) => a.label)).toEqual([...buttons[kind], "Copy command"]);
      const copy = actions.at(-1);
      expect(copy?.action).toBe("copy");
      const command = answerCommand(kind, "catalog");
      expect(copy).toMatchObject({ value: command });
      expect(composePage(kind, eventOf[kind], program, T0).message).toContain(command);
      for (const a of actions)
        if (a.action === "http") {
          const parsed = parseCommand(a.body);
          expect(parsed.kind).toBe("command");
          if (parsed.kind === "command") {
            expect(parsed.fields).toMatchObject({ program: "catalog", incident: "abcdefabcdef" });
            // A day to answer it.
            expect(parsed.fields.exp).toBe(T0 / 1000 + 86_400);
          }
        }
      // Without a control topic: the copy alone.
      expect(pageActions({ kind, ...who, incident: "x", control: null, now: T0 })).toHaveLength(1);
    });

  it("a program named by its path is quoted for the shell", () => {
    expect(answerCommand("stood_down", "/home/a b/loops/catalog")).toBe(
      "sheepdog resume --program '/home/a b/loops/catalog'",
    );
  });
});

const server = useNtfyServer();
const ntfy = (extra: Record<string, unknown> = {}) => ({
  server: server.url,
  topic: "catalog-alerts",
  ...extra,
});
/** The hook, then the journal's incident events. */
const incidentEvents = (ctx: Parameters<typeof afterEvents>[0]) =>
  eventsOf(ctx).filter((e) => e.type.startsWith("incident_"));

describe("the pages hook and incidents", () => {
  it("a repeat joins the open incident (same sequence id); its close goes out once; the next one is new and pages inside the cooldown", async () => {
    const { ctx } = pagedProgram({ ntfy: ntfy() });
    const t0 = Date.now() + 60_000;
    const a = journal(ctx, { type: "tick_failed", error: "a" }, t0);
    await afterEvents(ctx, [a], { now: t0, tick: true });
    const b = journal(ctx, { type: "tick_failed", error: "b" }, t0 + M);
    await afterEvents(ctx, [b], { now: t0 + M, tick: true });
    expect(server.received).toHaveLength(1); // the cooldown, within the incident
    await afterEvents(ctx, [], { now: t0 + 2 * M, tick: true }); // a tick that went through
    await afterEvents(ctx, [], { now: t0 + 3 * M, tick: true });
    const [opened, closed] = incidentEvents(ctx);
    expect(opened).toMatchObject({ type: "incident_opened", kind: "tick_failed", since: a.at });
    expect(closed).toMatchObject({ type: "incident_closed", how: "recovered", after_ms: 2 * M });
    expect(server.received.map((r) => [r.title, r.stored?.sequence_id])).toEqual([
      ["catalog: watchdog tick failed", opened?.sequence_id],
      ["catalog recovered", opened?.sequence_id],
    ]);
    // After a recovery the phone says all is well: a new failure pages at once, a new incident.
    const c = journal(ctx, { type: "tick_failed", error: "c" }, t0 + 4 * M);
    await afterEvents(ctx, [c], { now: t0 + 4 * M, tick: true });
    expect(server.received).toHaveLength(3);
    const again = incidentEvents(ctx).at(-1);
    expect(again?.type).toBe("incident_opened");
    expect(again?.incident).not.toBe(opened?.incident);
  });

  it("reminders carry the incident's sequence id; a failed page whose incident closed is not retried", async () => {
    const { ctx } = pagedProgram({ ntfy: ntfy(), remind_every: "1s", reminders: 1 });
    const t0 = Date.now() + 60_000;
    const s = journal(ctx, { type: "stood_down", reason: "loop" }, t0);
    await afterEvents(ctx, [s], { now: t0, tick: true });
    await afterEvents(ctx, [], { now: t0 + 1000, tick: true });
    const sids = server.received.map((r) => r.stored?.sequence_id);
    expect(server.received[1]?.title).toContain("reminder 1 of 1");
    expect(sids[1]).toBe(sids[0]);

    // A failure of another kind fails to page; its condition ends; the retry is dropped.
    server.failWith = 503;
    const f = journal(ctx, { type: "tick_failed", error: "x" }, t0 + 2000);
    await afterEvents(ctx, [f], { now: t0 + 2000, tick: true });
    server.failWith = null;
    const n = server.received.length;
    await afterEvents(ctx, [], { now: t0 + 3000, tick: true });
    expect(server.received).toHaveLength(n); // no retry, and no close of a page never seen
    expect(
      incidentEvents(ctx)
        .filter((e) => e.kind === "tick_failed")
        .map((e) => e.type),
    ).toEqual(["incident_opened", "incident_closed"]);
  });

  it("a pause a person must end (a refusal naming no reset) opens the pause's incident, with its buttons, and closes with the unpause", async () => {
    const { ctx } = pagedProgram({ ntfy: ntfy() });
    const t0 = Date.now() + 60_000;
    const p = journal(
      ctx,
      {
        type: "paused",
        until: new Date(t0 + 60 * M).toISOString(),
        reason: "usage-limit refusal",
        needs_person: "ask your admin to raise it",
        limit_text: "You've hit your org's monthly spend limit · ask your admin to raise it",
      },
      t0,
    );
    await afterEvents(ctx, [p], { now: t0, tick: true });
    const [opened] = incidentEvents(ctx);
    expect(opened).toMatchObject({ type: "incident_opened", kind: "paused", since: p.at });
    expect(server.received[0]?.stored?.sequence_id).toBe(opened?.sequence_id);
    expect(server.received[0]?.stored?.actions?.map((a) => a.action)).toContain("copy");
    const u = journal(ctx, { type: "unpaused", by: "person" }, t0 + M);
    await afterEvents(ctx, [u], { now: t0 + M, tick: true });
    expect(incidentEvents(ctx).at(-1)).toMatchObject({ type: "incident_closed", kind: "paused" });
  });

  it("a page planned inside a pause's cooldown opens no incident; a pause keeps its cooldown after a close", () => {
    const journalRows = [
      ev(0, "paused", { until: at(60), reason: "r" }),
      ev(0, "incident_opened", { incident: "abcdefabcdef", kind: "paused" }),
      ev(0, "paged", { kind: "paused", incident: "abcdefabcdef" }),
      ev(60, "unpaused"),
      ev(60, "incident_closed", { incident: "abcdefabcdef", kind: "paused" }),
      ev(90, "paused", { until: at(120), reason: "r" }),
    ];
    const attempts = planPages({
      journal: journalRows,
      events: [journalRows[5] as JournalEvent],
      policy: { pageCooldown: 6 * 60 * M, remindEvery: 4 * 60 * M, reminders: 2 },
      now: T0 + 90 * M,
      tick: true,
      program: { name: "catalog", arg: "catalog" },
    });
    expect(attempts).toEqual([]);
    expect(incidentsOf(journalRows).get("abcdefabcdef")?.closed).not.toBeNull();
  });
});

describe("ntfy older than 2.17 and the copy action", () => {
  const page = {
    title: "t",
    message: "m",
    priority: 3 as const,
    tags: [],
    actions: [{ action: "copy" as const, label: "Copy command", value: "sheepdog status" }],
  };

  it("a refused copy is left off, and remembered for the server: the next page skips it", async () => {
    pagedProgram({ ntfy: ntfy() }); // a fresh host state dir for this test
    server.version = "2.16.0";
    const first = await publishPage(ntfy(), page, null);
    expect(first.copy_dropped).toBe(true);
    expect(server.received.map((r) => r.status)).toEqual([400, 200]);
    const second = await publishPage(ntfy(), page, null);
    expect(second.copy_dropped).toBe(true);
    expect(server.received.map((r) => r.status)).toEqual([400, 200, 200]);
  });

  it("a 2.17 server gets the copy action", async () => {
    pagedProgram({ ntfy: ntfy() });
    const sent = await publishPage(ntfy(), page, null);
    expect(sent.copy_dropped).toBeUndefined();
    expect(server.received[0]?.stored?.actions?.[0]).toMatchObject({
      action: "copy",
      value: "sheepdog status",
    });
  });

  it("another 400 is not taken for a server without copy", async () => {
    pagedProgram({ ntfy: ntfy() });
    const bad = { ...page, actions: [{ action: "copy" as const, label: "", value: "x" }] };
    await expect(publishPage(ntfy(), bad, null)).rejects.toThrow(/label/);
    expect(server.received).toHaveLength(1);
  });
});

describe("this host's key", () => {
  it("is made 0600 on first use, read back the same, and refused once others can read it", () => {
    const env = { ...process.env, SHEEPDOG_STATE_DIR: tempDir("sheepdog-key-") };
    expect(hostKey({ create: false }, env)).toBeNull();
    const key = hostKey({ create: true }, env);
    expect(key).toHaveLength(32);
    expect(statSync(keyPath(env)).mode & 0o777).toBe(0o600);
    expect(hostKey({ create: false }, env)?.equals(key as Buffer)).toBe(true);
    writeFileSync(keyPath(env), "not a key\n", { mode: 0o600 });
    expect(() => hostKey({ create: false }, env)).toThrow(/does not hold a key/);
  });

  it("names the file and its mode, never its content", async () => {
    const env = { ...process.env, SHEEPDOG_STATE_DIR: tempDir("sheepdog-key-") };
    hostKey({ create: true }, env);
    const { chmodSync, readFileSync } = await import("node:fs");
    const text = readFileSync(keyPath(env), "utf8").trim();
    chmodSync(keyPath(env), 0o644);
    let message = "";
    try {
      hostKey({ create: false }, env);
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toContain(`${keyPath(env)} has mode 0644`);
    expect(message).not.toContain(text);
  });
});
