// Incidents and answers from the phone, end to end (DESIGN §8): real `sheepdog tick` processes
// against the ntfy stand-in on 127.0.0.1 (ntfy 2.17), the page's `http` action pressed exactly
// as the ntfy Android app sends it. Pauses and older servers: page-incidents-servers.test.ts.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { sheepdogAsync } from "./helpers/cli.js";
import {
  NTFY_ANDROID_USER_AGENT,
  type NtfyAction,
  pressHttpAction,
  useNtfyServer,
} from "./helpers/ntfy-server.js";
import { action, CONTROL, PAGES, phoneProgram, tick, tickUntil } from "./helpers/phone.js";
import { type Event, ofType } from "./helpers/watchdog.js";

const server = useNtfyServer();
const program = () => phoneProgram(server);
const pages = () => server.topicMessages(PAGES);
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
