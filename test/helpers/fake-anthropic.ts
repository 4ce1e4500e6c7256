import { randomBytes } from "node:crypto";
import {
  createServer,
  type IncomingHttpHeaders,
  type Server,
  type ServerResponse,
} from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { afterAll, beforeAll } from "vitest";

// A scripted Anthropic Messages API on 127.0.0.1 for the real Claude Code CLI, and its HTTP(S)
// proxy: every CONNECT (and every absolute-URL request) is refused and logged, so nothing leaves
// the machine. The model side is a list of rules: each request goes to the first rule whose
// `when` matches and that has uses left; a request no rule takes gets a short text answer.
//
// The usage-limit headers Claude Code 2.1.328 reads (from `grep -a` on its native binary,
// @anthropic-ai/claude-code-linux-x64/claude; values as its own mock-limits code sets them):
//   anthropic-ratelimit-unified-status                allowed | allowed_warning | rejected
//   anthropic-ratelimit-unified-reset                 unix seconds (the representative limit's)
//   anthropic-ratelimit-unified-representative-claim  five_hour | seven_day | seven_day_opus |
//                                                     seven_day_sonnet | …
//   anthropic-ratelimit-unified-{5h,7d,7d_oi,overage}-utilization  a fraction, 0.3 = 30 %
//   anthropic-ratelimit-unified-{5h,7d,7d_oi,overage}-reset        unix seconds
//   anthropic-ratelimit-unified-{5h,7d,7d_oi}-status               allowed | allowed_warning | rejected
//   anthropic-ratelimit-unified-{5h,7d,…}-surpassed-threshold      a fraction
//   anthropic-ratelimit-unified-overage-{status,reset,disabled-reason,in-use,scope,period,…},
//   anthropic-ratelimit-unified-fallback, -upgrade-paths, -grace-*, -slow-* (not used here).
// Only a subscriber (CLAUDE_CODE_OAUTH_TOKEN) shows them as `rate_limits` in the statusline
// input; a response without `-status` is not read at all.

export interface Usage {
  input_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  output_tokens: number;
}

/** One request the server received, as tests read it back. */
export interface ApiRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  // biome-ignore lint/suspicious/noExplicitAny: the Messages API body, read loosely by tests
  body: any;
  /** What the server answered: a rule's name, "default", "count_tokens", "refused"… */
  answeredBy: string;
}

/** A view of a /v1/messages request for rules to match on. */
export interface Turn {
  req: ApiRequest;
  /** True for the main conversation (it offers tools); false for side calls (titles, …). */
  main: boolean;
  /** All text of the last user message (text blocks and tool_result contents). */
  lastUser: string;
  /** The last user message's tool_result contents, [] when it has none. */
  toolResults: string[];
  /** Every user message's text, joined: "the prompt contains …". */
  allUser: string;
}

export type Reply =
  | { text: string; usage?: Partial<Usage>; headers?: Record<string, string> }
  | {
      tool: { name: string; input: Record<string, unknown> };
      text?: string;
      usage?: Partial<Usage>;
      headers?: Record<string, string>;
    }
  | { status: number; error?: { type: string; message: string }; headers?: Record<string, string> };

export interface Rule {
  name?: string;
  /** Default: main-conversation requests only. */
  when?: (t: Turn) => boolean;
  /** How many requests it answers (default 1; Infinity for a standing rule). */
  times?: number;
  reply: Reply | ((t: Turn) => Reply);
}

/** A Bash tool call running `command`. */
export function bash(
  command: string,
  extra: { text?: string; usage?: Partial<Usage>; headers?: Record<string, string> } = {},
): Reply {
  return { tool: { name: "Bash", input: { command, description: "run it" } }, ...extra };
}

/** The error bodies the real API sends. */
export const ERRORS = {
  rateLimit: {
    type: "rate_limit_error",
    message: "This request would exceed your account's rate limit. Please try again later.",
  },
  overloaded: { type: "overloaded_error", message: "Overloaded" },
};

