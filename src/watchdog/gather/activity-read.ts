// Reads the evidence for the activity verdict (DESIGN §14), only when decide asks for it: a live
// holder whose heartbeat is older than quiet_after. Every read is bounded: the transcript's tail,
// the sub-agent folder's listing, one process-table walk and a short CPU sample.
import { statSync } from "node:fs";
import { agentFor } from "../../agent/index.js";
import type { ProgramContext } from "../../config/context.js";
import type { StartRecord } from "../../journal/replay.js";
import { hasPane, launchedOf, launcherFor } from "../../launch/index.js";
import { sampleTree } from "../../process/tree.js";
import { readHookRecords } from "../../usage/hook-records.js";
import { lookupSession } from "../../usage/sessions.js";
import { envMs } from "../../util/env-ms.js";
import {
  type Activity,
  type ActivityEvidence,
  activityOf,
  type ChildProcess,
} from "../rules/activity.js";
import { holderTranscript } from "./holder-transcript.js";

/** How long the holder's tree is watched for CPU (SHEEPDOG_ACTIVITY_SAMPLE_MS overrides). */
const SAMPLE_MS = 1000;
const SHELLS = new Set(["bash", "sh", "zsh", "dash", "fish", "ksh"]);

function mtime(path: string): number | null {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return null;
  }
}

function childOf(p: { pid: number; comm: string; args: string }): ChildProcess {
  const what = `${p.comm}: ${p.args}`.replace(/\s+/g, " ");
  const wait = /\bsheepdog(?:\.m?js)?\s+wait\b/.test(p.args);
  return {
    pid: p.pid,
    what: what.length > 120 ? `${what.slice(0, 119)}…` : what,
    wakes: wait || SHELLS.has(p.comm),
  };
}

/** Background tasks still running at the Stop (2.1.328 lists each with its `status`). */
function runningCount(tasks: unknown[] | null, fallback: number): number {
  if (!tasks) return fallback;
  return tasks.filter((x) => {
    const s = (x as { status?: unknown })?.status;
    return s === undefined || s === "running" || s === "pending";
  }).length;
}

/**
 * The holder's pane as its launcher reads it (tmux's capture-pane, Herdr's agent read): what
 * shows Claude Code's usage-limit dialog, for which no hook runs. Null without a pane.
 */
async function screenOf(
  program: ProgramContext,
  start: StartRecord | null,
): Promise<string | null> {
  if (!start || start.launcher === "command" || !hasPane(start)) return null;
  try {
    const launcher = await launcherFor(start.launcher);
    return await launcher.screen(program, launchedOf(start));
  } catch {
    return null; // unreadable: less evidence
  }
}

/** Reads the evidence about a live holder and judges it. */
export async function readActivity(
  program: ProgramContext,
  holder: { pid: number; start_time: string; claimed_at?: string },
  now: number,
  /** This spell's nudge (epoch ms), once one was sent. */
  nudgedAt: number | null = null,
  /** The start that launched the holder (its pane), when known. */
  start: StartRecord | null = null,
): Promise<Activity & { transcript: string | null; turn_ended?: boolean }> {
  const agent = agentFor(program.config);
  let transcript: string | null = null;
  try {
    const since = holder.claimed_at ? Date.parse(holder.claimed_at) : Number.NaN;
    transcript = holderTranscript(program, holder, Number.isNaN(since) ? undefined : since);
  } catch {
    // no transcript to read: less evidence
  }
  const session =
    lookupSession(holder)?.session_id ?? (transcript ? agent.sessionOf(transcript) : null);
  const hooks = session ? readHookRecords(session) : { stop: null, notification: null };
  const main = transcript ? mtime(transcript) : null;
  const sub = transcript ? agent.sideGrewAt(transcript) : null;
  const grewInSub = sub !== null && (main === null || sub > main);
  const grew = grewInSub ? sub : main;
  const windowMs = envMs("SHEEPDOG_ACTIVITY_SAMPLE_MS", SAMPLE_MS);
  const [sample, screen] = await Promise.all([
    sampleTree(holder.pid, windowMs),
    screenOf(program, start),
  ]);
  const ev: ActivityEvidence = {
    transcript,
    tail: transcript ? agent.tail(transcript) : { state: "unknown", at: null },
    grew_at: grew !== null ? new Date(grew).toISOString() : null,
    grew_in_subagent: grewInSub,
    // A child wakes only an agent that is told when it ends (not Codex: DESIGN §19).
    children: sample.tree.map((p) => {
      const c = childOf(p);
      return agent.backgroundWakes ? c : { ...c, wakes: false };
    }),
    cpu_ms: sample.cpu_ms,
    cpu_window_ms: windowMs,
    stop: hooks.stop
      ? {
          at: hooks.stop.at,
          background_count: runningCount(hooks.stop.background_tasks, hooks.stop.background_count),
          cron_count: hooks.stop.cron_count,
        }
      : null,
    notification: hooks.notification
      ? {
          at: hooks.notification.at,
          type: hooks.notification.notification_type,
          message: hooks.notification.message,
        }
      : null,
    screen,
  };
  return {
    ...activityOf(ev, now, program.policy.quietAfter, nudgedAt),
    transcript,
    // Whether it sits at its prompt: what a resume line after a usage pause needs (DESIGN §19).
    turn_ended: ev.tail.state === "ended",
  };
}
