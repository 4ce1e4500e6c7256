// Codex's Stop hook names the manager's rollout (DESIGN §19): recorded in the session map for
// the Codex process, as the statusline records a Claude Code session, so the watchdog and save
// find the holder's own rollout. A bundle of its own (dist/hot/hook-codex-stop.cjs): Claude
// Code's Stop, every turn, loads none of it (nor zod).
import { findAgent } from "../process/manager.js";
import type { StopRecord } from "./hook-records.js";
import { recordSession } from "./sessions.js";

export function recordCodexSession(stop: StopRecord, seat: string): void {
  const agent = findAgent();
  recordSession({
    pid: agent.pid,
    start_time: agent.start_time,
    transcript_path: stop.transcript_path,
    session_id: stop.session_id,
    cwd: stop.cwd,
    seat,
    at: stop.at,
  });
}
