// STUB (owned by the pages work, issue 5): signatures are the contract; bodies to be written.
import type { ProgramContext } from "../config/context.js";
import type { JournalEvent } from "../journal/journal.js";

/**
 * Called once at the end of every non-dry tick with the events that tick journaled (and by
 * `resume`, `finish` with theirs): sends the pages they call for, retries failed pages,
 * sends stand-down reminders, requests `page.heartbeat_url`. Never throws; returns the
 * events it journaled (`paged`, `page_failed`, …).
 */
export async function afterEvents(
  _program: ProgramContext,
  _events: readonly JournalEvent[],
  _opts: { now?: number; tick?: boolean } = {},
): Promise<JournalEvent[]> {
  return [];
}
