import { randomInt } from "node:crypto";
import {
  createServer,
  type IncomingHttpHeaders,
  request,
  type Server,
  type ServerResponse,
} from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, beforeEach } from "vitest";

/** One message the server accepted (or refused, with `status`). */
export interface Received {
  via: "json" | "headers";
  path: string;
  /** The request target as sent, query string included. */
  url: string;
  topic: string;
  title: string | undefined;
  message: string;
  priority: number;
  tags: string[];
  headers: IncomingHttpHeaders;
  status: number;
  id: string;
  /** The message as the server stored and prints it (absent when the publish was refused). */
  stored?: NtfyMessage;
}

const PRIORITY_WORDS: Record<string, number> = {
  min: 1,
  low: 2,
  default: 3,
  high: 4,
  max: 5,
  urgent: 5,
};

function parsePriority(v: unknown): number {
  if (v === undefined || v === null || v === "") return 3;
  if (typeof v === "number") return v;
  const s = String(v).trim().toLowerCase();
  return PRIORITY_WORDS[s] ?? Number(s);
}

/** Decodes RFC 2047 encoded words (`=?UTF-8?B?…?=`, `=?UTF-8?Q?…?=`), as ntfy does. */
export function decodeRfc2047(value: string): string {
  return value.replace(/=\?([^?]+)\?([BbQq])\?([^?]*)\?=/g, (_m, _charset, enc, text) => {
    if (enc.toUpperCase() === "B") return Buffer.from(text, "base64").toString("utf8");
    const bytes = text
      .replace(/_/g, " ")
      .replace(/=([0-9A-Fa-f]{2})/g, (_x: string, h: string) =>
        String.fromCharCode(parseInt(h, 16)),
      );
    return Buffer.from(bytes, "latin1").toString("utf8");
  });
}

