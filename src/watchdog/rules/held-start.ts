// A start held before its claim (issue 33): its pane shows a dialog, or Claude Code's
// Notification hook said it waits for a person (a permission prompt; auto mode's "can't check
// actions in this session and needs your choice"). Read for rule 12 only when decide asks for
// it; judged here without I/O.
import { formatDuration } from "../../util/duration.js";

/** What gather read about the last start, unclaimed, within claim_grace. */
export interface HeldStartFacts {
  /** The dialog its pane shows (its first line); null: none, or no pane to read. */
  dialog: string | null;
  /** The end of its screen (as `screenTail` keeps it); null: no pane, or unreadable. */
  screen: string | null;
  /** Its session's newest Notification since the launch, when it waits for a person. */
  notification: { at: string; type: string | null; message: string | null } | null;
  /** When its transcript last grew (a person who answered the prompt lets it go on). */
  transcript_grew_at: string | null;
}

export interface Held {
  /** What it waits for, in a few words: the dialog's first line, or the Notification's text. */
  waiting_for: string;
  /** The evidence, each a short sentence. */
  evidence: string[];
  since: string | null;
}

/**
 * Whether the start is held, and by what; null when nothing says it waits for a person. The
 * screen's dialog is enough; so is a Notification that waits for a person, unless the
 * transcript grew after it (a person answered, and the session went on).
 */
export function heldStart(f: HeldStartFacts | undefined, now: number): Held | null {
  if (!f) return null;
  const n = f.notification;
  const answered =
    n !== null &&
    f.transcript_grew_at !== null &&
    Date.parse(f.transcript_grew_at) > Date.parse(n.at);
  const waiting = n !== null && !answered ? n : null;
  if (f.dialog === null && waiting === null) return null;
  const ago = (at: string) => `${formatDuration(Math.max(0, now - Date.parse(at)))} ago`;
  const evidence: string[] = [];
  if (f.dialog !== null) evidence.push(`its screen shows a dialog: ${f.dialog}`);
  if (waiting)
    evidence.push(
      `Claude Code's Notification hook said ${ago(waiting.at)}: ${waiting.type ?? "?"}: ${waiting.message ?? "no text"}`,
    );
  return {
    waiting_for: waiting?.message ?? f.dialog ?? "a person",
    evidence,
    since: waiting?.at ?? null,
  };
}
