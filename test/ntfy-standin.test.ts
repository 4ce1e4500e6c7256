// The ntfy stand-in against its own model of ntfy (test/helpers/ntfy-server.ts, ntfy 2.17.0 by
// default), through real HTTP on 127.0.0.1: sequence ids on a new and an old server, the `copy`
// action's version line, poll with since=, a stream that keeps alive and drops, an `http` action
// pressed as the Android app presses it, and the 429s. What each models is cited in the helper.
import { get, type IncomingMessage } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import {
  NTFY_429,
  NTFY_ANDROID_USER_AGENT,
  type NtfyMessage,
  pressHttpAction,
  useNtfyServer,
} from "./helpers/ntfy-server.js";

const server = useNtfyServer();

/** Publishes as JSON (POST /), as sheepdog does; the status and the parsed answer. */
async function publish(body: Record<string, unknown>, token?: string) {
  const headers: Record<string, string> = { "Content-Type": "application/json" };
  if (token) headers.Authorization = `Bearer ${token}`;
  const res = await fetch(`${server.url}/`, {
    method: "POST",
    headers,
    body: JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, text, json: JSON.parse(text) as Record<string, unknown> };
}

/** `GET /<topic>/json?poll=1&…`: the status, the raw body, and each line parsed. */
async function poll(topic: string, query = "", headers: Record<string, string> = {}) {
  const res = await fetch(`${server.url}/${topic}/json?poll=1${query}`, { headers });
  const text = await res.text();
  const lines =
    res.status === 200
      ? text
          .split("\n")
          .filter(Boolean)
          .map((l) => JSON.parse(l))
      : [];
  return { status: res.status, type: res.headers.get("content-type"), text, lines };
}

/** An open `GET /<topic>/json` stream, read line by line. */
interface Reader {
  next(): Promise<NtfyMessage>;
  /** Lines arrived and not read yet. */
  buffered(): number;
  /** How the stream ended: "end" (closed), "error" (reset). */
  ended: Promise<string>;
  close(): void;
}

const readers: Reader[] = [];
afterEach(() => {
  for (const r of readers.splice(0)) r.close();
});

function stream(path: string): Promise<Reader> {
  return new Promise((resolve, reject) => {
    const req = get(`${server.url}${path}`, (res: IncomingMessage) => {
      expect(res.statusCode).toBe(200);
      expect(res.headers["content-type"]).toBe("application/x-ndjson; charset=utf-8");
      const lines: NtfyMessage[] = [];
      const waiting: ((m: NtfyMessage) => void)[] = [];
      let buf = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        buf += chunk;
        for (let i = buf.indexOf("\n"); i >= 0; i = buf.indexOf("\n")) {
          const m = JSON.parse(buf.slice(0, i)) as NtfyMessage;
          buf = buf.slice(i + 1);
          const w = waiting.shift();
          if (w) w(m);
          else lines.push(m);
        }
      });
      const ended = new Promise<string>((done) => {
        res.on("end", () => done("end"));
        res.on("error", () => done("error"));
        req.on("error", () => done("error"));
      });
      const reader: Reader = {
        next: () => {
          const m = lines.shift();
          return m ? Promise.resolve(m) : new Promise((r) => waiting.push(r));
        },
        buffered: () => lines.length,
        ended,
        close: () => req.destroy(),
      };
      readers.push(reader);
      resolve(reader);
    });
    req.on("error", reject);
  });
}