function header(headers: IncomingHttpHeaders, ...names: string[]): string | undefined {
  for (const n of names) {
    const v = headers[n.toLowerCase()];
    if (typeof v === "string") return decodeRfc2047(v);
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// ntfy's protocol as the stand-in models it. Facts and their sources (ntfy's own source and
// docs, read for issue 32) are in the class comment below; each mechanism cites where it is
// from. Default: a 2.17.0 server (sequence ids since 2.16.0, the `copy` action since 2.17.0).
// ---------------------------------------------------------------------------------------------

/** The ntfy server version the stand-in models unless a test picks another. */
export const NTFY_DEFAULT_VERSION = "2.17.0";
/** Sequence ids (update in place) arrived in ntfy 2.16.0; older servers ignore them. */
export const NTFY_SEQUENCE_ID_SINCE = "2.16.0";
/** The `copy` action arrived in ntfy 2.17.0; older servers refuse the publish (400, 40018). */
export const NTFY_COPY_ACTION_SINCE = "2.17.0";
/** ntfy's default `keepalive-interval` (server/config.go, DefaultKeepaliveInterval). */
export const NTFY_KEEPALIVE_MS = 45_000;
/** ntfy's default `cache-duration`, the `expires` a stored message gets (12 h). */
const CACHE_SECONDS = 43_200;
/** What the ntfy Android app 1.25.0 sends as User-Agent (util/HttpUtil.kt USER_AGENT). */
export const NTFY_ANDROID_USER_AGENT = "ntfy/1.25.0 (fdroid; Android 14; SDK 34)";

/** One action button, as ntfy stores and prints it (model.Action, 2.17). */
export interface NtfyAction {
  id: string;
  action: string;
  label: string;
  clear: boolean;
  url?: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  value?: string;
  intent?: string;
  extras?: Record<string, string>;
}

/**
 * One line of `GET /<topic>/json`, and the answer to a publish: ntfy's model.Message in its
 * field order; empty fields are left out (`omitempty`), and `sequence_id` when it equals `id`.
 */
export interface NtfyMessage {
  id: string;
  sequence_id?: string;
  time: number;
  expires?: number;
  event: "message" | "open" | "keepalive";
  topic: string;
  title?: string;
  message?: string;
  priority?: number;
  tags?: string[];
  click?: string;
  actions?: NtfyAction[];
}

/** A `GET /<topics>/json` the server answered (poll or stream), for tests to inspect. */
export interface Subscribe {
  url: string;
  topics: string[];
  poll: boolean;
  since: string | undefined;
  headers: IncomingHttpHeaders;
  status: number;
}

/** What a press of an `http` action got back. */
export interface Pressed {
  status: number;
  body: string;
}

const ID_CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
/** ntfy's random ids: 12 characters (message) or 10 (action) of [a-zA-Z0-9] (util.RandomString). */
function randomId(length = 12): string {
  let s = "";
  for (let i = 0; i < length; i++) s += ID_CHARS[randomInt(ID_CHARS.length)];
  return s;
}

/** ntfy's topic and sequence-id pattern (server.go topicRegex, sequenceIDRegex). */
const NAME = /^[-_A-Za-z0-9]{1,64}$/;
const JSON_PATH = /^\/([-_A-Za-z0-9]{1,64}(?:,[-_A-Za-z0-9]{1,64})*)\/json$/;
const UPDATE_PATH = /^\/([-_A-Za-z0-9]{1,64})\/([-_A-Za-z0-9]{1,64})$/;

/** `a` is at least `b` ("2.16.0" style versions). */
export function versionAtLeast(a: string, b: string): boolean {
  const pa = a.split(".").map(Number);
  const pb = b.split(".").map(Number);
  for (let i = 0; i < 3; i++) {
    const x = pa[i] ?? 0;
    const y = pb[i] ?? 0;
    if (x !== y) return x > y;
  }
  return true;
}

/** ntfy's error body: `{"code":…,"http":…,"error":…,"link":…}` (server/errors.go errHTTP). */
export interface NtfyError {
  code: number;
  http: number;
  error: string;
  link?: string;
}

const LIMITS = "https://ntfy.sh/docs/publish/#limitations";
/** The real 429 answers (server/errors.go, 2.13–2.17 wording). ntfy sends no Retry-After. */
export const NTFY_429: Record<"requests" | "messages", NtfyError> = {
  requests: { code: 42901, http: 429, error: "limit reached: too many requests", link: LIMITS },
  messages: {
    code: 42908,
    http: 429,
    error: "limit reached: daily message quota reached",
    link: LIMITS,
  },
};

function actionsInvalid(why: string): NtfyError {
  return {
    code: 40018,
    http: 400,
    error: `invalid request: actions invalid; ${why}`,
    link: "https://ntfy.sh/docs/publish/#action-buttons",
  };
}

/**
 * ntfy's parseActions checks (server/actions.go): at most 3, a known type, a label, a URL for
 * view and http, no body with GET/HEAD. A server older than 2.17.0 knows no `copy`.
 */
function checkActions(raw: unknown, version: string): NtfyAction[] | NtfyError {
  if (!Array.isArray(raw)) return actionsInvalid("JSON error: actions must be an array");
  const known = ["view", "broadcast", "http"];
  if (versionAtLeast(version, NTFY_COPY_ACTION_SINCE)) known.push("copy");
  if (raw.length > 3) return actionsInvalid("only 3 actions allowed");
  const out: NtfyAction[] = [];
  for (const r of raw as Record<string, unknown>[]) {
    const action = String(r.action ?? "").toLowerCase();
    const method = typeof r.method === "string" ? r.method.toUpperCase() : undefined;
    // The 2.13 wording; how 2.17 words it with `copy` in the list was not seen in its source.
    if (!known.includes(action))
      return actionsInvalid(
        `parameter 'action' cannot be '${action}', valid values are ${
          known.length === 4
            ? "'view', 'broadcast', 'http' and 'copy'"
            : "'view', 'broadcast' and 'http'"
        }`,
      );
    if (typeof r.label !== "string" || !r.label)
      return actionsInvalid("parameter 'label' is required");
    if ((action === "view" || action === "http") && !r.url)
      return actionsInvalid(`parameter 'url' is required for action '${action}'`);
    if (action === "http" && (method === "GET" || method === "HEAD") && r.body)
      return actionsInvalid(`parameter 'body' cannot be set if method is ${method}`);
    const a: NtfyAction = { id: randomId(10), action, label: r.label, clear: r.clear === true };
    if (typeof r.url === "string") a.url = r.url;
    if (method) a.method = method;
    if (r.headers && typeof r.headers === "object") a.headers = r.headers as Record<string, string>;
    if (typeof r.body === "string" && r.body) a.body = r.body;
    if (action === "copy" && typeof r.value === "string") a.value = r.value;
    out.push(a);
  }
  return out;
}

/** Go's time.ParseDuration, for `since=10m` and the like. Null when it is not one. */
function goDurationMs(s: string): number | null {
  const unit: Record<string, number> = {
    ns: 1e-6,
    us: 1e-3,
    µs: 1e-3,
    ms: 1,
    s: 1e3,
    m: 6e4,
    h: 3.6e6,
  };
  if (!/^([0-9.]+(?:ns|us|µs|ms|s|m|h))+$/.test(s)) return null;
  let ms = 0;
  for (const part of s.matchAll(/([0-9.]+)(ns|us|µs|ms|s|m|h)/g))
    ms += Number(part[1]) * (unit[part[2] as string] ?? 0);
  return Number.isFinite(ms) ? ms : null;
}

/** A `since=` value as ntfy's parseSince reads it; null when it is invalid (400, 40008). */
type Since =
  | { kind: "all" }
  | { kind: "none" }
  | { kind: "latest" }
  | { kind: "id"; id: string }
  | { kind: "time"; time: number };

function parseSince(value: string | undefined, poll: boolean): Since | null {
  if (value === undefined || value === "") return poll ? { kind: "all" } : { kind: "none" };
  if (value === "all" || value === "none" || value === "latest") return { kind: value };
  if (/^[A-Za-z0-9]{12}$/.test(value)) return { kind: "id", id: value };
  if (/^-?[0-9]+$/.test(value)) return { kind: "time", time: Number(value) };
  const d = goDurationMs(value);
  if (d !== null) return { kind: "time", time: Math.floor((Date.now() - d) / 1000) };
  return null;
}

/** What a publish carries beyond the fields of Received. */
interface Extra {
  sid?: string | undefined;
  /** The actions as sent, and once checked as ntfy stores them. */
  actions?: unknown;
  checked?: NtfyAction[];
  click?: string | undefined;
  priorityGiven: boolean;
}

/** An open `GET /<topics>/json` stream. */
interface Stream {
  topics: string[];
  res: ServerResponse;
  timer: NodeJS.Timeout;
  /** Dropped silently: the socket stays open, nothing more is written (a dead network path). */
  stalled: boolean;
}

/**
 * Presses an `http` action exactly as the ntfy Android app does (ntfy-android
 * msg/UserActionWorker.kt performHttpAction, util/HttpUtil.kt requestBuilder, 1.25.0): method
 * `action.method ?: "POST"`; body `action.body ?: ""`, none for GET/HEAD; a `User-Agent` of the
 * app's and the action's own headers, nothing else (no Authorization: the app adds none); no
 * Content-Type (the body has no media type), and what OkHttp's BridgeInterceptor adds:
 * Content-Length, Host, `Connection: Keep-Alive`, `Accept-Encoding: gzip`. Any 2xx is success.
 */
export function pressHttpAction(action: NtfyAction): Promise<Pressed> {
  if (action.action !== "http" || !action.url)
    throw new Error(`not an http action with a url: ${JSON.stringify(action)}`);
  const method = action.method ?? "POST";
  const body = method === "GET" || method === "HEAD" ? null : (action.body ?? "");
  const headers: Record<string, string> = { "User-Agent": NTFY_ANDROID_USER_AGENT };
  for (const [k, v] of Object.entries(action.headers ?? {})) headers[k] = v;
  if (body !== null) headers["Content-Length"] = String(Buffer.byteLength(body));
  headers.Connection = "Keep-Alive";
  headers["Accept-Encoding"] = "gzip";
  return new Promise<Pressed>((resolve, reject) => {
    const req = request(action.url as string, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () =>
        resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }),
      );
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(body ?? undefined);
  });
}

