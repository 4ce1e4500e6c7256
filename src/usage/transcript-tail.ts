// Where a Claude Code session's turn stands, read from its transcript's end (DESIGN §14). The
// shapes are Claude Code 2.1.328's (test/fixtures/claude-2.1.328/): each content block of a
// reply is its own `assistant` entry; a tool's result is a `user` entry with a `tool_result`
// block; a turn that ended is followed by `system` `stop_hook_summary` / `turn_duration`; every
// try of a request is an `api-request` entry, so a retry storm is a run of them with nothing
// after; a turn an API error ended is a synthetic assistant entry (`isApiErrorMessage`).
import { type BackLine, linesBackward } from "./backward.js";
import { textOf } from "./transcript.js";

/** How far back a tail read goes, at most: the cost never grows with the transcript. */
const MAX_LINES = 400;
const MAX_BYTES = 8 * 1024 * 1024;

/** An open tool call: the last main-chain entry is its `tool_use`, with no result yet. */
export interface OpenTool {
  name: string;
  id: string;
  since: string;
  /** The `timeout` input (ms), when the call gave one. */
  timeout_ms: number | null;
  /** A Bash call's `command` input. */
  command?: string;
  /**
   * The agent's own limit for the call (ms), when its reader knows one: past it plus
   * quiet_after the agent itself is stuck (Codex's exec_command yields its output by then).
   */
  limit_ms?: number;
}

/** The API error a turn ended on (a synthetic assistant entry). */
export interface TurnError {
  /** `apiErrorStatus`: 429, 500, 529…; null for a network error. */
  status: number | null;
  /** `error`: `rate_limit`, `server_error`, `authentication_failed`, `billing_error`… */
  error: string | null;
  text: string;
  /** What it calls for, when the agent's reader knows (Codex names a usage limit itself). */
  cause?: "usage_limit" | "transient" | "auth";
}

export type TailState =
  /** The turn ended (an end_turn reply, or the Stop hook's summary after one). */
  | { state: "ended"; at: string | null; error?: TurnError }
  | { state: "tool_open"; at: string | null; tool: OpenTool }
  /** A prompt or a tool result was sent and no reply has come yet; `tries` counts its requests. */
  | { state: "requesting"; at: string | null; tries: number; first_try: string | null }
  /** A reply is being written (a text or thinking block with no stop reason yet). */
  | { state: "replying"; at: string | null }
  /**
   * A person stopped the turn (Esc): the last main-chain entry is a user entry `[Request
   * interrupted by user]` (`… for tool use` when a call was open; 2.1.328 and 2.1.332).
   */
  | { state: "interrupted"; at: string | null; text: string }
  | { state: "unknown"; at: null };

// biome-ignore lint/suspicious/noExplicitAny: transcript entries are read loosely
type Entry = Record<string, any>;

const str = (v: unknown): string | null => (typeof v === "string" ? v : null);

function parse(line: BackLine): Entry | null {
  const text = line.text ?? null;
  if (text === null) {
    // An over-sized line (a 20 MB tool result or Write input): only its kind matters here.
    const head = line.head.slice(0, 4096);
    if (/"isSidechain"\s*:\s*true/.test(head)) return null;
    if (/"type"\s*:\s*"user"/.test(head) && /"tool_result"/.test(line.head))
      return { type: "user", message: { content: [{ type: "tool_result" }] } };
    if (/"type"\s*:\s*"assistant"/.test(line.head)) return { type: "assistant", oversized: true };
    return null;
  }
  try {
    const e = JSON.parse(text);
    return e && typeof e === "object" ? (e as Entry) : null;
  } catch {
    return null; // torn
  }
}

/** What one main-chain entry says about the turn, or null to look further back. */
function stateOf(e: Entry, tries: number, firstTry: string | null): TailState | null {
  const at = str(e.timestamp);
  if (e.type === "system") {
    if (e.subtype === "stop_hook_summary" || e.subtype === "turn_duration")
      return { state: "ended", at };
    return null; // informational, compact_boundary, …: not where the turn stands
  }
  if (e.type === "user") {
    if (e.isMeta === true || e.isCompactSummary === true) return null;
    const said = textOf(e.message?.content);
    // A local command (`/compact`, …) and its output: nothing was sent, nothing will answer.
    if (/^\s*<(?:command-name|local-command-)/.test(said)) return { state: "ended", at };
    // Esc: no hook runs for it (2.1.328, 2.1.332), not even idle_prompt after 60 s.
    if (/^\s*\[Request interrupted by user\b[^\]]*\]/.test(said))
      return { state: "interrupted", at, text: said.trim().slice(0, 120) };
    return { state: "requesting", at, tries, first_try: firstTry };
  }
  if (e.type !== "assistant") return null;
  if (e.oversized) return { state: "replying", at };
  const m = e.message ?? {};
  if (e.isApiErrorMessage === true || m.model === "<synthetic>") {
    const status = typeof e.apiErrorStatus === "number" ? e.apiErrorStatus : null;
    return {
      state: "ended",
      at,
      error: { status, error: str(e.error), text: textOf(m.content).slice(0, 300) },
    };
  }
  const blocks: Entry[] = Array.isArray(m.content) ? m.content : [];
  const use = blocks.findLast((b) => b?.type === "tool_use");
  if (use) {
    const timeout = use.input?.timeout;
    return {
      state: "tool_open",
      at,
      tool: {
        name: str(use.name) ?? "?",
        id: str(use.id) ?? "",
        since: at ?? "",
        timeout_ms: typeof timeout === "number" && timeout > 0 ? timeout : null,
        ...(typeof use.input?.command === "string" ? { command: use.input.command } : {}),
      },
    };
  }
  if (
    m.stop_reason === "end_turn" ||
    m.stop_reason === "stop_sequence" ||
    m.stop_reason === "max_tokens"
  )
    return { state: "ended", at };
  return { state: "replying", at };
}

/**
 * Where the session's main chain stands, from the transcript's last entries (bounded read).
 * Sub-agent entries (`isSidechain`) and bookkeeping lines are skipped; `api-request` lines
 * after the last main-chain entry are counted as that request's tries.
 */
export function transcriptTail(path: string): TailState {
  let tries = 0;
  let firstTry: string | null = null;
  let lines = 0;
  let bytes = 0;
  try {
    for (const line of linesBackward(path)) {
      if (++lines > MAX_LINES) break;
      bytes += line.text?.length ?? line.head.length + line.tail.length;
      if (bytes > MAX_BYTES) break;
      const e = parse(line);
      if (!e || e.isSidechain === true) continue;
      if (e.type === "api-request" && e.querySource === "repl_main_thread") {
        tries++;
        firstTry = str(e.timestamp) ?? firstTry;
        continue;
      }
      const s = stateOf(e, tries, firstTry);
      if (s) return s;
    }
  } catch {
    // unreadable: no evidence
  }
  return { state: "unknown", at: null };
}
