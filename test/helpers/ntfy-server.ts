import { randomBytes } from "node:crypto";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
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

/**
 * A real HTTP server on 127.0.0.1 that speaks ntfy's publish API: JSON publishing at `/`, the
 * body-and-headers form at `/<topic>`. It records what arrives, can require a token (401
 * without), fail on purpose (500), stop and start again on the same port, and counts GETs to
 * `/hc/...` (a healthchecks.io-style heartbeat URL).
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
  port = 0;
  private server: Server | null = null;

  /** Forgets what arrived and drops every failure mode a test set. */
  reset(): void {
    this.received.length = 0;
    this.heartbeats.length = 0;
    this.token = null;
    this.failWith = null;
    this.echoAuthInErrors = false;
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
    if (method !== "POST" && method !== "PUT") {
      send(404, { code: 40401, http: 404, error: "page not found" });
      return;
    }
    const body = Buffer.concat(chunks).toString("utf8");
    let msg: Omit<Received, "headers" | "status" | "id" | "path" | "url">;
    if (path === "/") {
      let j: Record<string, unknown>;
      try {
        j = JSON.parse(body);
      } catch {
        send(400, { code: 40024, http: 400, error: "invalid request: request body must be JSON" });
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
    } else {
      const tags = header(headers, "X-Tags", "Tags", "Tag", "ta");
      msg = {
        via: "headers",
        topic: path.slice(1),
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
      id: randomBytes(9).toString("base64url").slice(0, 12),
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
    send(200, {
      id: record.id,
      time: Math.floor(Date.now() / 1000),
      expires: Math.floor(Date.now() / 1000) + 43200,
      event: "message",
      topic: record.topic,
      title: record.title,
      message: record.message,
      priority: record.priority,
      tags: record.tags,
    });
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