/**
 * A real HTTP server on 127.0.0.1 that speaks ntfy's publish API: JSON publishing at `/`, the
 * body-and-headers form at `/<topic>`. It records what arrives, can require a token (401
 * without), fail on purpose (500), stop and start again on the same port, and counts GETs to
 * `/hc/...` (a healthchecks.io-style heartbeat URL).
 *
 * It models ntfy server 2.17.0 by default (`version` picks another), from ntfy's source
 * (server/server.go, model/model.go, server/actions.go, server/errors.go) and docs
 * (docs/publish.md, docs/subscribe/api.md, docs/releases.md):
 * - Every delivered message is stored (12-char id of [a-zA-Z0-9], Unix time, expires +12 h) and
 *   comes back from `GET /<topics>/json?poll=1&since=…` (all, none, latest, an id: what came
 *   after it, an unknown id: everything, a Unix time, a Go duration; else 400 40008), one JSON
 *   object per line, no open or keepalive lines. Without `poll` the answer is a stream: an
 *   `open` line, the cached messages `since` asks for, then each new message, and a `keepalive`
 *   line every `keepaliveMs` (ntfy's 45 s unless a test sets it, or calls `keepalive()`).
 * - A sequence id (JSON `sequence_id`, header `X-Sequence-ID`/`Sequence-ID`/`sid`, or the path
 *   `/<topic>/<sid>`) is kept from 2.16.0 on; the server still stores a new message with a new
 *   id, and the phone replaces its notification (`notifications()`, keyed as ntfy-android keys
 *   them: sequence id, else id). An older server ignores the field (unknown JSON fields are
 *   dropped), so the phone shows a second notification; `/<topic>/<sid>` is a 404 there.
 * - Actions are checked as parseActions does; below 2.17.0 a `copy` action refuses the whole
 *   publish (400, 40018).
 * - `rateLimit` answers ntfy's real 429 bodies (no Retry-After: ntfy sends none).
 * - `press()` sends an `http` action's request exactly as the ntfy Android app would.
 * Known difference: a missing token answers 401 here; real ntfy answers 403 (40301, forbidden)
 * to an anonymous request on a protected topic, 401 (40101) only to a wrong token.
 */
