// Incidents and answers from the phone, end to end (DESIGN §8): real `sheepdog tick` processes
// against the ntfy stand-in on 127.0.0.1 (ntfy 2.17 unless a test picks an older one), the
// page's `http` action pressed exactly as the ntfy Android app sends it.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { sheepdogAsync, tempProgram } from "./helpers/cli.js";
import {
  NTFY_ANDROID_USER_AGENT,
  type NtfyAction,
  type NtfyMessage,
  pressHttpAction,
  useNtfyServer,
} from "./helpers/ntfy-server.js";
import { type Event, ofType } from "./helpers/watchdog.js";

const server = useNtfyServer();
const PAGES = "catalog-pages";
const CONTROL = "catalog-ctl";

/** A crash loop (the manager exits at once, one unplanned start allowed) with buttons on its pages. */
function program(extra: Record<string, unknown> = {}) {
  const p = tempProgram("catalog", {
    manager: { launcher: "command", command: [process.execPath, "-e", "process.exit(0)"] },
    watchdog: { claim_grace: "1s", crash_loop: { starts: 1, within: "1h" } },
    page: { ntfy: { server: server.url, topic: PAGES, control_topic: CONTROL } },
    ...extra,
  });
  const clock = join(p.home, "clock-step");
  writeFileSync(clock, "0");
  return { ...p, clock, env: { ...p.env, SHEEPDOG_CLOCK_FILE: clock } };
}

async function tick(env: NodeJS.ProcessEnv): Promise<string> {
  const r = await sheepdogAsync(["tick", "--json"], { env });
  expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(0);
  return JSON.parse(r.stdout).programs[0].decision;
}

async function tickUntil(env: NodeJS.ProcessEnv, want: string, max = 12): Promise<void> {
  for (let n = 0; n < max; n++) if ((await tick(env)) === want) return;
  throw new Error(`no tick decided ${want} in ${max} ticks`);
}

const pages = () => server.topicMessages(PAGES);
const action = (m: NtfyMessage | undefined, label: string): NtfyAction => {
  const a = m?.actions?.find((x) => x.label === label);
  if (!a) throw new Error(`no action ${label} on ${JSON.stringify(m)}`);
  return a;
};
/** The same action with its body changed (a forged or misdirected press). */
const altered = (a: NtfyAction, change: (body: string) => string): NtfyAction => ({
  ...a,
  body: change(a.body ?? ""),
});

