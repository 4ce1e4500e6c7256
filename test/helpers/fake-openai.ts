import { randomBytes } from "node:crypto";
import {
  createServer,
  type IncomingHttpHeaders,
  type Server,
  type ServerResponse,
} from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { afterAll } from "vitest";

// A scripted OpenAI Responses API on 127.0.0.1 for the real Codex CLI (0.171.0), and its HTTP(S)
// proxy: every CONNECT (and every absolute-URL request) is refused with 403 and logged, so
// nothing leaves the machine. Codex speaks to `POST /v1/responses` only (`stream: true`); the
// answer is SSE: `response.created`, per output item `response.output_item.added` (+
// `response.output_text.delta` for text) and `response.output_item.done`, then
// `response.completed` with `response.usage`. The model side is a list of rules, as in
// fake-anthropic.ts: each request goes to the first rule whose `when` matches and that has uses
// left; a request no rule takes gets a short text answer.
//
// Codex reads rate limits from the headers of every response (codex-rs/codex-api/src/
// rate_limits.rs; values as the real backend sends them):
//   x-codex-{primary,secondary}-used-percent     a percentage, "42.5"
//   x-codex-{primary,secondary}-window-minutes   300 (five hours) | 10080 (a week)
//   x-codex-{primary,secondary}-reset-at         epoch seconds
//   x-codex-{primary,secondary}-reset-after-seconds, x-codex-primary-over-secondary-limit-percent
//   x-codex-active-limit (codex | premium), x-codex-plan-type, x-codex-credits-{has-credits,
//   unlimited,balance} ("False"/"True"), x-codex-promo-message.
// A 429 whose body's `error.type` is `usage_limit_reached` is the usage limit (its `resets_at`
// an integer, else Codex reads it as a plain 429); `usage_not_included` is the plan's refusal.

/** The usage numbers of a reply (`response.usage`); total_tokens is input + output. */
export interface Usage {
  input_tokens: number;
  cached_tokens: number;
  output_tokens: number;
  reasoning_tokens: number;
}

/** One request the server received, as tests read it back. */
export interface ApiRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  // biome-ignore lint/suspicious/noExplicitAny: the Responses API body, read loosely by tests
  body: any;
  /** What the server answered: a rule's name, "default", "refused", "404", "upgrade"… */
  answeredBy: string;
  /** When it arrived (epoch ms). */
  at: number;
}

/** What `x-codex-turn-metadata` says a request is for. */
export type RequestKind = "turn" | "title" | "compaction" | "other";

/** A view of a /v1/responses request for rules to match on. */
export interface Turn {
  req: ApiRequest;
  kind: RequestKind;
  /**
   * True for the conversation's own requests (`request_kind: "turn"` from a user thread): not a
   * title, not a compaction. (0.171.0 sends no `tools` field with gpt-6.2-sol: its tools come as
   * an `additional_tools` input item.)
   */
  main: boolean;
  /** All text of the last user message. */
  lastUser: string;
  /** The `output` of every `function_call_output` after the last user message. */
  toolOutputs: string[];
  /** Every user message's text, joined. */
  allUser: string;
}

interface Extra {
  usage?: Partial<Usage>;
  headers?: Record<string, string>;
}

export type Reply =
  | ({ text: string } & Extra)
  /** An `exec_command` call (the shell tool of 0.171.0), optionally after some text. */
  | ({ call: { cmd: string; [arg: string]: unknown }; text?: string } & Extra)
  /** An error status with its JSON body (ERRORS has the real ones). */
  | { status: number; body?: unknown; headers?: Record<string, string> }
  /** 200 and `response.created`, then nothing: the stream stays open until the server stops. */
  | { hang: true; headers?: Record<string, string> };

export interface Rule {
  name?: string;
  /** Default: main-conversation requests only. */
  when?: (t: Turn) => boolean;
  /** How many requests it answers (default 1; Infinity for a standing rule). */
  times?: number;
  reply: Reply | ((t: Turn) => Reply);
}

/** An `exec_command` call running `cmd`. */
export function exec(cmd: string, extra: { text?: string } & Extra = {}): Reply {
  return { call: { cmd }, ...extra };
}

