// Reading a Claude Code transcript (JSONL) from its end (DESIGN §4): the cost must not grow
// with the transcript's size, and a 20 MB tool result must never be parsed or held whole.
import { closeSync, fstatSync, openSync, readdirSync, readSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { type BackLine, linesBackward } from "./backward.js";
import { parseRefusal } from "./refusal.js";
import { lookupSession } from "./sessions.js";

/** A usage-limit refusal record found at the end of a transcript. */
export interface Refusal {
  /** The refusal's text, e.g. `Claude AI usage limit reached|1763028000`. */
  text: string;
  /** When the limit resets (epoch seconds), or null when the text names no time. */
  resets_at: number | null;
  /** The entry's own timestamp (ISO), when it has one. */
  at: string | null;
  /** The window the text speaks of (weekly texts: `seven_day`); five_hour when absent. */
  window?: "five_hour" | "seven_day";
}

/** A cheap look at a line's head: could this be an assistant entry at all? */
const ASSISTANT_HEAD = /"(?:type|role)"\s*:\s*"assistant"/;

interface Usage {
  input_tokens?: unknown;
  cache_creation_input_tokens?: unknown;
  cache_read_input_tokens?: unknown;
}

type Kind =
  | { kind: "real"; tokens: number | null }
  | { kind: "synthetic"; text: string; timestamp: string | null }
  | { kind: "other" };

/** A token count: a finite number ≥ 0 (a negative or NaN one from a damaged line counts as 0). */
function num(v: unknown): number {
  return typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : 0;
}

function tokensOf(usage: Usage | undefined | null): number | null {
  if (!usage || typeof usage !== "object" || typeof usage.input_tokens !== "number") return null;
  return (
    num(usage.input_tokens) +
    num(usage.cache_creation_input_tokens) +
    num(usage.cache_read_input_tokens)
  );
}

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((b) => (b && typeof b === "object" && typeof b.text === "string" ? b.text : ""))
    .filter(Boolean)
    .join("\n");
}

/**
 * The last balanced JSON object after `"usage":` in an over-sized line's tail (the usage
 * block sits at the end of the message object, after the content).
 */
function usageFromTail(tail: string): Usage | null {
  const at = tail.lastIndexOf('"usage":');
  if (at < 0) return null;
  const open = tail.indexOf("{", at);
  if (open < 0) return null;
  let depth = 0;
  let inString = false;
  for (let i = open; i < tail.length; i++) {
    const c = tail[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === "{") depth++;
    else if (c === "}" && --depth === 0) {
      try {
        return JSON.parse(tail.slice(open, i + 1)) as Usage;
      } catch {
        return null;
      }
    }
  }
  return null;
}

/** What a line is, as far as main-thread context and refusals go. */
function classify(line: BackLine): Kind {
  if (!ASSISTANT_HEAD.test(line.head.slice(0, 8192))) return { kind: "other" };
  if (line.text === null) {
    // An over-sized assistant line (e.g. a huge Write input): judge it by its two ends.
    if (/"isSidechain"\s*:\s*true/.test(line.head)) return { kind: "other" };
    if (
      /"model"\s*:\s*"<synthetic>"/.test(line.head) ||
      /"isApiErrorMessage"\s*:\s*true/.test(line.tail.slice(-4096))
    )
      return { kind: "other" }; // API error texts are short: a huge one is not a refusal
    const tokens = tokensOf(usageFromTail(line.tail));
    return tokens === null ? { kind: "other" } : { kind: "real", tokens };
  }
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(line.text);
  } catch {
    return { kind: "other" }; // a torn line
  }
  if (!entry || typeof entry !== "object" || entry.type !== "assistant") return { kind: "other" };
  if (entry.isSidechain === true) return { kind: "other" };
  const message = (entry.message ?? {}) as Record<string, unknown>;
  if (entry.isApiErrorMessage === true || message.model === "<synthetic>") {
    return {
      kind: "synthetic",
      text: textOf(message.content),
      timestamp: typeof entry.timestamp === "string" ? entry.timestamp : null,
    };
  }
  return { kind: "real", tokens: tokensOf(message.usage as Usage) };
}

