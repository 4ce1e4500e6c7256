// Where a Codex manager's rollout is (DESIGN §19): the one its Stop hook recorded for the
// manager's process (`sheepdog hook stop` writes the session map), else the newest rollout
// under `$CODEX_HOME/sessions/YYYY/MM/DD/` whose first line (`session_meta`) names the program
// root as its cwd and that was written since the claim. Codex 0.171.0 names the files
// `rollout-<local time>-<session uuid>.jsonl`; `session_meta` is ~27 KB (the base
// instructions), its `cwd` within the first few hundred bytes.
import { closeSync, openSync, readdirSync, readSync, realpathSync, statSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { lookupSession } from "../../usage/sessions.js";
import type { TranscriptQuery } from "../agent.js";

/** How much of a rollout's first line is read to find its cwd. */
const HEAD_BYTES = 16 * 1024;
/** Day folders looked at before the one `since` falls in (the folder's date is local time). */
const DAY_SLACK_MS = 36 * 3_600_000;
/** Without a `since`, how many of the newest day folders are looked at. */
const NEWEST_DAYS = 2;
/** Clock slack between our clock and file times. */
const SLACK_MS = 2_000;

const ROLLOUT =
  /^rollout-.+-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl$/;

/** The session uuid a rollout's file name ends in, or null for another file. */
export function rolloutSession(path: string): string | null {
  return ROLLOUT.exec(basename(path))?.[1] ?? null;
}

/** Whether a path is a rollout file under this seat's sessions folder. */
export function isRolloutOf(seat: string, path: string): boolean {
  return (
    resolve(path).startsWith(`${join(resolve(seat), "sessions")}/`) && rolloutSession(path) !== null
  );
}

function realPath(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return resolve(path);
  }
}

function names(dir: string, re: RegExp): string[] {
  try {
    return readdirSync(dir)
      .filter((n) => re.test(n))
      .sort()
      .reverse();
  } catch {
    return [];
  }
}

/** The first bytes of a file, as text. */
function head(path: string): string {
  const fd = openSync(path, "r");
  try {
    const buf = Buffer.allocUnsafe(HEAD_BYTES);
    const n = readSync(fd, buf, 0, HEAD_BYTES, 0);
    return buf.toString("utf8", 0, n);
  } finally {
    closeSync(fd);
  }
}

/** A JSON string value named `key` in a JSON text's head (the first occurrence), or null. */
function stringField(text: string, key: string): string | null {
  const m = new RegExp(`"${key}"\\s*:\\s*("(?:[^"\\\\]|\\\\.)*")`).exec(text);
  if (!m?.[1]) return null;
  try {
    return JSON.parse(m[1]) as string;
  } catch {
    return null;
  }
}

/**
 * What a rollout's `session_meta` says: its cwd, and whether it is a person's (or sheepdog's)
 * thread rather than a sub-agent's (`thread_source` "user", or absent in older versions).
 */
export function sessionMetaOf(path: string): { cwd: string; main: boolean } | null {
  let text: string;
  try {
    text = head(path);
  } catch {
    return null;
  }
  const nl = text.indexOf("\n");
  const first = nl >= 0 ? text.slice(0, nl) : text;
  if (!/"type"\s*:\s*"session_meta"/.test(first.slice(0, 200))) return null;
  const cwd = stringField(first, "cwd");
  if (cwd === null) return null;
  const source = stringField(first, "thread_source");
  return { cwd, main: source === null || source === "user" };
}

/** The `YYYY/MM/DD` folders to look in, newest first: from `since`'s day (less slack) on. */
function dayFolders(sessions: string, since: number | undefined): string[] {
  const out: string[] = [];
  const floor = since === undefined ? null : new Date(since - DAY_SLACK_MS);
  const key = (y: string, m: string, d: string) => `${y}${m}${d}`;
  const floorKey = floor
    ? key(
        String(floor.getUTCFullYear()),
        String(floor.getUTCMonth() + 1).padStart(2, "0"),
        String(floor.getUTCDate()).padStart(2, "0"),
      )
    : null;
  for (const y of names(sessions, /^\d{4}$/))
    for (const m of names(join(sessions, y), /^\d{2}$/))
      for (const d of names(join(sessions, y, m), /^\d{2}$/)) {
        if (floorKey !== null && key(y, m, d) < floorKey) return out;
        out.push(join(sessions, y, m, d));
        if (floorKey === null && out.length >= NEWEST_DAYS) return out;
      }
  return out;
}

/** The rollouts of `root` on this seat written since `since` (epoch ms), newest first. */
export function rolloutsOf(seat: string, root: string, since?: number, most = 1): string[] {
  const want = realPath(root);
  const found: { path: string; mtime: number }[] = [];
  for (const dir of dayFolders(join(seat, "sessions"), since))
    for (const name of names(dir, ROLLOUT)) {
      const path = join(dir, name);
      try {
        const st = statSync(path);
        if (!st.isFile()) continue;
        if (since !== undefined && st.mtimeMs < since - SLACK_MS) continue;
        found.push({ path, mtime: st.mtimeMs });
      } catch {
        // removed meanwhile
      }
    }
  found.sort((a, b) => b.mtime - a.mtime);
  const out: string[] = [];
  for (const f of found) {
    const meta = sessionMetaOf(f.path);
    if (meta?.main && realPath(meta.cwd) === want) out.push(f.path);
    if (out.length >= most) break;
  }
  return out;
}

/** The newest rollout of `root` on this seat written since `since` (epoch ms), or null. */
export function newestRollout(seat: string, root: string, since?: number): string | null {
  return rolloutsOf(seat, root, since)[0] ?? null;
}

/** The manager's rollout (see the file's head). */
export function findRollout(seat: string, q: TranscriptQuery): string | null {
  if (q.manager) {
    const entry = lookupSession(q.manager, q.env);
    const path = entry?.transcript_path;
    if (path && isRolloutOf(seat, path)) {
      try {
        if (statSync(path).isFile()) return path;
      } catch {
        // recorded but gone: look for the newest
      }
    }
  }
  return newestRollout(seat, q.root, q.since);
}