/** The error bodies the real backend sends. */
export const ERRORS = {
  /** A plain 429 (no usage limit): Codex retries, then "exceeded retry limit, last status: 429". */
  rateLimit: {
    error: {
      message: "Rate limit reached for requests. Please try again in 20s.",
      type: "requests",
      param: null,
      code: "rate_limit_exceeded",
    },
  },
  serverError: {
    error: {
      message: "The server had an error while processing your request. Sorry about that!",
      type: "server_error",
      param: null,
      code: null,
    },
  },
  overloaded: {
    error: {
      message: "Our servers are currently overloaded. Please try again later.",
      type: "server_error",
      param: null,
      code: "server_is_overloaded",
    },
  },
  /** The usage limit; `resetsAt` in epoch seconds, absent for a plan that names no reset. */
  usageLimit(plan: string, resetsAt: number | null, now = Date.now()) {
    return {
      error: {
        type: "usage_limit_reached",
        message: "The usage limit has been reached",
        plan_type: plan,
        ...(resetsAt === null
          ? {}
          : {
              resets_at: resetsAt,
              eligible_promo: null,
              resets_in_seconds: Math.max(0, resetsAt - Math.floor(now / 1000)),
            }),
      },
    };
  },
};

export interface Window {
  /** 0–100. */
  used: number;
  /** 300 for the five-hour window, 10080 for the week. */
  minutes: number;
  /** Epoch seconds; absent: no `-reset-at` header (a plan that names no reset). */
  resetAt?: number;
}

/** The `x-codex-*` rate-limit headers of one response, as the real backend writes them. */
export function rateLimitHeaders(
  o: { primary?: Window; secondary?: Window; plan?: string; activeLimit?: string },
  now = Date.now(),
): Record<string, string> {
  const s = Math.floor(now / 1000);
  const h: Record<string, string> = {
    "x-codex-active-limit": o.activeLimit ?? "codex",
    "x-codex-plan-type": o.plan ?? "plus",
    "x-codex-primary-over-secondary-limit-percent": "0",
    "x-codex-credits-has-credits": "False",
    "x-codex-credits-balance": "",
    "x-codex-credits-unlimited": "False",
  };
  for (const [name, w] of [
    ["primary", o.primary],
    ["secondary", o.secondary],
  ] as const) {
    if (!w) continue;
    h[`x-codex-${name}-used-percent`] = String(w.used);
    h[`x-codex-${name}-window-minutes`] = String(w.minutes);
    if (w.resetAt === undefined) continue;
    h[`x-codex-${name}-reset-at`] = String(w.resetAt);
    h[`x-codex-${name}-reset-after-seconds`] = String(Math.max(0, w.resetAt - s));
  }
  return h;
}

/** Headers of a plus plan with room left: 5h at `fiveHour` %, the week at `week` %. */
export function allowedHeaders(fiveHour: number, week: number, now = Date.now()) {
  const s = Math.floor(now / 1000);
  return rateLimitHeaders(
    {
      primary: { used: fiveHour, minutes: 300, resetAt: s + 3 * 3600 },
      secondary: { used: week, minutes: 10080, resetAt: s + 4 * 86_400 },
    },
    now,
  );
}

/**
 * A usage-limit refusal: 429, the real body, and the headers: by default the five-hour window at
 * 100 % until `resetsAt` (epoch s; null: a plan that names no reset, and no `-reset-at` header),
 * the week at `week` %; `windows` replaces them (a week at 100 %).
 */
export function usageLimitReply(
  resetsAt: number | null,
  o: {
    plan?: string;
    week?: number;
    now?: number;
    windows?: { primary?: Window; secondary?: Window };
  } = {},
): Reply {
  const now = o.now ?? Date.now();
  const s = Math.floor(now / 1000);
  const plan = o.plan ?? "plus";
  const windows = o.windows ?? {
    primary: { used: 100, minutes: 300, ...(resetsAt === null ? {} : { resetAt: resetsAt }) },
    secondary: { used: o.week ?? 40, minutes: 10080, resetAt: s + 4 * 86_400 },
  };
  return {
    status: 429,
    body: ERRORS.usageLimit(plan, resetsAt, now),
    headers: rateLimitHeaders({ plan, ...windows }, now),
  };
}

const DEFAULT_USAGE: Usage = {
  input_tokens: 2500,
  cached_tokens: 2000,
  output_tokens: 15,
  reasoning_tokens: 0,
};

// biome-ignore lint/suspicious/noExplicitAny: input items as sent
function textOf(content: any): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((b) => (typeof b?.text === "string" ? b.text : ""))
    .filter(Boolean)
    .join("\n");
}

