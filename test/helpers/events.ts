// Journal events as tests write them: loose objects, checked against the journal's schema
// (src/journal/events.ts) when made, so a fixture that no reader would accept fails at once.
import { checkEvent, type JournalEvent, type NewEvent } from "../../src/journal/events.js";

/** An event as a test reads its fields (any field of any type, without narrowing). */
// biome-ignore lint/suspicious/noExplicitAny: tests read whatever field they assert on
export type LooseEvent = { at: string; type: string; [field: string]: any };

/** `raw` as a journal event; throws when the schema would skip it. */
export function asEvent(raw: { at: string; type: string; [field: string]: unknown }): JournalEvent {
  const checked = checkEvent(raw);
  if ("problem" in checked) throw new Error(`not a journal event: ${checked.problem}`);
  return checked.event;
}

/** `raw` as what appendEvent takes (checked as asEvent checks it). */
export function asNew(raw: { type: string; [field: string]: unknown }): NewEvent {
  asEvent({ at: new Date(0).toISOString(), ...raw });
  return raw as NewEvent;
}

/** Events as tests read them. */
export const loose = (events: readonly JournalEvent[]): LooseEvent[] => events as LooseEvent[];
