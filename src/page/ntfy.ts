import { readFileSync, statSync } from "node:fs";
import { UsageError } from "../errors.js";

/** What one page carries (ntfy's JSON publishing fields, DESIGN §8). */
export interface Page {
  title: string;
  message: string;
  /** 1 min, 2 low, 3 default, 4 high, 5 urgent. */
  priority: 1 | 2 | 3 | 4 | 5;
  /** ntfy tags; emoji shortcodes (`rotating_light`) show as emoji. */
  tags: string[];
  /**
   * ntfy's sequence id (2.16+): a later message with the same one replaces this notification in
   * place. An older server drops the unknown field: the phone shows a second message.
   */
  sequence_id?: string;
  /** Action buttons (ntfy allows 3). */
  actions?: PageAction[];
}

/**
 * An action button as ntfy's JSON publishing takes it (docs/publish.md "Action buttons"):
 * `copy` (2.17+: copies `value` to the clipboard) or `http` (the app sends the request itself).
 */
export type PageAction =
  | { action: "copy"; label: string; value: string; clear?: boolean }
  | {
      action: "http";
      label: string;
      url: string;
      method: "POST";
      body: string;
      headers?: Record<string, string>;
      clear?: boolean;
    };

export interface NtfyTarget {
  server: string;
  topic: string;
  token_env?: string | undefined;
  token_file?: string | undefined;
}

/** The server's answer to a publish that succeeded. */
export interface Published {
  status: number;
  id: string | null;
}

export const PUBLISH_TIMEOUT_MS = 10_000;
export const HEARTBEAT_TIMEOUT_MS = 5_000;

/** A page that did not get through: the message names the server, never the token. */
export class PageError extends Error {
  constructor(
    message: string,
    /** The server's answer, when it gave one: its HTTP status and ntfy's error `code`. */
    readonly answer: { status: number; code: number | null } | null = null,
  ) {
    super(message);
    this.name = "PageError";
  }

  /** The HTTP status the server answered, or null (no answer: down, timed out, a bad token file). */
  get status(): number | null {
    return this.answer?.status ?? null;
  }

  /**
   * A 4xx that sending again cannot cure (a bad token, a refused topic, a body too large): not
   * retried (DESIGN §18). 408, 425 and 429 say "later", and are.
   */
  get permanent(): boolean {
    const s = this.status;
    return s !== null && s >= 400 && s < 500 && ![408, 425, 429].includes(s);
  }
}

/** ntfy's error `code` (`{"code":40018,"http":400,…}`, server/errors.go), or null. */
function ntfyCode(text: string): number | null {
  try {
    const code = (JSON.parse(text) as { code?: unknown }).code;
    return typeof code === "number" ? code : null;
  } catch {
    return null;
  }
}

/**
 * The access token, if one is configured: the value of `token_env`, else the first line of
 * `token_file`, which must be readable by its owner alone (a token is a password).
 * Throws UsageError (a config problem) naming the variable or file; never the token.
 */
export function readToken(target: NtfyTarget, env = process.env): string | null {
  if (target.token_env) {
    const value = env[target.token_env]?.trim();
    if (value) return value;
    if (!target.token_file)
      throw new UsageError(
        `page.ntfy.token_env: the environment variable ${target.token_env} is not set or empty`,
      );
  }
  if (!target.token_file) return null;
  const file = target.token_file;
  let mode: number;
  try {
    mode = statSync(file).mode & 0o777;
  } catch (err) {
    throw new UsageError(`page.ntfy.token_file: cannot read ${file}: ${(err as Error).message}`);
  }
  if (mode & 0o077) {
    const octal = mode.toString(8).padStart(4, "0");
    throw new UsageError(
      `page.ntfy.token_file: ${file} has mode ${octal}; a token file must be 0600 (fix with: chmod 600 ${file})`,
    );
  }
  const token = readFileSync(file, "utf8").split("\n")[0]?.trim() ?? "";
  if (!token) throw new UsageError(`page.ntfy.token_file: ${file} is empty`);
  return token;
}