function kindOf(req: ApiRequest): RequestKind {
  let meta: { request_kind?: string; thread_source?: string } = {};
  try {
    meta = JSON.parse(String(req.headers["x-codex-turn-metadata"] ?? "{}"));
  } catch {}
  if (meta.request_kind === "compaction") return "compaction";
  if (meta.thread_source === "thread_title") return "title";
  if (meta.request_kind === "turn") return "turn";
  return "other";
}

function turnOf(req: ApiRequest): Turn {
  // biome-ignore lint/suspicious/noExplicitAny: input items as sent
  const input = (Array.isArray(req.body?.input) ? req.body.input : []) as any[];
  const isUser = (i: { type?: string; role?: string }) =>
    (i.type === "message" || i.type === undefined) && i.role === "user";
  const users = input.filter(isUser);
  let lastUserAt = -1;
  input.forEach((i, n) => {
    if (isUser(i)) lastUserAt = n;
  });
  const toolOutputs = input
    .slice(lastUserAt + 1)
    .filter((i) => i.type === "function_call_output")
    .map((i) => (typeof i.output === "string" ? i.output : textOf(i.output)));
  const kind = kindOf(req);
  return {
    req,
    kind,
    main: kind === "turn",
    lastUser: textOf(users.at(-1)?.content),
    toolOutputs,
    allUser: users.map((m) => textOf(m.content)).join("\n"),
  };
}

const id = (prefix: string) => `${prefix}_${randomBytes(12).toString("hex")}`;

/** The fake API and proxy. `rules` may be changed at any time; `requests` is the log. */
export class FakeOpenAI {
  rules: (Rule & { used: number })[] = [];
  readonly requests: ApiRequest[] = [];
  /** CONNECT targets and absolute URLs refused as a proxy. */
  readonly refused: string[] = [];
  port = 0;
  private server: Server | null = null;
  private readonly sockets = new Set<Socket>();
  private readonly hanging = new Set<ServerResponse>();

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Adds rules after those already there. */
  script(...rules: Rule[]): this {
    for (const r of rules) this.rules.push({ ...r, used: 0 });
    return this;
  }

  /** The /v1/responses requests, as turns (`main` ones only unless `all`). */
  turns(all = false): Turn[] {
    return this.requests
      .filter((r) => r.path === "/v1/responses")
      .map(turnOf)
      .filter((t) => all || t.main);
  }

  /** Rules with uses left, by name (or index): what the CLI has not asked for yet. */
  pending(): string[] {
    return this.rules
      .map((r, i) => ({ r, i }))
      .filter(({ r }) => r.used < (r.times ?? 1) && (r.times ?? 1) !== Number.POSITIVE_INFINITY)
      .map(({ r, i }) => r.name ?? `#${i}`);
  }

  /** Ends every hung stream (the CLI sees the connection drop). */
  releaseHangs(): void {
    for (const res of this.hanging) res.destroy();
    this.hanging.clear();
  }