/** The unified headers of a subscriber at a five-hour limit that resets at `resetSec`. */
export function fiveHourLimitHeaders(resetSec: number, sevenDay = 0.4): Record<string, string> {
  return {
    "anthropic-ratelimit-unified-status": "rejected",
    "anthropic-ratelimit-unified-reset": String(resetSec),
    "anthropic-ratelimit-unified-representative-claim": "five_hour",
    "anthropic-ratelimit-unified-5h-status": "rejected",
    "anthropic-ratelimit-unified-5h-utilization": "1",
    "anthropic-ratelimit-unified-5h-reset": String(resetSec),
    "anthropic-ratelimit-unified-7d-status": "allowed",
    "anthropic-ratelimit-unified-7d-utilization": String(sevenDay),
    "anthropic-ratelimit-unified-7d-reset": String(resetSec + 3 * 86_400),
  };
}

/** Unified headers of an allowed request: 5h and 7d utilization as fractions. */
export function allowedHeaders(
  fiveHour: number,
  sevenDay: number,
  now = Date.now(),
): Record<string, string> {
  const s = Math.floor(now / 1000);
  return {
    "anthropic-ratelimit-unified-status": "allowed",
    "anthropic-ratelimit-unified-reset": String(s + 3600),
    "anthropic-ratelimit-unified-representative-claim": "five_hour",
    "anthropic-ratelimit-unified-5h-status": "allowed",
    "anthropic-ratelimit-unified-5h-utilization": String(fiveHour),
    "anthropic-ratelimit-unified-5h-reset": String(s + 3600),
    "anthropic-ratelimit-unified-7d-status": "allowed",
    "anthropic-ratelimit-unified-7d-utilization": String(sevenDay),
    "anthropic-ratelimit-unified-7d-reset": String(s + 4 * 86_400),
  };
}

const DEFAULT_USAGE: Usage = {
  input_tokens: 10,
  cache_creation_input_tokens: 0,
  cache_read_input_tokens: 0,
  output_tokens: 5,
};

// biome-ignore lint/suspicious/noExplicitAny: message content as sent
function textOf(content: any): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((b) => (b?.type === "text" ? b.text : b?.type === "tool_result" ? textOf(b.content) : ""))
    .join("\n");
}

function turnOf(req: ApiRequest): Turn {
  // biome-ignore lint/suspicious/noExplicitAny: message shapes as sent
  const users = ((req.body?.messages ?? []) as any[]).filter((m) => m.role === "user");
  const last = users.at(-1)?.content;
  const toolResults = Array.isArray(last)
    ? last.filter((b) => b?.type === "tool_result").map((b) => textOf(b.content))
    : [];
  return {
    req,
    main: Array.isArray(req.body?.tools) && req.body.tools.length > 0,
    lastUser: textOf(last),
    toolResults,
    allUser: users.map((m) => textOf(m.content)).join("\n"),
  };
}

/** The fake API and proxy. `rules` may be changed at any time; `requests` is the log. */
export class FakeAnthropic {
  rules: (Rule & { used: number })[] = [];
  readonly requests: ApiRequest[] = [];
  /** CONNECT targets and absolute URLs refused as a proxy. */
  readonly refused: string[] = [];
  port = 0;
  private server: Server | null = null;

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Adds rules after those already there. */
  script(...rules: Rule[]): this {
    for (const r of rules) this.rules.push({ ...r, used: 0 });
    return this;
  }

  /** Drops every rule and the logs. */
  reset(): void {
    this.rules = [];
    this.requests.length = 0;
    this.refused.length = 0;
    // A CLI the last test started (killed by now) may have a request on its way, already in
    // this process's socket buffers: it must not land in the new log nor use the new rules.
    this.generation++;
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
  }

  private generation = 0;
  private readonly sockets = new Set<Socket>();

  /** The /v1/messages requests of the main conversation, in order. */
  mainTurns(): Turn[] {
    return this.requests
      .filter((r) => r.path === "/v1/messages")
      .map(turnOf)
      .filter((t) => t.main);
  }

  /** Rules with uses left, by name (or index): what the CLI has not asked for yet. */
  pending(): string[] {
    return this.rules
      .map((r, i) => ({ r, i }))
      .filter(({ r }) => r.used < (r.times ?? 1) && (r.times ?? 1) !== Number.POSITIVE_INFINITY)
      .map(({ r, i }) => r.name ?? `#${i}`);
  }

