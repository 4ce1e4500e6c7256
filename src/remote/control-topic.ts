import { join } from "node:path";
import * as z from "zod/mini";
import { describeNetworkError, publishUrl, scrub } from "../page/ntfy.js";
import { writeJsonAtomic } from "../util/fs.js";
import { readJsonFile } from "../util/json-file.js";

// Reading the control topic (DESIGN §8): nothing listens on a port; every tick polls ntfy
// (`GET /<topic>/json?poll=1&since=<last id>`, docs/subscribe/api.md) and `watch` streams it
// (stream.ts). The last id seen is kept in the program's state folder.

export const POLL_TIMEOUT_MS = 5000;
/** What one answer may hold: a poll of a topic in a flood is cut here. */
const MAX_BYTES = 1 << 20;
const MAX_LINES = 500;

/** One message of the topic, as ntfy prints it (model.Message; other events are skipped). */
export interface ControlMessage {
  id: string;
  time: number;
  message: string;
}

const lineSchema = z.object({
  id: z.string().check(z.regex(/^[A-Za-z0-9]{1,64}$/)),
  time: z.number(),
  event: z.string(),
  message: z.optional(z.string().check(z.maxLength(4096))),
});

/** The `message` events of an answer's lines; anything else (open, keepalive, junk) is skipped. */
export function messagesOf(lines: Iterable<string>): ControlMessage[] {
  const out: ControlMessage[] = [];
  for (const line of lines) {
    if (!line.trim()) continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      continue;
    }
    const m = lineSchema.safeParse(parsed);
    if (!m.success || m.data.event !== "message") continue;
    out.push({ id: m.data.id, time: m.data.time, message: m.data.message ?? "" });
    if (out.length >= MAX_LINES) break;
  }
  return out;
}

export interface ControlTarget {
  server: string;
  topic: string;
}

/** `<server>/<topic>/json`, with the query a poll or a stream asks. */
export function subscribeUrl(t: ControlTarget, query: Record<string, string>): string {
  const q = new URLSearchParams(query).toString();
  return `${publishUrl(t.server)}${t.topic}/json?${q}`;
}

/**
 * One GET, its status and at most MAX_BYTES of its body, within `timeoutMs`. node:http rather
 * than fetch: every tick of a program with a control topic polls, and loading fetch's HTTP
 * client costs a tick more than the request does.
 */
async function getText(
  url: string,
  headers: Record<string, string>,
  timeoutMs: number,
): Promise<{ status: number; text: string }> {
  const { request } = url.startsWith("https:")
    ? await import("node:https")
    : await import("node:http");
  return new Promise((resolve, reject) => {
    const req = request(url, { headers, signal: AbortSignal.timeout(timeoutMs) }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on("data", (c: Buffer) => {
        if (size >= MAX_BYTES) return;
        chunks.push(c);
        size += c.length;
        if (size >= MAX_BYTES) res.destroy(); // enough: the rest is not read
      });
      const done = () =>
        resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") });
      res.on("end", done);
      res.on("close", done);
      res.on("error", (err) => (size >= MAX_BYTES ? done() : reject(err)));
    });
    req.on("error", reject);
    req.end();
  });
}

/** A control topic that could not be read: says the server and how, never the token. */
export class ControlReadError extends Error {}

/**
 * The messages stored after `since` (an id; none yet: all the server keeps). An id the server no
 * longer knows answers everything it keeps (ntfy's message cache): the caller tolerates seeing
 * a message twice.
 */
export async function pollControl(
  t: ControlTarget,
  since: string | null,
  token: string | null,
  timeoutMs = POLL_TIMEOUT_MS,
): Promise<ControlMessage[]> {
  const url = subscribeUrl(t, { poll: "1", since: since ?? "all" });
  const headers: Record<string, string> = {};
  if (token) headers.Authorization = `Bearer ${token}`;
  let res: { status: number; text: string };
  try {
    res = await getText(url, headers, timeoutMs);
  } catch (err) {
    throw new ControlReadError(
      scrub(`ntfy server ${t.server}, topic ${t.topic}: ${describeNetworkError(err)}`, token),
    );
  }
  const text = res.text;
  if (res.status < 200 || res.status > 299)
    throw new ControlReadError(
      scrub(
        `ntfy server ${t.server}, topic ${t.topic}: answered ${res.status}: ${text.trim().replace(/\s+/g, " ").slice(0, 200)}`,
        token,
      ),
    );
  return messagesOf(text.slice(0, MAX_BYTES).split("\n"));
}

/** `<state>/control-topic.json`: where the last read ended, and the last failure to read. */
export const CONTROL_STATE = "control-topic.json";

export interface ControlState {
  server: string;
  topic: string;
  last_id: string | null;
  /** The last read's failure, journaled once while it lasts. */
  error: string | null;
}

const stateSchema = z.object({
  server: z.string(),
  topic: z.string(),
  last_id: z.nullable(z.string().check(z.regex(/^[A-Za-z0-9]{1,64}$/))),
  error: z.nullable(z.string()),
});

/** The state for this server and topic; a file for another one (the config changed) is none. */
export function readControlState(stateDir: string, t: ControlTarget): ControlState {
  const none: ControlState = { server: t.server, topic: t.topic, last_id: null, error: null };
  const s = readJsonFile(join(stateDir, CONTROL_STATE), stateSchema);
  return s && s.server === t.server && s.topic === t.topic ? s : none;
}

export function writeControlState(stateDir: string, s: ControlState): void {
  writeJsonAtomic(join(stateDir, CONTROL_STATE), s);
}