describe("sequence ids", () => {
  it("2.17: the same sequence id replaces the notification in place; both stay in the cache", async () => {
    const first = await publish({
      topic: "alerts",
      message: "catalog stood down",
      sequence_id: "inc-1",
    });
    expect(first.status).toBe(200);
    expect(first.json).toMatchObject({ event: "message", topic: "alerts", sequence_id: "inc-1" });
    expect(first.json.id).toMatch(/^[A-Za-z0-9]{12}$/);
    const again = await publish({
      topic: "alerts",
      message: "recovered at 07:12 after 1 h 10 m",
      priority: 2,
      sequence_id: "inc-1",
    });
    expect(again.json.id).not.toBe(first.json.id);
    expect(server.notifications("alerts")).toEqual([
      expect.objectContaining({ id: again.json.id, message: "recovered at 07:12 after 1 h 10 m" }),
    ]);
    const p = await poll("alerts");
    expect(p.lines.map((l) => [l.id, l.sequence_id])).toEqual([
      [first.json.id, "inc-1"],
      [again.json.id, "inc-1"],
    ]);
  });

  it("2.15: an old server drops the unknown field and the phone shows a second message", async () => {
    server.version = "2.15.0";
    await publish({ topic: "alerts", message: "stood down", sequence_id: "inc-1" });
    const again = await publish({ topic: "alerts", message: "recovered", sequence_id: "inc-1" });
    expect(again.status).toBe(200);
    expect(again.json).not.toHaveProperty("sequence_id");
    expect(server.notifications("alerts").map((m) => m.message)).toEqual([
      "stood down",
      "recovered",
    ]);
    // ... and its router has no /<topic>/<sid>.
    const res = await fetch(`${server.url}/alerts/inc-1`, { method: "POST", body: "x" });
    expect(res.status).toBe(404);
  });

  it("takes the header and the path forms, refuses a sequence id outside [-_A-Za-z0-9]{1,64}", async () => {
    const h = await fetch(`${server.url}/alerts`, {
      method: "POST",
      headers: { "X-Sequence-ID": "inc-2" },
      body: "by header",
    });
    expect(((await h.json()) as NtfyMessage).sequence_id).toBe("inc-2");
    const p = await fetch(`${server.url}/alerts/inc-2`, { method: "PUT", body: "by path" });
    expect(await p.json()).toMatchObject({
      topic: "alerts",
      sequence_id: "inc-2",
      message: "by path",
    });
    expect(server.notifications("alerts")).toHaveLength(1);
    const bad = await publish({ topic: "alerts", message: "x", sequence_id: "inc 3!" });
    expect(bad.status).toBe(400);
  });

  it("a message without one prints no sequence_id, and no priority when none was given", async () => {
    const r = await publish({ topic: "alerts", message: "  plain  " });
    expect(Object.keys(r.json)).toEqual(["id", "time", "expires", "event", "topic", "message"]);
    expect(r.json.message).toBe("plain");
    expect(r.json.expires).toBe((r.json.time as number) + 43_200);
  });
});

describe("actions", () => {
  const copy = { action: "copy", label: "Copy", value: "sheepdog resume --program catalog" };

  it("2.17 keeps a copy action with its value; 2.16 refuses the whole publish (400, 40018)", async () => {
    const ok = await publish({ topic: "alerts", message: "m", actions: [copy] });
    expect(ok.status).toBe(200);
    expect(ok.json.actions).toEqual([
      { id: expect.stringMatching(/^[A-Za-z0-9]{10}$/), clear: false, ...copy },
    ]);
    server.version = "2.16.0";
    const old = await publish({ topic: "alerts", message: "m", actions: [copy] });
    expect(old.status).toBe(400);
    expect(old.text).toBe(
      `${JSON.stringify({
        code: 40018,
        http: 400,
        error:
          "invalid request: actions invalid; parameter 'action' cannot be 'copy', valid values are 'view', 'broadcast' and 'http'",
        link: "https://ntfy.sh/docs/publish/#action-buttons",
      })}\n`,
    );
    expect(server.delivered).toHaveLength(1);
  });

  it("checks them as ntfy does: at most 3, a label, a url, no body with GET", async () => {
    const view = { action: "view", label: "Open", url: "https://example.com" };
    expect((await publish({ topic: "a", actions: [view, view, view, view] })).status).toBe(400);
    expect((await publish({ topic: "a", actions: [{ action: "view", url: "x" }] })).status).toBe(
      400,
    );
    expect((await publish({ topic: "a", actions: [{ action: "http", label: "x" }] })).status).toBe(
      400,
    );
    const get = { action: "http", label: "x", url: "http://h/", method: "get", body: "b" };
    const r = await publish({ topic: "a", actions: [get] });
    expect(r.json.error).toBe(
      "invalid request: actions invalid; parameter 'body' cannot be set if method is GET",
    );
  });

  it("an http action pressed as the Android app presses it publishes to the control topic", async () => {
    server.token = "tk_control";
    const action = {
      action: "http",
      label: "Resume",
      url: `${server.url}/catalog-control`,
      headers: { Authorization: "Bearer tk_control" },
      body: "resume catalog inc-1 1769000000 deadbeef",
    };
    const page = await publish(
      { topic: "alerts", message: "catalog stood down", actions: [action] },
      "tk_control",
    );
    expect(page.status).toBe(200);
    const pressed = await server.press(page.json.id as string, "Resume");
    expect(pressed.status).toBe(200);
    const got = server.received.at(-1);
    expect(got?.topic).toBe("catalog-control");
    expect(got?.headers["user-agent"]).toBe(NTFY_ANDROID_USER_AGENT);
    expect(got?.headers).not.toHaveProperty("content-type");
    expect(got?.headers).toMatchObject({
      authorization: "Bearer tk_control",
      "content-length": String(action.body.length),
      connection: "Keep-Alive",
      "accept-encoding": "gzip",
    });
    const control = await poll("catalog-control", "", { Authorization: "Bearer tk_control" });
    expect(control.lines).toEqual([expect.objectContaining({ message: action.body })]);
    // The app sends no token of its own: without the action's header the press is refused.
    const bare = await pressHttpAction({ ...action, headers: {}, id: "x", clear: false });
    expect(bare.status).toBe(401);
  });
});