/** Replaces every occurrence of the token in a text (error messages, server answers). */
export function scrub(text: string, token: string | null): string {
  if (!token) return text;
  return text.split(token).join("[token]");
}

/** The server's root URL, where ntfy takes JSON publishing. */
export function publishUrl(server: string): string {
  return `${server.replace(/\/+$/, "")}/`;
}

export function describeNetworkError(err: unknown): string {
  const e = err as Error & { cause?: { code?: string; message?: string } };
  if (e?.name === "TimeoutError" || e?.name === "AbortError") return "timed out";
  const cause = e?.cause;
  if (cause?.message)
    return cause.code && !cause.message.includes(cause.code)
      ? `${cause.code}: ${cause.message}`
      : cause.message;
  if (cause?.code) return cause.code;
  return e?.message ?? String(err);
}

/**
 * Publishes one page through ntfy's JSON publishing API (POST to the server root), so titles
 * and messages travel in the UTF-8 body: HTTP headers are bytes, and non-ASCII text (`·`, `—`)
 * in a Title header is refused or mangled. Throws PageError on a network error or a non-2xx
 * answer; the token goes only into the Authorization header and is scrubbed from every error.
 */
export async function publish(
  target: NtfyTarget,
  page: Page,
  token: string | null,
  timeoutMs = PUBLISH_TIMEOUT_MS,
): Promise<Published> {
  const url = publishUrl(target.server);
  const headers: Record<string, string> = { "Content-Type": "application/json" };
  if (token) headers.Authorization = `Bearer ${token}`;
  const body = JSON.stringify({
    topic: target.topic,
    title: page.title,
    message: page.message,
    priority: page.priority,
    tags: page.tags,
    ...(page.sequence_id ? { sequence_id: page.sequence_id } : {}),
    ...(page.actions?.length ? { actions: page.actions } : {}),
  });
  let res: Response;
  try {
    res = await fetch(url, {
      method: "POST",
      headers,
      body,
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (err) {
    throw new PageError(scrub(`ntfy server ${target.server}: ${describeNetworkError(err)}`, token));
  }
  let text = "";
  try {
    text = await res.text();
  } catch {
    // The status line is what matters; a body cut short changes nothing.
  }
  if (!res.ok) {
    const detail = text.trim().replace(/\s+/g, " ").slice(0, 300);
    throw new PageError(
      scrub(
        `ntfy server ${target.server} answered ${res.status}${res.statusText ? ` ${res.statusText}` : ""}${detail ? `: ${detail}` : ""}`,
        token,
      ),
      { status: res.status, code: ntfyCode(text) },
    );
  }
  let id: string | null = null;
  try {
    const answer = JSON.parse(text) as { id?: unknown };
    if (typeof answer.id === "string") id = answer.id;
  } catch {
    // A 2xx without ntfy's JSON answer still delivered; there is just no id to report.
  }
  return { status: res.status, id };
}

/**
 * Requests the watchdog's own heartbeat URL (healthchecks.io style: a service that pages when
 * the pings stop). Resolves to null on success, else why it failed.
 */
export async function pingHeartbeat(
  url: string,
  timeoutMs = HEARTBEAT_TIMEOUT_MS,
): Promise<string | null> {
  try {
    const res = await fetch(url, { method: "GET", signal: AbortSignal.timeout(timeoutMs) });
    await res.arrayBuffer().catch(() => undefined);
    if (!res.ok)
      return `${shownUrl(url)} answered ${res.status}${res.statusText ? ` ${res.statusText}` : ""}`;
    return null;
  } catch (err) {
    return `${shownUrl(url)}: ${scrubUrl(describeNetworkError(err), url)}`;
  }
}

/**
 * A heartbeat URL as it may be journaled or printed (DESIGN §18): its origin, the path (the
 * check's secret key) left out.
 */
export function shownUrl(url: string): string {
  try {
    const u = new URL(url);
    return u.pathname === "/" && !u.search ? u.origin : `${u.origin}/…`;
  } catch {
    return "(an invalid URL)";
  }
}

/** A network error's text without the URL in it, should Node's message ever quote it. */
function scrubUrl(text: string, url: string): string {
  return text.split(url).join(shownUrl(url));
}
