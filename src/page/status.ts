import type { ProgramContext } from "../config/context.js";
import { type EventOf, type JournalEvent, readEvents } from "../journal/journal.js";
import { iso, parseIso } from "../util/time.js";
import type { PageStatus } from "../watchdog/gather/facts.js";
import { nextReminderAt, type PagePolicy, pageHistory, retryDelay, stillRelevant } from "./plan.js";

export type { PageStatus } from "../watchdog/gather/facts.js";

/** Derives the page status from the journal (pure). */
export function pageStatusOf(
  journal: readonly JournalEvent[],
  policy: PagePolicy,
  configured: boolean,
): PageStatus {
  const h = pageHistory(journal);
  let last: EventOf<"paged"> | null = null;
  for (const e of h.lastPaged.values()) if (!last || e.at > last.at) last = e;
  const undelivered = [...h.pending]
    .filter(([kind]) => stillRelevant(kind, h.state))
    .map(([kind, e]) => {
      const f = h.failures.get(kind) ?? { count: 1, at: e.at, error: e.error ?? "" };
      return {
        at: f.at,
        kind,
        title: e.page.title,
        error: f.error,
        failures: f.count,
        next_try: iso(parseIso(f.at) + retryDelay(f.count)),
      };
    });
  const due = configured ? nextReminderAt(h, policy) : null;
  return {
    configured,
    last_page: last
      ? {
          at: last.at,
          kind: String(last.kind),
          title: last.title ?? "",
          priority: Number(last.priority),
        }
      : null,
    undelivered,
    next_reminder: due === null ? null : iso(due),
    reminders_left:
      configured && h.state.stoodDown ? Math.max(0, policy.reminders - h.remindersSent) : null,
  };
}

/** Page status of a program for `status`: last page, undelivered pages, next reminder. */
export function pageStatus(program: ProgramContext, _now: number = Date.now()): PageStatus {
  return pageStatusOf(
    readEvents(program.stateDir),
    program.policy,
    program.config.page?.ntfy !== undefined,
  );
}
