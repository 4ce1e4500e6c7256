// Whether a prompt reached the agent, judged by its transcript rather than by Herdr's status
// hints: a first prompt can be swallowed by Claude Code's folder-trust dialog while the pane
// still looks busy.
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { projectDirOf, readTail } from "../usage/transcript.js";

/** How much of a transcript's end is read: the prompt is among its newest lines. */
const TAIL_BYTES = 1024 * 1024;
/** How many of the newest transcripts are looked at. */
const NEWEST_FILES = 3;
/** Clock slack between our clock and the file/entry times. */
const SLACK_MS = 2_000;

export { projectDirOf };

/** The last `bytes` of a file as complete lines (a cut first line is dropped). */
export function tailLines(path: string, bytes = TAIL_BYTES): string[] {
  return readTail(path, bytes)
    .split("\n")
    .filter((l) => l.trim() !== "");
}

/** The text a person (or sheepdog) typed, from a transcript line; null for anything else. */
export function userText(line: string): { text: string; at: number } | null {
  let entry: unknown;
  try {
    entry = JSON.parse(line);
  } catch {
    return null;
  }
  if (typeof entry !== "object" || entry === null) return null;
  const e = entry as {
    type?: unknown;
    isSidechain?: unknown;
    timestamp?: unknown;
    message?: { content?: unknown };
  };
  if (e.type !== "user" || e.isSidechain === true) return null;
  const content = e.message?.content;
  let text: string | null = null;
  if (typeof content === "string") text = content;
  else if (Array.isArray(content))
    text = content
      .map((part) =>
        part && typeof part === "object" && (part as { type?: unknown }).type === "text"
          ? String((part as { text?: unknown }).text ?? "")
          : "",
      )
      .join("\n");
  if (text === null) return null;
  const at = typeof e.timestamp === "string" ? Date.parse(e.timestamp) : Number.NaN;
  return { text, at };
}

/** The newest `*.jsonl` transcripts of a project folder written since `sinceMs`, newest first. */
function recentTranscripts(dir: string, sinceMs: number): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const found: { path: string; mtime: number }[] = [];
  for (const name of names) {
    if (!name.endsWith(".jsonl")) continue;
    const path = join(dir, name);
    try {
      const st = statSync(path);
      if (st.isFile() && st.mtimeMs >= sinceMs - SLACK_MS) found.push({ path, mtime: st.mtimeMs });
    } catch {
      // removed meanwhile
    }
  }
  return found
    .sort((a, b) => b.mtime - a.mtime)
    .slice(0, NEWEST_FILES)
    .map((f) => f.path);
}

/**
 * Whether a user entry containing `prompt`, written since `sinceMs`, is in one of the newest
 * transcripts under `<seat>/projects/<project folder of cwd>/`; `env` decides the folder's name
 * (pass `managerTranscriptEnv` of the manager's `manager.env`).
 */
export function promptArrived(
  seat: string,
  cwd: string,
  prompt: string,
  sinceMs: number,
  env: NodeJS.ProcessEnv = process.env,
): boolean {
  const wanted = prompt.trim();
  for (const path of recentTranscripts(projectDirOf(seat, cwd, env), sinceMs)) {
    let lines: string[];
    try {
      lines = tailLines(path);
    } catch {
      continue;
    }
    for (let i = lines.length - 1; i >= 0; i--) {
      const entry = userText(lines[i] as string);
      if (entry === null || !entry.text.includes(wanted)) continue;
      if (Number.isNaN(entry.at) || entry.at >= sinceMs - SLACK_MS) return true;
    }
  }
  return false;
}

export interface ArrivalWait {
  seat: string;
  cwd: string;
  prompt: string;
  sinceMs: number;
  timeoutMs: number;
  /** Decides the transcript folder's name (`managerTranscriptEnv` of `manager.env`). */
  env?: NodeJS.ProcessEnv;
  /** Other proof that the prompt arrived, looked at on every poll (the manager's claim). */
  otherwise?: () => boolean;
  /** The agent's own look at its transcripts (a Codex rollout), instead of Claude's folder. */
  check?: () => boolean;
  pollMs?: number;
}

/**
 * Polls `promptArrived` (and `otherwise`) until one holds or `timeoutMs` has passed: which
 * one held, or null.
 */
export async function waitForArrival(w: ArrivalWait): Promise<"transcript" | "otherwise" | null> {
  const deadline = Date.now() + w.timeoutMs;
  const pollMs = w.pollMs ?? 250;
  for (;;) {
    const found = w.check ? w.check() : promptArrived(w.seat, w.cwd, w.prompt, w.sinceMs, w.env);
    if (found) return "transcript";
    if (w.otherwise?.()) return "otherwise";
    if (Date.now() >= deadline) return null;
    await new Promise((r) => setTimeout(r, Math.min(pollMs, Math.max(1, deadline - Date.now()))));
  }
}
