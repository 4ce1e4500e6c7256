import type { ProgramContext } from "../config/context.js";
import { appendEvent, type JournalEvent, type NewEvent, readEvents } from "../journal/journal.js";
import { programArg } from "./compose.js";
import { type IncidentAttempt, withIncidents } from "./incident-pages.js";
import { PageError, pingHeartbeat, readToken, scrub } from "./ntfy.js";
import { publishPage } from "./ntfy-compat.js";
import { planPages } from "./plan.js";

/**
 * Called once at the end of every non-dry tick with the events that tick journaled (and by
 * `resume`, `unpause`, `finish` with theirs): closes the incidents whose condition ended and
 * publishes their close, sends the pages the events call for (each problem page in its
 * incident, with its actions), retries failed pages, sends stand-down reminders, requests
 * `page.heartbeat_url` (`<url>/fail` when the events include `tick_failed`). `holderPid` is the
 * manager running now, for a close's words. Never throws; returns the events it journaled
 * (`incident_closed`, `incident_opened`, `paged`, `page_failed`, `heartbeat_failed`).
 */
export async function afterEvents(
  program: ProgramContext,
  events: readonly JournalEvent[],
  opts: { now?: number; tick?: boolean; holderPid?: number | null } = {},
): Promise<JournalEvent[]> {
  const out: JournalEvent[] = [];
  const page = program.config.page;
  if (!page) return out;
  const now = opts.now ?? Date.now();
  // A tick's `now` is when it began; a page journaled after its acts must not sort before them.
  const stamp = () => Math.max(now, Date.now());
  const journal = (event: NewEvent) => {
    try {
      out.push(appendEvent(program.stateDir, event, stamp()));
    } catch {
      // A journal that cannot be written is the tick's problem to report, not the pager's.
    }
  };

  try {
    if (page.ntfy) {
      const all = readEvents(program.stateDir);
      const planned = planPages({
        journal: all,
        events,
        policy: program.policy,
        now,
        tick: opts.tick === true,
        program: {
          name: program.name,
          arg: programArg(program.name, program.root),
          screen: page.screen,
        },
      });
      const attempts = withIncidents({
        program,
        ntfy: page.ntfy,
        journal: all,
        attempts: planned,
        context: {
          tick: opts.tick === true,
          tickFailed: events.some((e) => e.type === "tick_failed"),
          configValid: program.configInvalid === undefined,
          holderPid: opts.holderPid ?? null,
        },
        now,
        record: journal,
      });
      if (attempts.length > 0) await send(program, page.ntfy, attempts, journal, now);
    }
  } catch (err) {
    journal({ type: "page_failed", kind: "internal", error: (err as Error).message });
  }

  if (opts.tick && page.heartbeat_url) {
    // A failed tick must turn the outside dead-man's switch red, not keep it green (DESIGN §6).
    const failed = events.some((e) => e.type === "tick_failed");
    const failure = await pingHeartbeat(failed ? failUrl(page.heartbeat_url) : page.heartbeat_url);
    if (failure) journal({ type: "heartbeat_failed", error: failure }); // by its origin only
  }
  return out;
}

/** `<url>/fail`, the healthchecks.io convention, whether or not the URL ends in `/`. */
export function failUrl(url: string): string {
  const q = url.search(/[?#]/);
  const [path, rest] = q < 0 ? [url, ""] : [url.slice(0, q), url.slice(q)];
  return `${path.replace(/\/+$/, "")}/fail${rest}`;
}

async function send(
  program: ProgramContext,
  ntfy: NonNullable<NonNullable<ProgramContext["config"]["page"]>["ntfy"]>,
  attempts: IncidentAttempt[],
  journal: (event: NewEvent) => void,
  now: number,
): Promise<void> {
  let token: string | null = null;
  let tokenError: string | null = null;
  try {
    token = readToken(ntfy);
  } catch (err) {
    tokenError = `${program.configPath}: ${(err as Error).message}`;
  }
  for (const a of attempts) {
    const extra = {
      ...(a.retry ? { retry: true } : {}),
      ...(a.reminder ? { reminder: a.reminder } : {}),
      ...a.extra,
    };
    try {
      if (tokenError) throw new PageError(tokenError);
      const answer = await publishPage(ntfy, a.page, token, now);
      journal({
        type: "paged",
        kind: a.kind,
        priority: a.page.priority,
        title: a.page.title,
        topic: ntfy.topic,
        id: answer.id,
        ...extra,
        ...(answer.copy_dropped ? { copy_dropped: true } : {}),
      });
    } catch (err) {
      const status = err instanceof PageError ? err.status : null;
      const permanent = err instanceof PageError && err.permanent;
      // The page itself is journaled with its first failure only; a retry that fails again
      // journals how many times it has (DESIGN §18). A permanent 4xx is journaled once, and
      // never sent again.
      journal({
        type: "page_failed",
        kind: a.kind,
        error: scrub((err as Error).message, token),
        ...(status !== null ? { status } : {}),
        ...(a.retry ? { failures: (a.failures ?? 1) + 1 } : { page: a.page }),
        ...(permanent ? { permanent: true } : {}),
        ...extra,
      });
    }
  }
}
