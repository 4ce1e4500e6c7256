// What Claude Code's `Stop` and `Notification` hooks said, per session, in host state (DESIGN
// §14): the evidence the activity verdict reads (a turn that ended and what will wake it; an
// idle or permission prompt). One small file per session and event, replaced whole on every
// call, so the two hooks of one session never write over each other.
// Payload shapes as Claude Code 2.1.328 sends them (test/fixtures/claude-2.1.328/hook-stop.json,
// hook-notification-idle.json); Codex 0.171.0's Stop has the same keys a record keeps
// (`session_id`, `transcript_path`, `cwd`, `stop_hook_active`, `last_assistant_message`) plus
// `turn_id`, and no background tasks (test/fixtures/codex-0.171.0/hook-stop.json).
import { existsSync, readdirSync, readFileSync, statSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { writeFileAtomic } from "../util/fs.js";
import { ensureHostDir, hostDir } from "./host-state.js";

const HOOKS = "hooks";
/** Session ids are uuids; anything else is not used as a file name. */
const SESSION = /^[A-Za-z0-9-]{1,64}$/;
/** How much of a text is kept (a model's last message can be long). */
const TEXT_MAX = 200;
/** How many background tasks or crons are kept. */
const LIST_MAX = 10;
/** Records of sessions not heard from for a week are removed when a new session's is made. */
const KEEP_MS = 7 * 86_400_000;

export type HookKind = "stop" | "notification";

export interface StopRecord {
  at: string;
  session_id: string;
  transcript_path: string | null;
  cwd: string | null;
  stop_hook_active: boolean;
  /** Claude Code ≥ 2.1.145: what will wake the session (empty: nothing). Null: not sent. */
  background_tasks: unknown[] | null;
  session_crons: unknown[] | null;
  background_count: number;
  cron_count: number;
  last_assistant_message: string | null;
}

export interface NotificationRecord {
  at: string;
  session_id: string;
  transcript_path: string | null;
  cwd: string | null;
  /** `idle_prompt`, `permission_prompt`, …; null when the payload names none. */
  notification_type: string | null;
  message: string | null;
}

const str = (v: unknown): string | null => (typeof v === "string" && v !== "" ? v : null);
const cut = (v: unknown): string | null => {
  const s = str(v);
  return s === null ? null : s.length > TEXT_MAX ? `${s.slice(0, TEXT_MAX)}…` : s;
};
const list = (v: unknown): unknown[] | null => (Array.isArray(v) ? v.slice(0, LIST_MAX) : null);

/** The record a payload stands for, or null when it is not that hook's (or names no session). */
export function hookRecordOf(
  kind: HookKind,
  raw: unknown,
  now: number,
): StopRecord | NotificationRecord | null {
  if (!raw || typeof raw !== "object" || Array.isArray(raw)) return null;
  const o = raw as Record<string, unknown>;
  const event = str(o.hook_event_name);
  if (event !== null && event !== (kind === "stop" ? "Stop" : "Notification")) return null;
  const session_id = str(o.session_id);
  if (session_id === null || !SESSION.test(session_id)) return null;
  const base = {
    at: new Date(now).toISOString(),
    session_id,
    transcript_path: str(o.transcript_path),
    cwd: str(o.cwd),
  };
  if (kind === "notification")
    return { ...base, notification_type: str(o.notification_type), message: cut(o.message) };
  return {
    ...base,
    stop_hook_active: o.stop_hook_active === true,
    background_tasks: list(o.background_tasks),
    session_crons: list(o.session_crons),
    background_count: Array.isArray(o.background_tasks) ? o.background_tasks.length : 0,
    cron_count: Array.isArray(o.session_crons) ? o.session_crons.length : 0,
    last_assistant_message: cut(o.last_assistant_message),
  };
}

/**
 * The seat (CODEX_HOME) of a Codex rollout a Stop payload names: Codex 0.171.0 writes
 * `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<uuid>.jsonl`; null for anything else (a
 * Claude Code transcript).
 */
export function codexRolloutSeat(transcript: string | null): string | null {
  const m = transcript
    ? /^(\/.+)\/sessions\/\d{4}\/\d{2}\/\d{2}\/rollout-[^/]+\.jsonl$/.exec(transcript)
    : null;
  return m?.[1] ?? null;
}

function pathOf(dir: string, session: string, kind: HookKind): string {
  return join(dir, `${session}.${kind}.json`);
}

/** Writes the record (0600, atomically); a new session's first record prunes week-old ones. */
export function writeHookRecord(
  kind: HookKind,
  record: StopRecord | NotificationRecord,
  env: NodeJS.ProcessEnv = process.env,
): string {
  const dir = ensureHostDir(HOOKS, env); // checked (and made 0700 when absent)
  const path = pathOf(dir, record.session_id, kind);
  const fresh = !existsSync(path);
  writeFileAtomic(path, `${JSON.stringify(record)}\n`);
  if (fresh) prune(dir, Date.parse(record.at));
  return path;
}

function prune(dir: string, now: number): void {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    try {
      if (now - statSync(path).mtimeMs > KEEP_MS) unlinkSync(path);
    } catch {
      // removed meanwhile
    }
  }
}

/** A session's latest Stop and Notification records (null where none, or unreadable). */
export function readHookRecords(
  session: string,
  env: NodeJS.ProcessEnv = process.env,
): { stop: StopRecord | null; notification: NotificationRecord | null } {
  const dir = hostDir(HOOKS, env);
  const read = <T>(kind: HookKind): T | null => {
    if (!SESSION.test(session)) return null;
    try {
      const v = JSON.parse(readFileSync(pathOf(dir, session, kind), "utf8"));
      return v && typeof v === "object" && v.session_id === session ? (v as T) : null;
    } catch {
      return null;
    }
  };
  return { stop: read<StopRecord>("stop"), notification: read<NotificationRecord>("notification") };
}