  async start(): Promise<this> {
    const server = createServer((req, res) => {
      const generation = this.generation;
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        if (generation !== this.generation) return void req.socket.destroy();
        this.handle(req.method ?? "", req.url ?? "", req.headers, Buffer.concat(chunks), res);
      });
    });
    server.on("connection", (socket) => {
      this.sockets.add(socket);
      socket.on("close", () => this.sockets.delete(socket));
    });
    server.on("connect", (req, socket) => {
      this.refused.push(`CONNECT ${req.url}`);
      socket.end("HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n");
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
    s.closeAllConnections();
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
    const req: ApiRequest = { method, path, headers, body, answeredBy: "" };
    this.requests.push(req);
    if (path === "/v1/messages/count_tokens") {
      req.answeredBy = "count_tokens";
      const n = Math.ceil(raw.length / 4);
      res
        .writeHead(200, { "content-type": "application/json" })
        .end(JSON.stringify({ input_tokens: n }));
      return;
    }
    if (path !== "/v1/messages" || method !== "POST") {
      req.answeredBy = "404";
      res.writeHead(404, { "content-type": "application/json" });
      res.end(
        JSON.stringify({ type: "error", error: { type: "not_found_error", message: "Not found" } }),
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
    const requestId = `req_${randomBytes(12).toString("hex")}`;
    const headers = { "request-id": requestId, ...(reply.headers ?? {}) };
    if ("status" in reply) {
      const error = reply.error ?? (reply.status === 529 ? ERRORS.overloaded : ERRORS.rateLimit);
      res.writeHead(reply.status, { ...headers, "content-type": "application/json" });
      res.end(JSON.stringify({ type: "error", error, request_id: requestId }));
      return;
    }
    const usage: Usage = { ...DEFAULT_USAGE, ...(reply.usage ?? {}) };
    // biome-ignore lint/suspicious/noExplicitAny: content blocks
    const blocks: any[] = [];
    if (reply.text !== undefined && reply.text !== "")
      blocks.push({ type: "text", text: reply.text });
    if ("tool" in reply) {
      blocks.push({
        type: "tool_use",
        id: `toolu_${randomBytes(12).toString("hex")}`,
        name: reply.tool.name,
        input: reply.tool.input,
      });
    }
    const stopReason = "tool" in reply ? "tool_use" : "end_turn";
    const message = {
      id: `msg_${randomBytes(12).toString("hex")}`,
      type: "message",
      role: "assistant",
      model: req.body?.model ?? "claude-sonnet-4-5",
      content: blocks,
      stop_reason: stopReason,
      stop_sequence: null,
      usage,
    };
    if (req.body?.stream !== true) {
      res.writeHead(200, { ...headers, "content-type": "application/json" });
      res.end(JSON.stringify(message));
      return;
    }
    res.writeHead(200, {
      ...headers,
      "content-type": "text/event-stream",
      "cache-control": "no-cache",
    });
    const send = (type: string, data: object) =>
      res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
    send("message_start", {
      message: {
        ...message,
        content: [],
        stop_reason: null,
        usage: { ...usage, output_tokens: 1 },
      },
    });
    blocks.forEach((b, index) => {
      if (b.type === "text") {
        send("content_block_start", { index, content_block: { type: "text", text: "" } });
        send("content_block_delta", { index, delta: { type: "text_delta", text: b.text } });
      } else {
        send("content_block_start", { index, content_block: { ...b, input: {} } });
        send("content_block_delta", {
          index,
          delta: { type: "input_json_delta", partial_json: JSON.stringify(b.input) },
        });
      }
      send("content_block_stop", { index });
    });
    send("message_delta", { delta: { stop_reason: stopReason, stop_sequence: null }, usage });
    send("message_stop", {});
    res.end();
  }
}

/**
 * A fake API of its own for each test (`const api = await fresh()`), all stopped after the
 * file: a CLI a test started cannot reach the next test's log or rules, whatever it still sends.
 */
export function useFreshFakeAnthropic(): () => Promise<FakeAnthropic> {
  const started: FakeAnthropic[] = [];
  afterAll(async () => {
    await Promise.all(started.map((a) => a.stop()));
  });
  return async () => {
    const api = await new FakeAnthropic().start();
    started.push(api);
    return api;
  };
}

/** A fake API for the file: started before its tests, stopped after, rules cleared by `reset`. */
export function useFakeAnthropic(): FakeAnthropic {
  const api = new FakeAnthropic();
  beforeAll(async () => {
    await api.start();
  });
  afterAll(async () => {
    await api.stop();
  });
  return api;
}
