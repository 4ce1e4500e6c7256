// Reads what rule 12 asks about a start not yet claimed (issue 33): its pane's screen and its
// session's Notification hook record, each bounded (one capture, one small file).
import { statSync } from "node:fs";
import { basename } from "node:path";
import type { ProgramContext } from "../config/context.js";
import type { StartRecord } from "../journal/replay.js";
import { agentScreen } from "../launch/agent-screen.js";
import { screenTail } from "../launch/claude-screen.js";
import { hasPane, launchedOf, launcherFor } from "../launch/index.js";
import { readHookRecords } from "../usage/hook-records.js";
import { waitsForPerson } from "../usage/notification-kinds.js";
import { lookupSession } from "../usage/sessions.js";
import type { HeldStartFacts } from "./held-start.js";
import { holderTranscript } from "./holder-transcript.js";

/** The start's screen (a pane launcher's), or null. */
export async function startScreen(
  program: ProgramContext,
  start: StartRecord,
): Promise<string | null> {
  if (!hasPane(start)) return null;
  try {
    const launcher = await launcherFor(start.launcher);
    return await launcher.screen(program, launchedOf(start));
  } catch {
    return null;
  }
}

/** The start's session's Notification record since its launch, and its transcript's growth. */
export function startNotification(
  program: ProgramContext,
  start: StartRecord,
): Pick<HeldStartFacts, "notification" | "transcript_grew_at"> & { session: string | null } {
  const none = { notification: null, transcript_grew_at: null, session: null };
  if (start.pid === undefined || start.start_time === undefined) return none;
  const proc = { pid: start.pid, start_time: start.start_time };
  let transcript: string | null = null;
  try {
    transcript = holderTranscript(program, proc);
  } catch {
    // no transcript: less evidence
  }
  const session =
    lookupSession(proc)?.session_id ?? (transcript ? basename(transcript, ".jsonl") : null);
  if (!session) return none;
  let grew: string | null = null;
  try {
    if (transcript) grew = new Date(statSync(transcript).mtimeMs).toISOString();
  } catch {
    // gone meanwhile
  }
  const n = readHookRecords(session).notification;
  const since = Date.parse(start.launch_began ?? start.at);
  const notification =
    n && Date.parse(n.at) >= since && waitsForPerson(n.notification_type)
      ? { at: n.at, type: n.notification_type, message: n.message }
      : null;
  return { notification, transcript_grew_at: grew, session };
}

export async function readHeldStart(
  program: ProgramContext,
  start: StartRecord,
): Promise<HeldStartFacts> {
  const screen = await startScreen(program, start);
  const { notification, transcript_grew_at } = startNotification(program, start);
  // Read by the manager's own agent's rules: a Codex dialog is drawn unlike Claude's.
  const seen = agentScreen(program.config);
  return {
    // The usage-limit dialog is the refusal rule's (a pause, never a `blocked` page).
    dialog: screen && !seen.limitDialog(screen) ? seen.dialog(screen) : null,
    screen: screen ? screenTail(screen) : null,
    notification,
    transcript_grew_at,
  };
}
