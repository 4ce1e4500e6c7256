import { readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import * as z from "zod/mini";
import { processInfo } from "../process/identity.js";
import { writeJsonAtomic } from "../util/fs.js";
import { readJsonFile } from "../util/json-file.js";
import { orElse } from "../util/lenient.js";
import { ensureHostDir, hostDir } from "./host-state.js";

/**
 * The statusline's session map (DESIGN §4): which transcript an agent process is writing.
 * One small file per agent pid (`sessions/<pid>.json`), so agents never race on one file;
 * the start time inside tells a reused pid apart.
 */
export interface SessionEntry {
  pid: number;
  start_time: string;
  transcript_path: string | null;
  session_id: string | null;
  cwd: string | null;
  seat: string;
  /** The session's context window as Claude Code last reported it (`hand_over_tokens: "auto"`). */
  context_window_size?: number | null;
  at: string;
}

const SESSIONS = "sessions";

const orNull = orElse(z.nullable(z.string()), null);

/**
 * A `sessions/<pid>.json` file. Without its pid and start time it names no process and is no
 * entry; every other field is dropped on its own when malformed: a path, session id or cwd
 * that is not a string reads as null (unknown), a context window that is not a positive number
 * as null (the default window), a seat or time that is not a string as "". Unknown keys are
 * dropped.
 */
const sessionSchema = z.object({
  pid: z.number(),
  start_time: z.string(),
  transcript_path: orNull,
  session_id: orNull,
  cwd: orNull,
  seat: orElse(z.string(), ""),
  context_window_size: orElse(
    z.optional(z.nullable(z.number().check(z.positive(), z.refine(Number.isFinite)))),
    null,
  ),
  at: orElse(z.string(), ""),
});

/** An entry; absent or torn by a hand edit: none. */
function read(path: string): SessionEntry | null {
  return readJsonFile(path, sessionSchema);
}

/**
 * Records an agent's session; rewrites the file only when what it says changed (the
 * statusline runs on every update). Returns whether it wrote.
 */
export function recordSession(entry: SessionEntry, env: NodeJS.ProcessEnv = process.env): boolean {
  const dir = ensureHostDir(SESSIONS, env); // checked (and made 0700 when absent)
  const path = join(dir, `${entry.pid}.json`);
  const old = read(path);
  // An update without a context window (an older Claude Code, a malformed field) keeps the last.
  if (entry.context_window_size == null && old?.start_time === entry.start_time)
    entry = { ...entry, context_window_size: old.context_window_size ?? null };
  if (
    old &&
    old.start_time === entry.start_time &&
    old.transcript_path === entry.transcript_path &&
    old.session_id === entry.session_id &&
    old.cwd === entry.cwd &&
    old.seat === entry.seat &&
    (old.context_window_size ?? null) === (entry.context_window_size ?? null)
  )
    return false;
  writeJsonAtomic(path, entry);
  if (!old) pruneDeadSessions(dir, entry.pid);
  return true;
}

/** Drops entries whose agent is gone or whose pid now names another process. */
function pruneDeadSessions(dir: string, keepPid: number): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    const m = /^(\d+)\.json$/.exec(name);
    if (!m || Number(m[1]) === keepPid) continue;
    const entry = read(join(dir, name));
    const info = processInfo(Number(m[1]));
    if (!entry || !info || info.state === "Z" || info.startTime !== entry.start_time)
      rmSync(join(dir, name), { force: true });
  }
}

/** The session recorded for exactly this process (pid and start time), or null. */
export function lookupSession(
  manager: { pid: number; start_time: string },
  env: NodeJS.ProcessEnv = process.env,
): SessionEntry | null {
  const entry = read(join(hostDir(SESSIONS, env), `${manager.pid}.json`));
  return entry && entry.start_time === manager.start_time ? entry : null;
}
