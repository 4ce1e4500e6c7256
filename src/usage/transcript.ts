// Reading a Claude Code transcript (JSONL) from its end (DESIGN §4): the cost must not grow
// with the transcript's size, and a 20 MB tool result must never be parsed or held whole.
import { closeSync, fstatSync, readdirSync, readSync, realpathSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { openRegular } from "../util/fs.js";
import { type BackLine, linesBackward } from "./backward.js";
import { contextOfUsage, type Usage } from "./context-usage.js";
import {
  parseRefusal,
  type RateLimitInfo,
  type Refusal,
  refusalOf,
  structuredRefusal,
} from "./refusal.js";
import { lookupSession } from "./sessions.js";

export type { Refusal } from "./refusal.js";

/** A cheap look at a line's head: could this be an assistant entry at all? */
const ASSISTANT_HEAD = /"(?:type|role)"\s*:\s*"assistant"/;

/** A main-chain compaction marker (`"subtype":"compact_boundary"`) could be on this line. */
const BOUNDARY_HEAD = /"subtype"\s*:\s*"compact_boundary"/;

type Kind =
  | { kind: "real"; tokens: number | null }
  | {
      kind: "synthetic";
      text: string;
      timestamp: string | null;
      session: string | null;
      error: string | null;
      /** An API error entry (`isApiErrorMessage`), not a `No response requested.` line. */
      api_error: boolean;
      /** `apiError: "usage_limit_reached"`'s `apiErrorParams.rate_limit_info` (2.1.328+). */
      limit: RateLimitInfo | null;
    }
  /** A compaction: the context right after it (`postTokens`), null when it names none. */
  | { kind: "boundary"; tokens: number | null }
  | { kind: "other" };

/** The text blocks of a message's content, joined (a string content is its own text). */
export function textOf(content: unknown): string {
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

/**
 * A `compact_boundary` line (Claude Code 2.1.x compacts in place: `{"type":"system",
 * "subtype":"compact_boundary","compactMetadata":{"preTokens","postTokens"}}`; older versions
 * write no `postTokens`). Sidechain boundaries are a sub-agent's own, not the manager's.
 */
function boundaryOf(line: BackLine): Kind {
  if (line.text === null) return { kind: "other" }; // a boundary line is small
  try {
    const entry = JSON.parse(line.text) as Record<string, unknown>;
    if (entry?.type !== "system" || entry.subtype !== "compact_boundary") return { kind: "other" };
    if (entry.isSidechain === true) return { kind: "other" };
    const meta = (entry.compactMetadata ?? {}) as Record<string, unknown>;
    const post = meta.postTokens;
    return {
      kind: "boundary",
      tokens: typeof post === "number" && Number.isFinite(post) && post >= 0 ? post : null,
    };
  } catch {
    return { kind: "other" }; // torn
  }
}

/**
 * The structured reading of a refused turn, as 2.1.328 and 2.1.332 write it (checked on the real
 * CLI): `apiError: "usage_limit_reached"` with `apiErrorParams.rate_limit_info: {status:
 * "rejected", resetsAt: <epoch s>, rateLimitType, …}` (the same object as `quotaLimits`).
 */
function rateLimitInfoOf(entry: Record<string, unknown>): RateLimitInfo | null {
  if (entry.apiError !== "usage_limit_reached") return null;
  const params = entry.apiErrorParams as { rate_limit_info?: unknown } | undefined;
  const info = (params?.rate_limit_info ?? entry.quotaLimits) as Record<string, unknown> | null;
  if (!info || typeof info !== "object") return null;
  const resets = info.resetsAt;
  return {
    status: typeof info.status === "string" ? info.status : null,
    resets_at: typeof resets === "number" && Number.isFinite(resets) && resets > 0 ? resets : null,
    type: typeof info.rateLimitType === "string" ? info.rateLimitType : null,
  };
}

/** What a line is, as far as main-thread context and refusals go. */
function classify(line: BackLine): Kind {
  const head = line.head.slice(0, 8192);
  if (!ASSISTANT_HEAD.test(head))
    return BOUNDARY_HEAD.test(head) ? boundaryOf(line) : { kind: "other" };
  if (line.text === null) {
    // An over-sized assistant line (e.g. a huge Write input): judge it by its two ends.
    if (/"isSidechain"\s*:\s*true/.test(line.head)) return { kind: "other" };
    if (
      /"model"\s*:\s*"<synthetic>"/.test(line.head) ||
      /"isApiErrorMessage"\s*:\s*true/.test(line.tail.slice(-4096))
    )
      return { kind: "other" }; // API error texts are short: a huge one is not a refusal
    const tokens = contextOfUsage(usageFromTail(line.tail));
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
      session: typeof entry.sessionId === "string" ? entry.sessionId : null,
      // Newer versions name the API error's kind (`rate_limit`, `server_error`, …).
      error: typeof entry.error === "string" ? entry.error : null,
      api_error: entry.isApiErrorMessage === true,
      limit: rateLimitInfoOf(entry),
    };
  }
  return { kind: "real", tokens: contextOfUsage(message.usage as Usage) };
}

/**
 * Context tokens of the last main-thread assistant message, read backwards from the end
 * (DESIGN §4). A compaction met first ends the walk: the context is its `postTokens`, or
 * unknown (null); the pre-compaction message never counts again.
 */
export function contextTokensOf(path: string): number | null {
  try {
    for (const line of linesBackward(path)) {
      const k = classify(line);
      if (k.kind === "real" && k.tokens !== null) return k.tokens;
      if (k.kind === "boundary") return k.tokens;
    }
  } catch {
    // unreadable or vanished: no figure
  }
  return null;
}

/** A path with its symlinks resolved; as given when it does not exist (any more). */
function realPath(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/** Claude Code's cap on a project folder name before it cuts it and adds a hash. */
const PROJECT_NAME_MAX = 200;

/**
 * The name Claude Code gives a working directory's project folder: every character that is not
 * an ASCII letter or digit (per UTF-16 code unit) becomes `-`; a name over 200 characters is cut
 * to 200 and gets `-` plus the base-36 `Math.abs` of a 32-bit string hash of the cwd itself
 * (`h = (h << 5) - h + charCode | 0`). `CLAUDE_CODE_PROJECT_DIR_NAME` overrides the name.
 * The rule as read from Claude Code's cli.js v2.1.154 in heiervang-technologies/unleash PR #237
 * and Digital-Process-Tools/claude-remember issue #157 (a 262-character cwd → a 207-character
 * folder ending `--on930v`). The cwd is its real path: Claude Code 2.1.328 names the folder
 * of a cwd reached through a symlink after the folder it points at.
 */
export function projectFolderName(cwd: string, env: NodeJS.ProcessEnv = process.env): string {
  const override = env.CLAUDE_CODE_PROJECT_DIR_NAME;
  if (override && !/[/\\]/.test(override) && override !== "." && override !== "..") return override;
  const path = realPath(resolve(cwd));
  const name = path.replace(/[^a-zA-Z0-9]/g, "-");
  if (name.length <= PROJECT_NAME_MAX) return name;
  let h = 0;
  for (let i = 0; i < path.length; i++) h = ((h << 5) - h + path.charCodeAt(i)) | 0;
  return `${name.slice(0, PROJECT_NAME_MAX)}-${Math.abs(h).toString(36)}`;
}

/**
 * The environment that decides a manager's transcript folder: a `CLAUDE_CODE_PROJECT_DIR_NAME`
 * set in its program's `manager.env` reaches the manager and wins over ours.
 * Every reader of a manager's transcripts (the refusal check, Herdr's prompt-arrival check)
 * names its folder through this.
 */
export function managerTranscriptEnv(
  managerEnv: Readonly<Record<string, string>>,
  base: NodeJS.ProcessEnv = process.env,
): NodeJS.ProcessEnv {
  const dirName = managerEnv.CLAUDE_CODE_PROJECT_DIR_NAME;
  return dirName ? { ...base, CLAUDE_CODE_PROJECT_DIR_NAME: dirName } : base;
}

/** The folder Claude Code keeps a working directory's transcripts in, under a seat. */
export function projectDirOf(
  seat: string,
  cwd: string,
  env: NodeJS.ProcessEnv = process.env,
): string {
  return join(seat, "projects", projectFolderName(cwd, env));
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
  return newestJsonl(projectDirOf(opts.seat, opts.cwd, opts.env));
}

/** The last `maxBytes` of a file as text (from a line start where possible), for evidence. */
export function readTail(path: string, maxBytes: number): string {
  let fd: number;
  try {
    fd = openRegular(path); // a FIFO would block the evidence (and the tick) for ever
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
 * A usage-limit refusal at the end of the transcript, or null (a 75 % warning is never one): the
 * newest main-thread API-error entry after the last real assistant message and any compaction,
 * when it is a limit. An older refusal before it never answers for it: a newer error that is no
 * limit (a 529, "not your usage limit") means the limit was past by then. Its structured fields
 * are the reading when it has them (DESIGN §5); its text otherwise.
 */
export function refusalAtEnd(path: string, localZone?: string): Refusal | null {
  try {
    for (const line of linesBackward(path)) {
      const k = classify(line);
      // Anything the model said, or a compaction, came after any refusal further back.
      if (k.kind === "real" || k.kind === "boundary") return null;
      if (k.kind !== "synthetic") continue;
      // An entry that names its error kind is a usage limit only as `rate_limit` (DESIGN §5).
      if (k.error !== null && k.error !== "rate_limit") return null;
      const stamped = k.timestamp ? Date.parse(k.timestamp) : Number.NaN;
      const entryTime = Number.isFinite(stamped) ? stamped : Date.now();
      const parsed = k.limit
        ? structuredRefusal(k.limit, k.text, entryTime, localZone)
        : parseRefusal(k.text, entryTime, localZone);
      if (parsed)
        return refusalOf(k.text, k.timestamp, parsed, k.limit ?? undefined, {
          session: k.session,
          from: "transcript",
        });
      // The newest API error is no usage limit: whatever came before it is over.
      if (k.api_error) return null;
    }
  } catch {
    // unreadable: no evidence
  }
  return null;
}