describe("poll", () => {
  it("answers ndjson lines after since=<id>; an unknown id gives everything; no open/keepalive", async () => {
    const ids: string[] = [];
    for (const message of ["one", "two", "three"])
      ids.push((await publish({ topic: "ctl", message })).json.id as string);
    await publish({ topic: "other", message: "elsewhere" });
    const all = await poll("ctl");
    expect(all.type).toBe("application/x-ndjson; charset=utf-8");
    expect(all.lines.map((l) => l.message)).toEqual(["one", "two", "three"]);
    expect(all.lines.every((l) => l.event === "message")).toBe(true);
    expect((await poll("ctl", `&since=${ids[0]}`)).lines.map((l) => l.id)).toEqual(ids.slice(1));
    expect((await poll("ctl", `&since=${ids[2]}`)).lines).toEqual([]);
    expect((await poll("ctl", "&since=AAAAAAAAAAAA")).lines).toHaveLength(3);
    expect((await poll("ctl", "&since=latest")).lines.map((l) => l.message)).toEqual(["three"]);
    expect((await poll("ctl", "&since=none")).lines).toEqual([]);
    expect((await poll("ctl", "&since=10m")).lines).toHaveLength(3);
    expect((await poll("ctl", `&since=${Math.floor(Date.now() / 1000) + 60}`)).lines).toEqual([]);
    expect((await poll("ctl,other")).lines).toHaveLength(4);
    const bad = await poll("ctl", "&since=yesterday");
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.text)).toMatchObject({ code: 40008, error: "invalid since parameter" });
  });

  it("wants the token when the server has one", async () => {
    server.token = "tk_read";
    expect((await poll("ctl")).status).toBe(401);
    expect((await poll("ctl", "", { Authorization: "Bearer tk_read" })).status).toBe(200);
  });
});

describe("stream", () => {
  it("opens, sends cached and new messages and keepalives, and can be dropped", async () => {
    const before = (await publish({ topic: "ctl", message: "before" })).json.id as string;
    const ready = server.waitForStreams(1);
    const s = await stream(`/ctl/json?since=${before}`);
    await ready;
    const open = await s.next();
    expect(Object.keys(open)).toEqual(["id", "time", "event", "topic"]);
    expect(open).toMatchObject({ event: "open", topic: "ctl" });
    await publish({ topic: "ctl", message: "live" });
    expect(await s.next()).toMatchObject({ event: "message", message: "live" });
    server.keepalive();
    expect(await s.next()).toMatchObject({ event: "keepalive", topic: "ctl" });
    server.dropStreams("end");
    expect(await s.ended).toBe("end");
    expect(server.openStreams).toBe(0);
  });

  it("sends the cached messages since= asks for, and keepalives on its own timer", async () => {
    server.keepaliveMs = 20;
    await publish({ topic: "ctl", message: "old" });
    const s = await stream("/ctl/json?since=all");
    expect((await s.next()).event).toBe("open");
    expect((await s.next()).message).toBe("old");
    expect((await s.next()).event).toBe("keepalive");
    server.dropStreams("reset");
    expect(await s.ended).toBe("error");
  });

  it("a silent drop keeps the socket open and sends nothing more", async () => {
    const s = await stream("/ctl/json");
    expect((await s.next()).event).toBe("open");
    server.dropStreams("silent");
    await publish({ topic: "ctl", message: "lost" });
    server.keepalive();
    // A live stream would now hold "lost"; a second, fresh stream proves the server still runs.
    const fresh = await stream("/ctl/json?since=all");
    expect((await fresh.next()).event).toBe("open");
    expect((await fresh.next()).message).toBe("lost");
    expect(s.buffered()).toBe(0);
    expect(server.openStreams).toBe(2);
  });
});

describe("429", () => {
  it("answers ntfy's real bodies, with no Retry-After", async () => {
    server.rateLimit = "messages";
    const r = await fetch(`${server.url}/`, {
      method: "POST",
      body: JSON.stringify({ topic: "alerts", message: "m" }),
    });
    expect(r.status).toBe(429);
    expect(r.headers.get("retry-after")).toBeNull();
    expect(await r.text()).toBe(`${JSON.stringify(NTFY_429.messages)}\n`);
    expect((await poll("alerts")).status).toBe(200);
    server.rateLimit = "requests";
    const p = await poll("alerts");
    expect(p.status).toBe(429);
    expect(JSON.parse(p.text)).toEqual({
      code: 42901,
      http: 429,
      error: "limit reached: too many requests",
      link: "https://ntfy.sh/docs/publish/#limitations",
    });
    expect(server.delivered).toHaveLength(0);
  });
});
