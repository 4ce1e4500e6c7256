import { basename, dirname } from "node:path";
import { sheepdogHome } from "../config/resolve.js";
import type { EventOf, EventType, JournalEvent } from "../journal/journal.js";
import { formatDuration } from "../util/duration.js";
import { parseIso } from "../util/time.js";
import { LIVE_RESTARTS } from "../watchdog/rules/rule-context.js";
import type { Page } from "./ntfy.js";

/**
 * The kinds of page, each with the journal event it is composed from (kindOf says which events
 * call for one); de-duplication and retries are per program and kind.
 */
const PAGED_FROM = {
  stood_down: "stood_down",
  tick_failed: "tick_failed",
  stuck_restart: "manager_stopped",
  paused: "paused",
  /** A refusal naming no reset (DESIGN §5): a person must act. */
  needs_person: "paused",
  cleared: "cleared",
  finished: "finished",
  start_failed: "manager_start_failed",
  config_invalid: "config_invalid",
  api_errors: "api_errors",
  blocked: "blocked",
  lease_lost: "lease_lost",
  lease_taken_over: "lease_acquired",
} as const satisfies Record<string, EventType>;

export type PageKind = keyof typeof PAGED_FROM;
type PagedFrom = typeof PAGED_FROM;

/** Every kind of page (docs/pages.md lists each; test/docs.test.ts holds them to it). */
export const PAGE_KINDS = Object.keys(PAGED_FROM) as PageKind[];

export function isPageKind(v: unknown): v is PageKind {
  return typeof v === "string" && Object.hasOwn(PAGED_FROM, v);
}

/** What `--program` value names this program in a command a person will copy from a phone. */
export function programArg(name: string, root: string, env = process.env): string {
  // A bare name resolves under $SHEEPDOG_HOME; a program elsewhere needs its path.
  if (basename(root) === name && dirname(root) === sheepdogHome(env)) return name;
  return root;
}

/** The first non-empty text among the fields an event uses to say why. */
export function reasonOf(e: JournalEvent): string | null {
  for (const v of [
    "reason" in e ? e.reason : undefined,
    "note" in e ? e.note : undefined,
    "error" in e ? e.error : undefined,
  ]) {
    if (typeof v === "string" && v.trim()) return clip(v.trim(), 1000);
  }
  return null;
}

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** A screen cut to its last `max` characters: a dialog's question and options are at its end. */
function screenEnd(screen: string, max: number): string {
  return screen.length > max ? `…${screen.slice(screen.length - max + 1)}` : screen;
}

/**
 * A `manager_stopped` is paged only when the watchdog stopped a stuck manager (rule 9,
 * `decision: "restart_stuck"`) as an incident: a planned stop (a manager left running past a
 * pause), a start that never claimed, a manager that handed over, or a stuck manager on the way
 * to a stand-down (whose own page says it) is housekeeping.
 */
export function isStuckStop(e: JournalEvent): boolean {
  return (
    e.type === "manager_stopped" && LIVE_RESTARTS.includes(e.decision ?? "") && e.planned !== true
  );
}

/** The kind of page an event calls for, or null. */
export function kindOf(e: JournalEvent): PageKind | null {
  switch (e.type) {
    case "paused":
      // A refusal naming no reset (DESIGN §5): the page says a person must act.
      return typeof e.needs_person === "string" ? "needs_person" : "paused";
    case "stood_down":
    case "tick_failed":
    case "cleared":
    case "finished":
      return e.type;
    case "manager_stopped":
      return isStuckStop(e) ? "stuck_restart" : null;
    case "manager_start_failed":
      return "start_failed";
    case "config_invalid":
    case "api_errors":
    case "blocked":
    case "lease_lost":
      return e.type;
    case "lease_acquired":
      // A failover: the host that held it may be dead and unable to page for itself.
      return e.how === "taken_over" && e.from_machine_id !== undefined ? "lease_taken_over" : null;
    default:
      return null;
  }
}

function untilText(until: string | undefined, now: number): string {
  const at = parseIso(until);
  if (Number.isNaN(at)) return "when a person runs sheepdog unpause";
  const hhmm = new Date(at).toISOString().slice(11, 16);
  return `at ${hhmm} UTC (${until}, in ${formatDuration(Math.max(0, at - now))})`;
}

function lines(...parts: (string | null | false)[]): string {
  return parts.filter((p): p is string => typeof p === "string" && p !== "").join("\n");
}

/** What a page of kind K is composed from. */
interface PageInput<K extends PageKind> {
  e: EventOf<PagedFrom[K]>;
  name: string;
  arg: string;
  why: string | null;
  now: number;
  /** Whether a screen an event carries may go into the page (`page.screen`, default true). */
  screen: boolean;
}

