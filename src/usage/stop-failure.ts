// Claude Code's `StopFailure` hook payload (DESIGN §5), read into a usage-limit refusal. Pure.
//
// The payload, per Claude Code's hooks reference (StopFailure, added in v2.1.78): the common
// fields (`session_id`, `transcript_path`, `cwd`, `hook_event_name: "StopFailure"`) plus
// `error` (`rate_limit`, `authentication_failed`, `billing_error`, `invalid_request`,
// `server_error`, `max_output_tokens`, `unknown`), optional `error_details` (e.g. `429 Too Many
// Requests`) and optional `last_assistant_message`: the API error text shown in the
// conversation, e.g. `API Error: Rate limit reached`. Some write-ups name the kind `error_type`
// and the text `error_message`; both spellings are read. As 2.1.328 and 2.1.332 send it (checked
// on the real CLIs): `{session_id, transcript_path, cwd, prompt_id, effort, hook_event_name,
// error: "rate_limit", last_assistant_message: "<the limit text>"}`: no epoch, no error_details.
import { parseRefusal, type Refusal, refusalOf } from "./refusal.js";

export interface StopFailure {
  /** The error kind, when the payload names one. */
  error: string | null;
  /** The texts that may say which limit was hit, most telling first. */
  texts: string[];
  transcript_path: string | null;
  session_id: string | null;
}

const str = (v: unknown): string | null => (typeof v === "string" && v.trim() ? v : null);

/** What a StopFailure payload says, or null when it is not one (another event, not an object). */
export function readStopFailure(raw: unknown): StopFailure | null {
  if (!raw || typeof raw !== "object" || Array.isArray(raw)) return null;
  const o = raw as Record<string, unknown>;
  const event = str(o.hook_event_name);
  if (event !== null && event !== "StopFailure") return null;
  const texts = [o.last_assistant_message, o.error_message, o.error_details]
    .map(str)
    .filter((t): t is string => t !== null);
  return {
    error: str(o.error_type) ?? str(o.error),
    texts,
    transcript_path: str(o.transcript_path),
    session_id: str(o.session_id),
  };
}

/**
 * The usage-limit refusal a stopped turn stands for, or null: only a `rate_limit` stop (or one
 * naming no kind) whose text is a usage limit by DESIGN §5's list. `API Error: Rate limit
 * reached` (a server-side 429) is not one. `now` is the refusal's time.
 */
export function refusalOfStopFailure(
  stop: StopFailure,
  now: number,
  localZone?: string,
): Refusal | null {
  if (stop.error !== null && stop.error !== "rate_limit") return null;
  for (const text of stop.texts) {
    // Text only (2.1.328 and 2.1.332 send no epoch): the reset to the minute, rounded down.
    const parsed = parseRefusal(text, now, localZone);
    if (parsed)
      return refusalOf(text, new Date(now).toISOString(), parsed, undefined, {
        session: stop.session_id,
        from: "hook",
      });
  }
  return null;
}
