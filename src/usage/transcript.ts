// STUB (owned by the manager's-side work, issue 4): signatures are the contract; bodies to be written.

/** A usage-limit refusal record found at the end of a transcript. */
export interface Refusal {
  /** The refusal's text, e.g. `Claude AI usage limit reached|1763028000`. */
  text: string;
  /** When the limit resets (epoch seconds), or null when the text names no time. */
  resets_at: number | null;
  /** The entry's own timestamp (ISO), when it has one. */
  at: string | null;
}

/** Context tokens of the last main-thread assistant message, read backwards from the end. */
export function contextTokensOf(_path: string): number | null {
  return null;
}

/**
 * The manager's transcript (DESIGN §4): explicit path; else the statusline's session map for
 * the manager's pid + start time; else the newest `*.jsonl` directly in the seat's project
 * folder for `cwd` (never a sub-agent's file).
 */
export function findTranscript(_opts: {
  seat: string;
  cwd: string;
  manager?: { pid: number; start_time: string };
  explicit?: string;
}): string | null {
  return null;
}

/** The last `maxBytes` of a file as text (from a line start where possible), for evidence. */
export function readTail(_path: string, _maxBytes: number): string {
  return "";
}

/** A usage-limit refusal at the end of the transcript, or null (a 75 % warning is never one). */
export function refusalAtEnd(_path: string): Refusal | null {
  return null;
}