export class NtfyServer {
  readonly received: Received[] = [];
  readonly heartbeats: string[] = [];
  /** When set, publishing needs `Authorization: Bearer <token>`. */
  token: string | null = null;
  /** When set, every publish answers this status. */
  failWith: number | null = null;
  /** A careless server: its error answers repeat the Authorization header it got. */
  echoAuthInErrors = false;
  /** The ntfy server version modelled ("2.15.0": no sequence ids; "2.16.0": no `copy`). */
  version = NTFY_DEFAULT_VERSION;
  /** Every message stored, in arrival order (ntfy's cache), all topics. */
  readonly messages: NtfyMessage[] = [];
  /** Every `GET /<topics>/json` answered, poll or stream. */
  readonly subscribes: Subscribe[] = [];
  /** How often an open stream gets a keepalive line. */
  keepaliveMs = NTFY_KEEPALIVE_MS;
  /** When set, publishing (and, for "requests", subscribing) answers ntfy's real 429. */
  rateLimit: "requests" | "messages" | null = null;
  port = 0;
  private server: Server | null = null;
  private readonly streams = new Set<Stream>();
  private streamWaiters: { n: number; resolve: () => void }[] = [];

  /** Forgets what arrived and drops every failure mode a test set. */
  reset(): void {
    this.received.length = 0;
    this.heartbeats.length = 0;
    this.token = null;
    this.failWith = null;
    this.echoAuthInErrors = false;
    this.version = NTFY_DEFAULT_VERSION;
    this.messages.length = 0;
    this.subscribes.length = 0;
    this.keepaliveMs = NTFY_KEEPALIVE_MS;
    this.rateLimit = null;
    this.dropStreams("end");
  }