/**
 * Title, message (what happened, why, the one command that answers it), priority and tags.
 * `e` is the event kindOf found the kind in (a `page_failed` keeps the page itself instead).
 */
export function composePage(
  kind: PageKind,
  e: JournalEvent,
  program: { name: string; arg: string; screen?: boolean },
  now: number,
): Page {
  if (e.type !== PAGED_FROM[kind]) throw new Error(`a ${kind} page is not made from ${e.type}`);
  const compose = composers[kind] as (p: PageInput<PageKind>) => Page;
  return compose({
    e: e as EventOf<PagedFrom[PageKind]>,
    screen: program.screen !== false,
    name: program.name,
    arg: program.arg,
    why: reasonOf(e),
    now,
  });
}

/** The screen an event carries, unless `page.screen: false` keeps screens off the phone. */
function screenOf(e: { screen?: string }, allowed: boolean): string | null {
  if (!allowed || !e.screen?.trim()) return null;
  return e.screen.trimEnd();
}

/** One composer per kind of page. */
const composers: { [K in PageKind]: (p: PageInput<K>) => Page } = {
  stood_down: ({ name, arg, why }) => {
    return {
      title: `${name} stood down`,
      message: lines(
        `sheepdog stood ${name} down; nothing starts until a person clears it.`,
        why && `Reason: ${why}`,
        `When it is fixed, run: sheepdog resume --program ${arg}`,
      ),
      priority: 5,
      tags: ["rotating_light"],
    };
  },
  config_invalid: ({ e, name, arg, why }) => {
    const file = e.file ?? "program.json";
    return {
      title: `${name}: program.json is invalid`,
      message: lines(
        `${file} no longer loads; the watchdog goes on with the last valid config until it is fixed.`,
        why && `Error: ${why}`,
        `When it is fixed, check it: sheepdog check --program ${arg}`,
      ),
      priority: 4,
      tags: ["warning"],
    };
  },
  tick_failed: ({ name, arg, why }) => {
    return {
      title: `${name}: watchdog tick failed`,
      message: lines(
        `The watchdog tick of ${name} failed, so nothing is watching it until that is fixed.`,
        why && `Error: ${why}`,
        `See: sheepdog journal --program ${arg}`,
      ),
      priority: 4,
      tags: ["warning"],
    };
  },
  stuck_restart: ({ e, name, arg, why }) => {
    const pid = e.pid !== undefined ? ` (pid ${e.pid})` : "";
    const what =
      e.decision === "restart_idle"
        ? "an idle"
        : e.decision === "restart_wedged"
          ? "a wedged"
          : "a stuck";
    return {
      title: `${name}: ${what.replace(/^an? /, "")} manager restarted`,
      message: lines(
        `sheepdog stopped ${what} manager${pid} of ${name}; a fresh one starts.`,
        why && `Reason: ${why}`,
        `See: sheepdog status --program ${arg}`,
      ),
      priority: 3,
      tags: ["arrows_counterclockwise"],
    };
  },
  api_errors: ({ e, name, arg, why }) => {
    const pid = e.pid !== undefined ? ` (pid ${e.pid})` : "";
    return {
      title: `${name}: the manager is getting API errors`,
      message: lines(
        `The manager${pid} of ${name} is stuck on API errors. Claude Code retries by itself; sheepdog leaves it, and restarts it only if it is still silent at stale_after.`,
        why && `Evidence: ${why}`,
        `See: sheepdog status --program ${arg}`,
      ),
      priority: 3,
      tags: ["warning"],
    };
  },
  blocked: ({ e, name, arg, why, screen: allowed }) => {
    const pid = e.pid !== undefined ? ` (pid ${e.pid})` : "";
    const screen = screenOf(e, allowed);
    // Held before its claim (rule 12): replaced after claim_grace, and every start alike until
    // the cause is fixed; doctor names the permission setting when that is it.
    if (e.waiting_for !== undefined)
      return {
        title: `${name}: a starting manager waits for a person`,
        message: lines(
          `The manager${pid} sheepdog started for ${name} waits for a person before it has claimed: ${e.waiting_for}. It is replaced once claim_grace has passed, and every new start will wait the same way until the cause is fixed.`,
          why && `Evidence: ${why}`,
          screen && `The screen shows:\n${screenEnd(screen, 1500)}`,
          `See: sheepdog doctor --program ${arg}`,
        ),
        priority: 4,
        tags: ["raising_hand"],
      };
    return {
      title: `${name}: the manager waits for a person`,
      message: lines(
        `The manager${pid} of ${name} is held at a prompt only a person can answer. sheepdog does not restart it before stale_after.`,
        why && `Evidence: ${why}`,
        screen && `The screen shows:\n${screenEnd(screen, 1500)}`,
        `See: sheepdog status --program ${arg}`,
      ),
      priority: 4,
      tags: ["raising_hand"],
    };
  },
  lease_lost: ({ e, name, arg, why }) => {
    const holder = e.holder !== undefined ? ` ${e.holder} holds it now.` : "";
    return {
      title: `${name}: this host lost the lease`,
      message: lines(
        `This host no longer holds the lease of ${name}, so it stopped its own manager (if one ran) and starts none.${holder}`,
        why && `Reason: ${why}`,
        `See: sheepdog status --fleet (and sheepdog journal --program ${arg})`,
      ),
      priority: 4,
      tags: ["warning"],
    };
  },
  lease_taken_over: ({ e, name, arg, why }) => {
    const from = e.from ?? "another host";
    return {
      title: `${name} moved here from ${from}`,
      message: lines(
        `The lease of ${name} was not renewed by ${from} for ttl + margin, so this host took it over and runs the manager now. Look at ${from}: its watchdog, its network, or the host itself stopped.`,
        why && `Reason: ${why}`,
        `See: sheepdog status --fleet (and sheepdog status --program ${arg})`,
      ),
      priority: 4,
      tags: ["twisted_rightwards_arrows"],
    };
  },
  paused: ({ e, name, arg, why, now }) => {
    const usage = e.window !== undefined || /limit|usage|%/i.test(why ?? "");
    const until = e.until;
    return {
      title: usage ? `${name} paused at a usage limit` : `${name} paused`,
      message: lines(
        `${name} is paused; it lifts ${untilText(until, now)} and the watchdog carries on by itself.`,
        why && `Reason: ${why}`,
        `See: sheepdog status --program ${arg}`,
      ),
      priority: 3,
      tags: ["pause_button"],
    };
  },
  needs_person: ({ e, name, arg, now }) => {
    const until = typeof e.until === "string" ? e.until : undefined;
    const said = typeof e.limit_text === "string" ? e.limit_text : null;
    const advice = typeof e.needs_person === "string" ? e.needs_person : null;
    return {
      title: `${name}: a person must act on its seat's usage`,
      message: lines(
        said && `Claude Code refused the manager: "${clip(said, 500)}".`,
        `It names no reset, so the limit will not lift by itself: ${advice ? clip(advice, 300) : "see what it said"}.`,
        `${name} is paused; sheepdog looks again ${untilText(until, now)} (usage.pause_fallback) and pauses again, without another page, while the refusal lasts.`,
        `See: sheepdog status --program ${arg}`,
      ),
      priority: 4,
      tags: ["warning", "pause_button"],
    };
  },
  start_failed: ({ e, name, arg, why, screen: allowed }) => {
    const screen = screenOf(e, allowed);
    return {
      title: `${name}: the manager did not start`,
      message: lines(
        `sheepdog could not start a manager of ${name}; it tries again on the next tick, and stands down after repeated failures.`,
        why && `Reason: ${why}`,
        screen && `The screen showed:\n${screenEnd(screen, 1500)}`,
        `See: sheepdog journal --program ${arg}`,
      ),
      priority: 4,
      tags: ["warning"],
    };
  },
  cleared: ({ name, arg, why }) => {
    return {
      title: `${name} resumed`,
      message: lines(
        `A person cleared the stand-down of ${name}; the watchdog starts a manager on its next tick.`,
        why && `Note: ${why}`,
        `See: sheepdog status --program ${arg}`,
      ),
      priority: 2,
      tags: ["white_check_mark"],
    };
  },
  finished: ({ name, arg, why }) => {
    return {
      title: `${name} finished`,
      message: lines(
        `The manager of ${name} says the backlog is done; nothing starts until it is reopened.`,
        why && `Note: ${why}`,
        `See: sheepdog journal --program ${arg} (more work: sheepdog reopen --program ${arg})`,
      ),
      priority: 2,
      tags: ["checkered_flag"],
    };
  },
};

/** The stand-down page again, saying it is a reminder and for how long it has held. */
export function composeReminder(
  standDown: EventOf<"stood_down">,
  n: number,
  of: number,
  program: { name: string; arg: string; screen?: boolean },
  now: number,
): Page {
  const first = composePage("stood_down", standDown, program, now);
  const since = parseIso(standDown.at);
  const age = Number.isNaN(since) ? "" : ` for ${formatDuration(now - since)}`;
  return {
    ...first,
    title: `${program.name} still stood down (reminder ${n} of ${of})`,
    message: `${program.name} has been stood down${age}.\n${first.message}`,
  };
}

/** The page `sheepdog page --test` sends. */
export function testPage(program: { name: string; arg: string }): Page {
  return {
    title: `${program.name}: sheepdog test page`,
    message: `A test page from sheepdog for ${program.name}: pages reach this topic. Nothing to do.`,
    priority: 2,
    tags: ["test_tube"],
  };
}