describe("a stand-down incident answered from the phone", () => {
  it("pages with Resume and Copy; the press resumes it; the close replaces the page in place; replays, forgeries and other hosts are refused", async () => {
    const p = program();
    await tickUntil(p.env, "stand_down");

    // The page: urgent, a sequence id of its incident, a Resume button and the exact command.
    const [page, ...others] = pages();
    expect(others).toEqual([]);
    expect(page).toMatchObject({ title: "catalog stood down", priority: 5 });
    const opened = ofType(p.stateDir, "incident_opened");
    expect(opened).toHaveLength(1);
    expect(opened[0]).toMatchObject({ kind: "stood_down", title: "catalog stood down" });
    const incident = String(opened[0]?.incident);
    expect(page?.sequence_id).toBe(`sheepdog-${incident}`);
    expect(page?.actions?.map((a) => [a.action, a.label])).toEqual([
      ["http", "Resume"],
      ["copy", "Copy command"],
    ]);
    expect(action(page, "Copy command").value).toBe("sheepdog resume --program catalog");
    const resume = action(page, "Resume");
    expect(resume).toMatchObject({ method: "POST", url: `${server.url}/${CONTROL}` });
    expect(resume.headers).toBeUndefined(); // no credential: the app adds none either
    expect(resume.body).toMatch(
      new RegExp(
        `^sheepdog resume catalog incident=${incident} host=[0-9a-f]{16} exp=\\d+ token=[A-Za-z0-9_-]{43}$`,
      ),
    );

    // Pressed as the Android app does it, twice (a replay), plus a forged token and the same
    // program's command for another host: all of them reach the control topic.
    for (const a of [
      resume,
      resume,
      altered(resume, (b) => b.replace(/token=(.)/, (_m, c) => `token=${c === "A" ? "B" : "A"}`)),
      altered(resume, (b) => b.replace(/host=[0-9a-f]{16}/, "host=0123456789abcdef")),
    ]) {
      const pressed = await pressHttpAction(a);
      expect(pressed.status).toBe(200);
    }
    const sent = server.received.filter((r) => r.topic === CONTROL);
    expect(sent).toHaveLength(4);
    expect(sent[0]?.headers["user-agent"]).toBe(NTFY_ANDROID_USER_AGENT);
    expect(sent[0]?.headers.authorization).toBeUndefined();

    // One tick reads them all: the first is carried out, the rest refused, each with why.
    expect(await tick(p.env)).not.toBe("hold");
    const accepted = ofType(p.stateDir, "remote_accepted");
    expect(accepted).toHaveLength(1);
    expect(accepted[0]).toMatchObject({ by: "phone", verb: "resume", incident });
    expect(ofType(p.stateDir, "cleared")).toMatchObject([{ by: "phone", incident }]);
    const refused = ofType(p.stateDir, "remote_refused") as Event[];
    expect(refused.map((e) => e.reason)).toEqual(["replayed", "forged", "other_host"]);
    const ids = server.topicMessages(CONTROL).map((m) => m.id);
    expect([accepted[0], ...refused].map((e) => e?.message_id)).toEqual(ids);

    // Closed once, by the phone, and published again under the same sequence id, low.
    const closed = ofType(p.stateDir, "incident_closed");
    expect(closed).toMatchObject([{ incident, kind: "stood_down", how: "phone" }]);
    const close = pages()[1];
    expect(close).toMatchObject({ sequence_id: page?.sequence_id, priority: 2 });
    expect(close?.title).toBe("catalog resumed");
    // The same pass started a manager (the resume's planned start): the close names it.
    const started = ofType(p.stateDir, "manager_started").at(-1);
    expect(close?.message).toMatch(
      new RegExp(
        `^resumed from the phone at \\d\\d:\\d\\d \\S+ after \\d+ s; manager pid ${started?.pid}\nIt was: catalog stood down$`,
      ),
    );
    expect(close?.actions).toBeUndefined();
    // The phone shows one notification for the incident: the close, in place of the page.
    expect(server.notifications(PAGES).map((m) => m.id)).toEqual([close?.id]);

    // Read once: the next tick answers nothing again.
    const before = ofType(p.stateDir, "remote_refused").length;
    await tick(p.env);
    expect(ofType(p.stateDir, "remote_refused")).toHaveLength(before);
    expect(ofType(p.stateDir, "remote_accepted")).toHaveLength(1);
    expect(server.subscribes.at(-1)?.since).toBe(ids.at(-1));

    // The report draws it as a span, closed by the phone.
    const rep = await sheepdogAsync(["report", "--json"], { env: p.env });
    expect(rep.code, rep.stderr).toBe(0);
    const [night] = JSON.parse(rep.stdout).programs;
    expect(night.incidents).toMatchObject([
      { incident, kind: "stood_down", ongoing: false, how: "phone", title: "catalog stood down" },
    ]);
    const out = join(p.home, "night.html");
    expect((await sheepdogAsync(["report", "--out", out], { env: p.env })).code).toBe(0);
    const html = readFileSync(out, "utf8");
    expect(html).toContain('<g class="incident stood_down" data-kind="incident">');
    expect(html).toContain("answered from the phone after");
  });

  it("a press after a person resumed at a terminal, and a press of an expired token, are refused", async () => {
    const p = program();
    await tickUntil(p.env, "stand_down");
    const first = pages()[0];
    const r = await sheepdogAsync(["resume"], { env: p.env });
    expect(r.code, r.stderr).toBe(0);
    // resume closes the incident at once, and says so under its sequence id.
    expect(ofType(p.stateDir, "incident_closed")).toMatchObject([{ how: "person" }]);
    expect(pages()[1]).toMatchObject({ sequence_id: first?.sequence_id, title: "catalog resumed" });
    expect(pages()[1]?.message).toMatch(/^resumed by a person at /);

    expect((await pressHttpAction(action(first, "Resume"))).status).toBe(200);
    await tick(p.env);
    expect(ofType(p.stateDir, "remote_refused")).toMatchObject([
      { reason: "incident_closed", verb: "resume" },
    ]);
    expect(ofType(p.stateDir, "remote_accepted")).toEqual([]);

    // A second stand-down, and its page pressed a day and an hour later.
    await tickUntil(p.env, "stand_down");
    const second = pages().at(-1);
    expect(second?.title).toBe("catalog stood down");
    expect(second?.sequence_id).not.toBe(first?.sequence_id);
    writeFileSync(p.clock, String(25 * 3600_000));
    expect((await pressHttpAction(action(second, "Resume"))).status).toBe(200);
    expect(await tick(p.env)).toBe("hold");
    expect(ofType(p.stateDir, "remote_refused").map((e) => e.reason)).toEqual([
      "incident_closed",
      "expired",
    ]);
    expect(ofType(p.stateDir, "cleared")).toHaveLength(1); // the person's only
  });
});

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