  get running(): boolean {
    return this.server !== null;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** The messages that were delivered (answered 200). */
  get delivered(): Received[] {
    return this.received.filter((r) => r.status === 200);
  }

  /** The messages stored on one topic, oldest first. */
  topicMessages(topic: string): NtfyMessage[] {
    return this.messages.filter((m) => m.topic === topic);
  }

  /**
   * What a subscribed phone shows for a topic: one notification per sequence id (ntfy-android
   * keys a notification by `sequence_id ?: id`), each the latest message published under it,
   * in the order they first appeared.
   */
  notifications(topic: string): NtfyMessage[] {
    const shown = new Map<string, NtfyMessage>();
    for (const m of this.topicMessages(topic)) shown.set(m.sequence_id ?? m.id, m);
    return [...shown.values()];
  }

  /** How many `GET /<topics>/json` streams are open now. */
  get openStreams(): number {
    return this.streams.size;
  }

  /** Resolves once at least `n` streams are open (its `open` line written): a readiness signal. */
  waitForStreams(n = 1): Promise<void> {
    if (this.streams.size >= n) return Promise.resolve();
    return new Promise((resolve) => this.streamWaiters.push({ n, resolve }));
  }

  /** Writes a keepalive line to every open stream now, as ntfy does every keepalive interval. */
  keepalive(): void {
    for (const s of this.streams) this.writeLine(s, this.event("keepalive", s.topics));
  }

  /**
   * Drops every open stream: "end" closes it as a restarting server does (the client reads the
   * end), "reset" destroys the socket (a connection reset), "silent" keeps the socket open and
   * writes nothing more, no keepalive either (a network path that died: only a client's read
   * timeout can tell).
   */
  dropStreams(how: "end" | "reset" | "silent" = "reset"): void {
    for (const s of [...this.streams]) {
      if (how === "silent") {
        s.stalled = true;
        clearInterval(s.timer);
        continue;
      }
      this.closeStream(s);
      if (how === "end") s.res.end();
      else s.res.destroy();
    }
  }

  /**
   * Presses the `http` action labelled `label` of a stored message (by id, or the message
   * itself) as the ntfy Android app would (see pressHttpAction).
   */
  press(target: NtfyMessage | string, label: string): Promise<Pressed> {
    const m = typeof target === "string" ? this.messages.find((x) => x.id === target) : target;
    if (!m) throw new Error(`no stored message ${String(target)}`);
    const a = m.actions?.find((x) => x.label === label);
    if (!a) throw new Error(`message ${m.id} has no action labelled ${label}`);
    return pressHttpAction(a);
  }

  async start(): Promise<this> {
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => this.handle(req.method ?? "", req.url ?? "/", req.headers, chunks, res));
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(this.port, "127.0.0.1", () => resolve());
    });
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
    return this;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    for (const s of [...this.streams]) this.closeStream(s);
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private handle(
    method: string,
    url: string,
    headers: IncomingHttpHeaders,
    chunks: Buffer[],
    res: import("node:http").ServerResponse,
  ): void {
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { "Content-Type": "application/json" });
      res.end(`${JSON.stringify(body)}\n`);
    };
    const path = url.split("?")[0] ?? "/";
    if (method === "GET" && path.startsWith("/hc/")) {
      this.heartbeats.push(path);
      res.writeHead(200, { "Content-Type": "text/plain" });
      res.end("OK");
      return;
    }
    const jsonPath = JSON_PATH.exec(path);
    if (method === "GET" && jsonPath) {
      this.subscribe(url, (jsonPath[1] as string).split(","), headers, res);
      return;
    }
    if (method !== "POST" && method !== "PUT") {
      send(404, { code: 40401, http: 404, error: "page not found" });
      return;
    }
    const body = Buffer.concat(chunks).toString("utf8");
    let msg: Omit<Received, "headers" | "status" | "id" | "path" | "url">;
    const extra: Extra = { priorityGiven: false };
    if (path === "/") {
      let j: Record<string, unknown>;
      try {
        j = JSON.parse(body);
      } catch {
        send(400, {
          code: 40024,
          http: 400,
          error: "invalid request: request body must be valid JSON",
        });
        return;
      }
      if (typeof j.topic !== "string" || !j.topic) {
        send(400, { code: 40009, http: 400, error: "invalid request: topic invalid" });
        return;
      }
      msg = {
        via: "json",
        topic: j.topic,
        title: typeof j.title === "string" ? j.title : undefined,
        message: typeof j.message === "string" ? j.message : "triggered",
        priority: parsePriority(j.priority),
        tags: Array.isArray(j.tags) ? j.tags.map(String) : [],
      };
      extra.priorityGiven = j.priority !== undefined && j.priority !== 0;
      if (typeof j.sequence_id === "string") extra.sid = j.sequence_id;
      if (j.actions !== undefined) extra.actions = j.actions;
      if (typeof j.click === "string") extra.click = j.click;
    } else {
      const tags = header(headers, "X-Tags", "Tags", "Tag", "ta");
      let topic = path.slice(1);
      const update = UPDATE_PATH.exec(path);
      if (update) {
        // POST /<topic>/<sid> (2.16.0): an older server has no such route.
        if (!versionAtLeast(this.version, NTFY_SEQUENCE_ID_SINCE)) {
          send(404, { code: 40401, http: 404, error: "page not found" });
          return;
        }
        topic = update[1] as string;
        extra.sid = update[2];
      } else extra.sid = header(headers, "X-Sequence-ID", "Sequence-ID", "sid");
      const actions = header(headers, "X-Actions", "Actions", "Action");
      // Only the JSON form of the Actions header; ntfy's "simple" form is not modelled.
      if (actions?.trim().startsWith("[")) {
        try {
          extra.actions = JSON.parse(actions);
        } catch {
          extra.actions = "not JSON";
        }
      }
      extra.click = header(headers, "X-Click", "Click");
      extra.priorityGiven = !!header(headers, "X-Priority", "Priority", "prio", "p");
      msg = {
        via: "headers",
        topic,
        title: header(headers, "X-Title", "Title", "t"),
        message: body || "triggered",
        priority: parsePriority(header(headers, "X-Priority", "Priority", "prio", "p")),
        tags: tags ? tags.split(",").map((t) => t.trim()) : [],
      };
    }
    const record: Received = {
      ...msg,
      path,
      url,
      headers,
      status: 200,
      id: randomId(),
    };
    this.received.push(record);
    if (this.token !== null && headers.authorization !== `Bearer ${this.token}`) {
      record.status = 401;
      send(401, {
        code: 40101,
        http: 401,
        error: "unauthorized",
        link: "https://ntfy.sh/docs/publish/#authentication",
      });
      return;
    }
    if (this.failWith !== null) {
      record.status = this.failWith;
      const seen = this.echoAuthInErrors ? ` (got ${headers.authorization})` : "";
      send(this.failWith, {
        code: 50001,
        http: this.failWith,
        error: `internal server error${seen}`,
      });
      return;
    }
    const refused = this.refusal(record, extra);
    if (refused) {
      record.status = refused.http;
      send(refused.http, refused);
      return;
    }
    send(200, this.store(record, extra));
  }

  /** Why ntfy would refuse this publish (its 429 and 400 answers), or null. */
  private refusal(record: Received, extra: Extra): NtfyError | null {
    if (this.rateLimit) return NTFY_429[this.rateLimit];
    if (record.via === "json" && !NAME.test(record.topic))
      return { code: 40009, http: 400, error: "invalid request: topic invalid" };
    if (
      extra.sid !== undefined &&
      versionAtLeast(this.version, NTFY_SEQUENCE_ID_SINCE) &&
      !NAME.test(extra.sid)
    )
      // errHTTPBadRequestSequenceIDInvalid: its code and text were not found in ntfy's source.
      return { code: 40049, http: 400, error: "invalid request: sequence ID invalid" };
    if (extra.actions !== undefined) {
      const checked = checkActions(extra.actions, this.version);
      if (!Array.isArray(checked)) return checked;
      extra.checked = checked;
    }
    return null;
  }

  /** Stores a delivered message, hands it to the open streams, and returns ntfy's answer. */
  private store(record: Received, extra: Extra): NtfyMessage {
    const now = Math.floor(Date.now() / 1000);
    // Below 2.16.0 the sequence id is an unknown field, dropped; ntfy leaves it out when = id.
    const sid =
      extra.sid && extra.sid !== record.id && versionAtLeast(this.version, NTFY_SEQUENCE_ID_SINCE)
        ? extra.sid
        : undefined;
    const m: NtfyMessage = {
      id: record.id,
      ...(sid ? { sequence_id: sid } : {}),
      time: now,
      expires: now + CACHE_SECONDS,
      event: "message",
      topic: record.topic,
      ...(record.title ? { title: record.title } : {}),
      // ntfy trims the text, and an empty one is "triggered" (handleBodyAsTextMessage).
      message: record.message.trim() || "triggered",
      // ntfy stores 0 when no priority was given, and leaves 0 out.
      ...(extra.priorityGiven ? { priority: record.priority } : {}),
      ...(record.tags.length ? { tags: record.tags } : {}),
      ...(extra.click ? { click: extra.click } : {}),
      ...(extra.checked?.length ? { actions: extra.checked } : {}),
    };
    record.stored = m;
    this.messages.push(m);
    for (const s of this.streams) if (s.topics.includes(m.topic)) this.writeLine(s, m);
    return m;
  }

  /**
   * `GET /<topics>/json`: with `poll=1` the cached messages `since` asks for, one per line, and
   * the end; without, a stream (server.go handleSubscribeHTTP). ntfy's readParam reads each
   * parameter from a header (`X-Poll`, `X-Since`) or the query string (`poll`, `since`, `si`).
   */
  private subscribe(
    url: string,
    topics: string[],
    headers: IncomingHttpHeaders,
    res: ServerResponse,
  ): void {
    const query = new URL(url, "http://127.0.0.1").searchParams;
    const param = (...names: string[]): string | undefined => {
      for (const n of names) {
        const h = headers[n];
        if (typeof h === "string") return h;
        const v = query.get(n);
        if (v !== null) return v;
      }
      return undefined;
    };
    const poll = ["1", "yes", "true"].includes((param("x-poll", "poll", "po") ?? "").toLowerCase());
    const sinceParam = param("x-since", "since", "si");
    const record: Subscribe = { url, topics, poll, since: sinceParam, headers, status: 200 };
    this.subscribes.push(record);
    const fail = (e: NtfyError) => {
      record.status = e.http;
      res.writeHead(e.http, { "Content-Type": "application/json" });
      res.end(`${JSON.stringify(e)}\n`);
    };
    if (this.token !== null && headers.authorization !== `Bearer ${this.token}`) {
      fail({
        code: 40101,
        http: 401,
        error: "unauthorized",
        link: "https://ntfy.sh/docs/publish/#authentication",
      });
      return;
    }
    if (this.rateLimit === "requests") {
      fail(NTFY_429.requests);
      return;
    }
    const since = parseSince(sinceParam, poll);
    if (!since) {
      fail({
        code: 40008,
        http: 400,
        error: "invalid since parameter",
        link: "https://ntfy.sh/docs/subscribe/api/#fetch-cached-messages",
      });
      return;
    }
    res.writeHead(200, { "Content-Type": "application/x-ndjson; charset=utf-8" });
    const cached = this.cached(topics, since);
    if (poll) {
      res.end(cached.map((m) => `${JSON.stringify(m)}\n`).join(""));
      return;
    }
    const stream: Stream = {
      topics,
      res,
      stalled: false,
      timer: setInterval(
        () => this.writeLine(stream, this.event("keepalive", topics)),
        this.keepaliveMs,
      ),
    };
    stream.timer.unref();
    this.streams.add(stream);
    res.on("close", () => this.closeStream(stream));
    this.writeLine(stream, this.event("open", topics));
    for (const m of cached) this.writeLine(stream, m);
    this.streamWaiters = this.streamWaiters.filter((w) => {
      if (this.streams.size < w.n) return true;
      w.resolve();
      return false;
    });
  }

  /**
   * The stored messages `since` selects (message_cache.go Messages): an id selects what was
   * stored after it, across topics as ntfy's row ids do; an id ntfy does not know, everything.
   */
  private cached(topics: string[], since: Since): NtfyMessage[] {
    const mine = (m: NtfyMessage) => topics.includes(m.topic);
    switch (since.kind) {
      case "none":
        return [];
      case "all":
        return this.messages.filter(mine);
      case "latest":
        return topics.flatMap((t) => this.topicMessages(t).slice(-1));
      case "time":
        return this.messages.filter((m) => mine(m) && m.time >= since.time);
      case "id": {
        const at = this.messages.findIndex((m) => m.id === since.id);
        return this.messages.slice(at + 1).filter(mine);
      }
    }
  }

  /** An `open` or `keepalive` line: a fresh id, the time, the topics as the path named them. */
  private event(event: "open" | "keepalive", topics: string[]): NtfyMessage {
    return {
      id: randomId(),
      time: Math.floor(Date.now() / 1000),
      event,
      topic: topics.join(","),
    };
  }

  private writeLine(stream: Stream, m: NtfyMessage): void {
    if (stream.stalled || stream.res.writableEnded || stream.res.destroyed) return;
    stream.res.write(`${JSON.stringify(m)}\n`);
  }

  private closeStream(stream: Stream): void {
    clearInterval(stream.timer);
    this.streams.delete(stream);
  }
}

/** Starts a fresh server on a free port. */
export async function ntfyServer(): Promise<NtfyServer> {
  return new NtfyServer().start();
}

/**
 * One server for a whole test file: started before its tests, stopped after them, and before
 * each test emptied and back to a plain server (running again, on its port, if a test stopped it).
 */
export function useNtfyServer(): NtfyServer {
  const server = new NtfyServer();
  beforeAll(async () => {
    await server.start();
  });
  afterAll(async () => {
    await server.stop();
  });
  beforeEach(async () => {
    server.reset();
    if (!server.running) await server.start();
  });
  return server;
}
