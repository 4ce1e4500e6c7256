// The activity verdict (DESIGN §14): whether a quiet manager is working, waiting, idle, wedged,
// retrying the API, or blocked at a prompt, from evidence gather read. Pure: no I/O, no clock.
// Evidence only ever makes a restart sooner; a verdict never delays rule 9.
import { showsLimitDialog } from "../../launch/claude-screen.js";
import { waitsForPerson } from "../../usage/notification-kinds.js";
import { parseRefusal } from "../../usage/refusal.js";
import type { TailState } from "../../usage/transcript-tail.js";
import { formatDuration } from "../../util/duration.js";

export const ACTIVITY_VERDICTS = [
  "working",
  "waiting",
  "idle",
  "wedged",
  "api_retry",
  "blocked",
  "interrupted",
  "at_limit",
  "unknown",
] as const;
export type ActivityVerdict = (typeof ACTIVITY_VERDICTS)[number];

/**
 * Why an API error stopped the turn, as the watchdog answers it (DESIGN §14 rule 9c). A usage
 * limit is not one: that turn is `at_limit`.
 */
export type ApiCause = "usage_limit" | "transient" | "auth";

/** A live descendant of the holder, as evidence. */
export interface ChildProcess {
  pid: number;
  /** `comm: args`, clipped. */
  what: string;
  /** A shell (a background task runs in one) or `sheepdog wait`: something that will wake it. */
  wakes: boolean;
}

/** What gather read about a quiet holder (times ISO). */
export interface ActivityEvidence {
  transcript: string | null;
  tail: TailState;
  /** The newest change to the transcript or a sub-agent's transcript. */
  grew_at: string | null;
  /** Whether `grew_at` is a sub-agent's. */
  grew_in_subagent: boolean;
  children: ChildProcess[];
  /** CPU (ms) the holder's tree used over `cpu_window_ms`; null: not measured. */
  cpu_ms: number | null;
  cpu_window_ms: number;
  /** The session's last `Stop` hook record. */
  stop: { at: string; background_count: number; cron_count: number } | null;
  /** The session's last `Notification` hook record. */
  notification: { at: string; type: string | null; message: string | null } | null;
  /** The manager's pane as the launcher reads it (tmux, Herdr); null: none, or unreadable. */
  screen?: string | null;
}

export interface Activity {
  verdict: ActivityVerdict;
  /** The evidence, in words, each a short sentence. */
  evidence: string[];
  /** When the spell began: the turn's end (idle), the call's start (wedged), the prompt (blocked). */
  since?: string;
  cause?: ApiCause;
}

/** A tree using this share of one core over the sample is working. */
export const CPU_BUSY_SHARE = 0.05;
/** Bash's own limit without a `timeout` input, and its most (Claude Code 2.1.328). */
export const BASH_DEFAULT_TIMEOUT_MS = 120_000;
export const BASH_MAX_TIMEOUT_MS = 600_000;
/** A Stop this long before the turn's last entry is still that turn's (the hook runs first). */
const STOP_SLACK_MS = 60_000;

const fmt = formatDuration;
const t = (iso: string | null | undefined): number => (iso ? Date.parse(iso) : Number.NaN);

/** A tool's own time limit (ms), when Claude Code enforces one we know: Bash's. */
export function toolLimitMs(tool: {
  name: string;
  timeout_ms: number | null;
  limit_ms?: number;
}): number | null {
  if (tool.limit_ms !== undefined) return tool.limit_ms; // the agent's reader knows it
  if (tool.name !== "Bash") return null;
  return Math.min(tool.timeout_ms ?? BASH_DEFAULT_TIMEOUT_MS, BASH_MAX_TIMEOUT_MS);
}

/** What a turn's API error calls for: the refusal rule, a page, or a stand-down. */
export function apiCauseOf(e: {
  status: number | null;
  error: string | null;
  text: string;
  cause?: ApiCause;
}): ApiCause {
  if (e.cause) return e.cause; // the agent's reader named it (Codex's codex_error_info)
  if (
    e.status === 401 ||
    e.status === 402 ||
    e.status === 403 ||
    e.error === "authentication_failed" ||
    e.error === "billing_error"
  )
    return "auth";
  // The refusal rule's own reading of a limit text (DESIGN §5); a time is not needed to tell.
  const limitText = parseRefusal(e.text, 0, "UTC") !== null;
  if (e.error === "rate_limit" && limitText) return "usage_limit";
  return "transient";
}

