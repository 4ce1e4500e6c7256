// Whether a start's prompt reached Codex (DESIGN §7, §19): a user message holding it in one of
// the program root's newest rollouts, written since the launch began. Codex 0.171.0 writes a
// prompt as a `response_item` message (role user, `input_text` blocks) and an `event_msg`
// user_message.
import { readTail } from "../../usage/transcript.js";
import { rolloutsOf } from "./locate.js";

const TAIL_BYTES = 1024 * 1024;
const NEWEST_FILES = 3;
const SLACK_MS = 2_000;

/** The text of a user message line, and its time; null for any other line. */
function promptOf(line: string): { text: string; at: number } | null {
  if (!line.includes('"user')) return null;
  let e: { timestamp?: unknown; payload?: Record<string, unknown> };
  try {
    e = JSON.parse(line);
  } catch {
    return null;
  }
  const p = e?.payload;
  if (!p || typeof p !== "object") return null;
  let text: string | null = null;
  if (p.type === "user_message" && typeof p.message === "string") text = p.message;
  else if (p.type === "message" && p.role === "user" && Array.isArray(p.content))
    text = p.content
      .map((b) => (b && typeof b === "object" && typeof b.text === "string" ? b.text : ""))
      .join("\n");
  if (text === null) return null;
  const at = typeof e.timestamp === "string" ? Date.parse(e.timestamp) : Number.NaN;
  return { text, at };
}

export function promptInRollouts(
  seat: string,
  root: string,
  prompt: string,
  sinceMs: number,
): boolean {
  const wanted = prompt.trim();
  for (const path of rolloutsOf(seat, root, sinceMs, NEWEST_FILES)) {
    const lines = readTail(path, TAIL_BYTES).split("\n");
    for (let i = lines.length - 1; i >= 0; i--) {
      const m = promptOf(lines[i] as string);
      if (m?.text.includes(wanted) && (Number.isNaN(m.at) || m.at >= sinceMs - SLACK_MS))
        return true;
    }
  }
  return false;
}