  async start(): Promise<this> {
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () =>
        this.handle(req.method ?? "", req.url ?? "", req.headers, Buffer.concat(chunks), res),
      );
    });
    server.on("connection", (socket) => {
      this.sockets.add(socket);
      socket.on("close", () => this.sockets.delete(socket));
    });
    server.on("connect", (req, socket) => {
      this.refused.push(`CONNECT ${req.url}`);
      socket.end("HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n");
    });
    // A WebSocket try (the built-in provider's first attempt) gets 426: Codex falls back to HTTP.
    server.on("upgrade", (req, socket) => {
      this.requests.push({
        method: req.method ?? "",
        path: (req.url ?? "").split("?")[0] ?? "",
        headers: req.headers,
        body: null,
        answeredBy: "upgrade",
        at: Date.now(),
      });
      socket.end("HTTP/1.1 426 Upgrade Required\r\nContent-Length: 0\r\n\r\n");
    });
    this.server = server;
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
    this.port = (server.address() as AddressInfo).port;
    return this;
  }

  async stop(): Promise<void> {
    const s = this.server;
    this.server = null;
    if (!s) return;
    this.releaseHangs();
    s.closeAllConnections();
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  }

  private handle(
    method: string,
    url: string,
    headers: IncomingHttpHeaders,
    raw: Buffer,
    res: ServerResponse,
  ): void {
    if (/^[a-z]+:\/\//i.test(url)) {
      this.refused.push(`${method} ${url}`);
      res.writeHead(403).end();
      return;
    }
    const path = url.split("?")[0] ?? url;
    let body: unknown = null;
    try {
      body = raw.length ? JSON.parse(raw.toString("utf8")) : null;
    } catch {
      body = raw.toString("utf8");
    }
    const req: ApiRequest = { method, path, headers, body, answeredBy: "", at: Date.now() };
    this.requests.push(req);
    if (path !== "/v1/responses" || method !== "POST") {
      req.answeredBy = "404";
      res.writeHead(404, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          error: { message: `Invalid URL (${method} ${path})`, type: "invalid_request_error" },
        }),
      );
      return;
    }
    const turn = turnOf(req);
    const rule = this.rules.find(
      (r) => r.used < (r.times ?? 1) && (r.when ? r.when(turn) : turn.main),
    );
    let reply: Reply = { text: "OK." };
    if (rule) {
      rule.used++;
      req.answeredBy = rule.name ?? `#${this.rules.indexOf(rule)}`;
      reply = typeof rule.reply === "function" ? rule.reply(turn) : rule.reply;
    } else {
      req.answeredBy = "default";
    }
    this.answer(req, reply, res);
  }

  private answer(req: ApiRequest, reply: Reply, res: ServerResponse): void {
    const headers = { "x-request-id": id("req"), ...(reply.headers ?? {}) };
    if ("status" in reply) {
      const body = reply.body ?? (reply.status === 429 ? ERRORS.rateLimit : ERRORS.serverError);
      res.writeHead(reply.status, { ...headers, "content-type": "application/json" });
      res.end(JSON.stringify(body));
      return;
    }
    res.writeHead(200, {
      ...headers,
      "content-type": "text/event-stream",
      "cache-control": "no-cache",
    });
    let seq = 0;
    const send = (type: string, data: object) =>
      res.write(
        `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq++, ...data })}\n\n`,
      );
    const responseId = id("resp");
    const model = req.body?.model ?? "gpt-6.2-sol";
    const created = Math.floor(Date.now() / 1000);
    const base = { id: responseId, object: "response", created_at: created, model };
    send("response.created", { response: { ...base, status: "in_progress", output: [] } });
    if ("hang" in reply) {
      this.hanging.add(res);
      res.on("close", () => this.hanging.delete(res));
      return;
    }
    // biome-ignore lint/suspicious/noExplicitAny: output items
    const output: any[] = [];
    const text = reply.text;
    if (text !== undefined && text !== "") {
      const itemId = id("msg");
      const index = output.length;
      send("response.output_item.added", {
        output_index: index,
        item: {
          id: itemId,
          type: "message",
          status: "in_progress",
          role: "assistant",
          content: [],
        },
      });
      send("response.output_text.delta", {
        item_id: itemId,
        output_index: index,
        content_index: 0,
        delta: text,
      });
      const item = {
        id: itemId,
        type: "message",
        status: "completed",
        role: "assistant",
        content: [{ type: "output_text", text, annotations: [] }],
      };
      send("response.output_item.done", { output_index: index, item });
      output.push(item);
    }
    if ("call" in reply) {
      const index = output.length;
      const item = {
        id: id("fc"),
        type: "function_call",
        status: "completed",
        name: "exec_command",
        arguments: JSON.stringify(reply.call),
        call_id: id("call"),
      };
      send("response.output_item.added", {
        output_index: index,
        item: { ...item, status: "in_progress", arguments: "" },
      });
      send("response.output_item.done", { output_index: index, item });
      output.push(item);
    }
    const u: Usage = { ...DEFAULT_USAGE, ...(reply.usage ?? {}) };
    send("response.completed", {
      response: {
        ...base,
        status: "completed",
        output,
        usage: {
          input_tokens: u.input_tokens,
          input_tokens_details: { cached_tokens: u.cached_tokens },
          output_tokens: u.output_tokens,
          output_tokens_details: { reasoning_tokens: u.reasoning_tokens },
          total_tokens: u.input_tokens + u.output_tokens,
        },
      },
    });
    res.end();
  }
}

/**
 * A fake API of its own for each test (`const api = await fresh()`), all stopped after the
 * file: a CLI a test started cannot reach the next test's log or rules.
 */
export function useFreshFakeOpenAI(): () => Promise<FakeOpenAI> {
  const started: FakeOpenAI[] = [];
  afterAll(async () => {
    await Promise.all(started.map((a) => a.stop()));
  });
  return async () => {
    const api = await new FakeOpenAI().start();
    started.push(api);
    return api;
  };
}
