// Builders for Claude Code-shaped transcript lines (the fixtures' shapes), for usage tests.
import { appendFileSync, mkdirSync, utimesSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { FIXTURES } from "./fixtures.js";

export { FIXTURES };

let n = 0;
const base = (extra: Record<string, unknown>) => ({
  parentUuid: null,
  isSidechain: false,
  userType: "external",
  cwd: "/Users/ops/loops/catalog",
  sessionId: "5c0f4a7e-2b1d-4c55-9a53-0f1e2d3c4b5a",
  version: "2.1.90",
  uuid: `00000000-0000-0000-0000-${String(++n).padStart(12, "0")}`,
  timestamp: "2026-11-12T14:00:00.000Z",
  ...extra,
});

/** A main-thread (or sidechain) assistant entry whose context is input + cc + cr. */
export function assistantLine(
  usage: { input: number; cc: number; cr: number },
  opts: { sidechain?: boolean; content?: unknown; timestamp?: string } = {},
): string {
  return JSON.stringify(
    base({
      isSidechain: opts.sidechain ?? false,
      type: "assistant",
      ...(opts.timestamp ? { timestamp: opts.timestamp } : {}),
      message: {
        id: `msg_${n}`,
        type: "message",
        role: "assistant",
        model: "claude-opus-4-6",
        content: opts.content ?? [{ type: "text", text: "working" }],
        stop_reason: "tool_use",
        usage: {
          input_tokens: usage.input,
          cache_creation_input_tokens: usage.cc,
          cache_read_input_tokens: usage.cr,
          output_tokens: 100,
          service_tier: "standard",
        },
      },
    }),
  );
}

/** A user entry carrying a tool result of `size` characters. */
export function toolResultLine(size: number, fill = "x"): string {
  return JSON.stringify(
    base({
      type: "user",
      message: {
        role: "user",
        content: [{ type: "tool_result", tool_use_id: "toolu_x", content: fill.repeat(size) }],
      },
    }),
  );
}

/** A synthetic API-error entry, as Claude Code writes for a refusal or an API failure. */
export function apiErrorLine(text: string, timestamp = "2026-11-12T14:00:09.063Z"): string {
  return JSON.stringify(
    base({
      type: "assistant",
      timestamp,
      message: {
        id: "msg_err",
        type: "message",
        role: "assistant",
        model: "<synthetic>",
        content: [{ type: "text", text }],
        stop_reason: "stop_sequence",
        usage: {
          input_tokens: 0,
          cache_creation_input_tokens: 0,
          cache_read_input_tokens: 0,
          output_tokens: 0,
        },
      },
      isApiErrorMessage: true,
    }),
  );
}

/**
 * A refused turn's synthetic entry as Claude Code 2.1.328 and 2.1.332 write it (checked on the
 * real CLIs): the text, `error: "rate_limit"`, `apiErrorStatus: 429`, and `apiError:
 * "usage_limit_reached"` with `apiErrorParams.rate_limit_info` (the same object as `quotaLimits`).
 */
export function limitLine(
  text: string,
  timestamp: string,
  info: { resetsAt?: number; rateLimitType?: string; [k: string]: unknown },
): string {
  const e = JSON.parse(apiErrorLine(text, timestamp));
  const rateLimitInfo = { status: "rejected", ...info, isUsingOverage: false };
  return JSON.stringify({
    ...e,
    version: "2.1.332",
    apiError: "usage_limit_reached",
    apiErrorParams: { rate_limit_info: rateLimitInfo },
    quotaLimits: rateLimitInfo,
    error: "rate_limit",
    apiErrorStatus: 429,
    apiErrorType: "rate_limit_error",
  });
}

export function userLine(text: string): string {
  return JSON.stringify(base({ type: "user", message: { role: "user", content: text } }));
}

/** Writes lines (each ending in a newline unless `torn` is given as a last partial line). */
export function writeTranscript(path: string, lines: string[], torn?: string): string {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, lines.map((l) => `${l}\n`).join("") + (torn ?? ""));
  return path;
}

export function appendLines(path: string, lines: string[]): void {
  appendFileSync(path, lines.map((l) => `${l}\n`).join(""));
}

/** Sets a file's mtime to `secondsAgo` before now. */
export function age(path: string, secondsAgo: number): void {
  const t = Date.now() / 1000 - secondsAgo;
  utimesSync(path, t, t);
}
