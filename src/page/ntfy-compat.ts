import { join } from "node:path";
import * as z from "zod/mini";
import { ensureHostDir, hostStateDir } from "../usage/host-state.js";
import { writeJsonAtomic } from "../util/fs.js";
import { readJsonFile } from "../util/json-file.js";
import { iso } from "../util/time.js";
import { type NtfyTarget, type Page, PageError, type Published, publish } from "./ntfy.js";

// What older ntfy servers refuse, and how a page still gets through to them. A server older
// than 2.17.0 knows no `copy` action and refuses the whole publish (400, code 40018, "parameter
// 'action' cannot be 'copy'", ntfy server/actions.go): the page is sent again without it, and
// the server is remembered (host state) so the next pages skip it without a refused request.
// Sequence ids need nothing here: a server older than 2.16.0 ignores the unknown field.

/** ntfy's "actions invalid" error code (server/errors.go errHTTPBadRequestActionsInvalid). */
export const NTFY_ACTIONS_INVALID = 40018;
/** How long a server is taken to lack `copy` before it is tried again (it may be upgraded). */
export const COPY_RETRY_AFTER_MS = 24 * 3600_000;
export const SERVERS_FILE = "ntfy-servers.json";

const serversSchema = z.object({
  servers: z.record(z.string(), z.object({ no_copy_at: z.string() })),
});
type Servers = z.infer<typeof serversSchema>;

function readServers(): Servers {
  // none yet, or unreadable: every server is taken to be current
  return readJsonFile(join(hostStateDir(), SERVERS_FILE), serversSchema) ?? { servers: {} };
}

/** The server refused a `copy` action (and nothing else in the publish). */
export function refusedCopy(err: unknown): boolean {
  return (
    err instanceof PageError &&
    err.answer?.status === 400 &&
    err.answer.code === NTFY_ACTIONS_INVALID &&
    err.message.includes("cannot be 'copy'")
  );
}

function knownWithoutCopy(server: string, now: number): boolean {
  const at = Date.parse(readServers().servers[server]?.no_copy_at ?? "");
  return Number.isFinite(at) && now - at < COPY_RETRY_AFTER_MS;
}

function rememberWithoutCopy(server: string, now: number): void {
  try {
    const all = readServers();
    all.servers[server] = { no_copy_at: iso(now) };
    writeJsonAtomic(join(ensureHostDir(""), SERVERS_FILE), all);
  } catch {
    // not remembered: the next page is refused once more and sent again, nothing is lost
  }
}

export function withoutCopy(page: Page): Page {
  const actions = page.actions?.filter((a) => a.action !== "copy");
  const { actions: _all, ...rest } = page;
  return actions?.length ? { ...rest, actions } : rest;
}

/** What went out: the answer, and whether the `copy` action had to be left off. */
export interface Delivered extends Published {
  copy_dropped?: true;
}

/**
 * Publishes a page to whatever ntfy version the server runs: a `copy` action a server refuses
 * (older than 2.17.0) is left off, once at the server's answer and then for a day without
 * asking. Throws PageError as `publish` does for every other failure.
 */
export async function publishPage(
  target: NtfyTarget,
  page: Page,
  token: string | null,
  now = Date.now(),
): Promise<Delivered> {
  const hasCopy = page.actions?.some((a) => a.action === "copy") === true;
  if (hasCopy && knownWithoutCopy(target.server, now))
    return { ...(await publish(target, withoutCopy(page), token)), copy_dropped: true };
  try {
    return await publish(target, page, token);
  } catch (err) {
    if (!hasCopy || !refusedCopy(err)) throw err;
    rememberWithoutCopy(target.server, now);
    return { ...(await publish(target, withoutCopy(page), token)), copy_dropped: true };
  }
}