/** The verdict for a live holder whose heartbeat is older than `quiet_after`. */
export function activityOf(
  ev: ActivityEvidence,
  now: number,
  quietAfter: number,
  /** The nudge of this idle spell (epoch ms), once one was sent. */
  nudgedAt: number | null = null,
): Activity {
  const { tail } = ev;
  const ago = (iso: string) => `${fmt(Math.max(0, now - t(iso)))} ago`;
  // Claude Code's usage-limit dialog (a reset days away): no hook runs for it, and it waits for
  // a person; the refusal rule pauses the seat, and no `blocked` page is sent (DESIGN §14).
  if (showsLimitDialog(ev.screen ?? null)) {
    const limited = tail.state === "ended" && tail.error ? ` after "${tail.error.text}"` : "";
    return {
      verdict: "at_limit",
      ...(tail.state === "ended" && tail.error && tail.at ? { since: tail.at } : {}),
      evidence: [
        `Claude Code's usage-limit dialog is on the screen ("What do you want to do? … Stop and wait for limit to reset")${limited}: it will not go on by itself`,
      ],
    };
  }
  if (!ev.transcript && !ev.stop && !ev.notification)
    return {
      verdict: "unknown",
      evidence: ["no transcript and no hook record found for the holder's session"],
    };
  const grew = ev.grew_at !== null && now - t(ev.grew_at) < quietAfter;
  const busy = ev.cpu_ms !== null && ev.cpu_ms >= CPU_BUSY_SHARE * ev.cpu_window_ms;
  const cpuWords =
    ev.cpu_ms === null
      ? "its CPU could not be sampled"
      : `its process tree used ${ev.cpu_ms} ms of CPU in ${fmt(ev.cpu_window_ms)}`;
  const growthWords = ev.grew_at
    ? `the ${ev.grew_in_subagent ? "sub-agent's " : ""}transcript last grew ${ago(ev.grew_at)}`
    : "no transcript growth was seen";

  // Blocked: a prompt a person must answer came after the last thing the session wrote.
  const n = ev.notification;
  if (n && waitsForPerson(n.type) && tail.state !== "ended" && !(t(tail.at) > t(n.at)))
    return {
      verdict: "blocked",
      since: n.at,
      evidence: [
        `Claude Code asked for a person ${ago(n.at)} (${n.type}: ${n.message ?? "no text"})`,
      ],
    };

  // An API error ended the turn, or a request is being retried.
  if (tail.state === "ended" && tail.error) {
    const cause = apiCauseOf(tail.error);
    if (cause === "usage_limit")
      return {
        verdict: "at_limit",
        ...(tail.at ? { since: tail.at } : {}),
        evidence: [
          `the turn ended ${tail.at ? ago(tail.at) : ""} on a usage-limit refusal: ${tail.error.text}`,
        ],
      };
    return {
      verdict: "api_retry",
      cause,
      ...(tail.at ? { since: tail.at } : {}),
      evidence: [
        `the turn ended ${tail.at ? ago(tail.at) : ""} on an API error${tail.error.status ? ` (${tail.error.status})` : ""}: ${tail.error.text || tail.error.error || "no text"}`,
      ],
    };
  }
  if (tail.state === "requesting" && tail.tries >= 2)
    return {
      verdict: "api_retry",
      cause: "transient",
      ...(tail.first_try ? { since: tail.first_try } : {}),
      evidence: [
        `one request was tried ${tail.tries} times${tail.first_try ? ` since ${ago(tail.first_try)}` : ""} with no answer yet: Claude Code retries it`,
      ],
    };

  // A person pressed Esc: someone is at the keyboard (no hook runs for it, DESIGN §14).
  if (tail.state === "interrupted")
    return {
      verdict: "interrupted",
      ...(tail.at ? { since: tail.at } : {}),
      evidence: [`the transcript ends in ${JSON.stringify(tail.text)}`],
    };

  // A sub-agent works on while the main chain's turn has ended (2.1.328 runs them async).
  if (grew && ev.grew_in_subagent) return { verdict: "working", evidence: [growthWords] };

  if (tail.state === "ended") {
    const endedAt = tail.at ?? ev.stop?.at ?? null;
    const stop = ev.stop && endedAt && t(ev.stop.at) >= t(endedAt) - STOP_SLACK_MS ? ev.stop : null;
    const wakers = [
      ...ev.children.filter((c) => c.wakes).map((c) => `a live child (pid ${c.pid} ${c.what})`),
      ...(stop && stop.background_count > 0
        ? [`the Stop hook listed ${stop.background_count} background task(s)`]
        : []),
      ...(stop && stop.cron_count > 0
        ? [`the Stop hook listed ${stop.cron_count} session cron(s)`]
        : []),
    ];
    if (wakers.length > 0)
      return {
        verdict: "waiting",
        evidence: [
          `the turn ended${endedAt ? ` ${ago(endedAt)}` : ""}`,
          `something will wake it: ${wakers.join("; ")}`,
        ],
      };
    // Quiet for quiet_after; or, once nudged, ended again (or never woke) with nothing to wake it.
    const quiet = endedAt !== null && now - t(endedAt) >= quietAfter;
    if (!busy && (quiet || (nudgedAt !== null && endedAt !== null)))
      return {
        verdict: "idle",
        since: endedAt as string,
        evidence: [
          `the turn ended ${ago(endedAt as string)}${nudgedAt !== null && t(endedAt as string) > nudgedAt ? " (after the nudge)" : ""} and nothing will wake it (no background task, no sheepdog wait, no session cron)`,
          growthWords,
          cpuWords,
        ],
      };
  }
  if (grew || busy) return { verdict: "working", evidence: [grew ? growthWords : cpuWords] };

  if (tail.state === "tool_open") {
    const limit = toolLimitMs(tail.tool);
    const open = `a ${tail.tool.name} call has been open since ${ago(tail.tool.since)}`;
    if (limit === null || now - t(tail.tool.since) < limit + quietAfter)
      return {
        verdict: "working",
        evidence: [
          limit === null
            ? `${open} (a tool with no limit of its own the watchdog knows)`
            : `${open}, within its limit of ${fmt(limit)}`,
        ],
      };
    // Without the Notification hook a permission prompt looks the same: say unknown then.
    if (!ev.stop && !ev.notification && ev.children.length === 0)
      return {
        verdict: "unknown",
        evidence: [
          `${open}, past its limit of ${fmt(limit)}, but no hook records were found, so a permission prompt cannot be ruled out`,
        ],
      };
    return {
      verdict: "wedged",
      since: tail.tool.since,
      evidence: [`${open}, past its own limit of ${fmt(limit)}`, growthWords, cpuWords],
    };
  }

  return {
    verdict: "unknown",
    evidence: [
      tail.state === "unknown"
        ? "the transcript's end says nothing about the turn"
        : `the transcript ends ${tail.state.replace("_", " ")}${tail.at ? ` ${ago(tail.at)}` : ""}`,
      growthWords,
    ],
  };
}