/** Context tokens of the last main-thread assistant message, read backwards from the end. */
export function contextTokensOf(path: string): number | null {
  try {
    for (const line of linesBackward(path)) {
      const k = classify(line);
      if (k.kind === "real" && k.tokens !== null) return k.tokens;
    }
  } catch {
    // unreadable or vanished: no figure
  }
  return null;
}

/** The folder Claude Code keeps a working directory's transcripts in, under a seat. */
export function projectDirOf(seat: string, cwd: string): string {
  return join(seat, "projects", resolve(cwd).replace(/[^a-zA-Z0-9]/g, "-"));
}

/** The newest `*.jsonl` directly in a folder (sub-agents' files live one level deeper). */
function newestJsonl(dir: string): string | null {
  let best: string | null = null;
  let bestTime = -1;
  let names: import("node:fs").Dirent[];
  try {
    names = readdirSync(dir, { withFileTypes: true });
  } catch {
    return null;
  }
  for (const d of names) {
    if (!d.name.endsWith(".jsonl") || !(d.isFile() || d.isSymbolicLink())) continue;
    const path = join(dir, d.name);
    try {
      const st = statSync(path);
      if (!st.isFile()) continue;
      if (st.mtimeMs > bestTime) {
        bestTime = st.mtimeMs;
        best = path;
      }
    } catch {
      // vanished meanwhile
    }
  }
  return best;
}

/**
 * The manager's transcript (DESIGN §4): explicit path; else the statusline's session map for
 * the manager's pid + start time; else the newest `*.jsonl` directly in the seat's project
 * folder for `cwd` (never a sub-agent's file).
 */
export function findTranscript(opts: {
  seat: string;
  cwd: string;
  manager?: { pid: number; start_time: string };
  explicit?: string;
  env?: NodeJS.ProcessEnv;
}): string | null {
  if (opts.explicit) return resolve(opts.explicit);
  if (opts.manager) {
    const entry = lookupSession(opts.manager, opts.env);
    if (entry?.transcript_path) {
      try {
        if (statSync(entry.transcript_path).isFile()) return entry.transcript_path;
      } catch {
        // recorded but gone: fall through to the project folder
      }
    }
  }
  return newestJsonl(projectDirOf(opts.seat, opts.cwd));
}

/** The last `maxBytes` of a file as text (from a line start where possible), for evidence. */
export function readTail(path: string, maxBytes: number): string {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch {
    return "";
  }
  try {
    const size = fstatSync(fd).size;
    const length = Math.max(0, Math.min(size, Math.floor(maxBytes)));
    const buf = Buffer.allocUnsafe(length);
    let got = 0;
    while (got < length) {
      const n = readSync(fd, buf, got, length - got, size - length + got);
      if (n === 0) break;
      got += n;
    }
    let start = 0;
    if (length < size) {
      // Started mid-file: begin at the next line, unless that would leave nothing.
      const nl = buf.indexOf(0x0a);
      if (nl >= 0 && nl < got - 1) start = nl + 1;
    }
    return buf.toString("utf8", start, got);
  } finally {
    closeSync(fd);
  }
}

/**
 * A usage-limit refusal at the end of the transcript, or null (a 75 % warning is never one):
 * the latest main-thread API-error / synthetic entry after the last real assistant message
 * whose text is a limit.
 */
export function refusalAtEnd(path: string, localZone?: string): Refusal | null {
  try {
    for (const line of linesBackward(path)) {
      const k = classify(line);
      if (k.kind === "real") return null;
      if (k.kind !== "synthetic") continue;
      const entryTime = k.timestamp ? Date.parse(k.timestamp) : Date.now();
      const parsed = parseRefusal(
        k.text,
        Number.isFinite(entryTime) ? entryTime : Date.now(),
        localZone,
      );
      if (parsed)
        return {
          text: k.text,
          resets_at: parsed.resets_at,
          at: k.timestamp,
          window: parsed.window,
        };
    }
  } catch {
    // unreadable: no evidence
  }
  return null;
}
