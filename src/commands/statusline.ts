// `sheepdog statusline`: Claude Code's statusLine command. It runs on every update of every
// agent on the host, so it loads only node builtins, zod/mini and small usage modules, never
// reads a transcript whole, and never fails loudly: bad input still prints a line, exit 0.
import { writeSync } from "node:fs";
import { findAgent } from "../process/manager.js";
import { seatFromEnv } from "../usage/host-state.js";
import { appendReadings } from "../usage/readings.js";
import { recordSession } from "../usage/sessions.js";
import { readingsOf, readStatusInput, statusLine } from "../usage/status-input.js";
import { contextTokensOf } from "../usage/transcript.js";
import { readStdin } from "../util/stdin.js";
import { iso } from "../util/time.js";

function quiet(what: string, err: unknown): void {
  // Claude Code shows stderr nowhere useful; say why only when asked to.
  if (process.env.SHEEPDOG_DEBUG)
    process.stderr.write(`sheepdog statusline: ${what}: ${(err as Error).message}\n`);
}

export async function run(_argv: string[]): Promise<number> {
  // at most 1 MB, within 5 s: a stdin that never closes does not hang the statusline
  const raw = await readStdin();
  let value: unknown;
  let note: string | null = null;
  if (!raw.trim()) note = "no status input";
  else {
    try {
      value = JSON.parse(raw);
    } catch {
      note = "unreadable status input";
    }
  }
  const input = readStatusInput(value);
  let tokens = input.context_tokens;
  if (tokens === null && input.transcript_path) tokens = contextTokensOf(input.transcript_path);
  const line = statusLine(input, tokens) || `sheepdog · ${note ?? "no usage yet"}`;
  // fd 1 directly: setting up process.stdout (a pipe under Claude Code) loads the stream stack.
  try {
    writeSync(1, `${line}\n`);
  } catch {
    process.stdout.write(`${line}\n`); // a non-blocking pipe that is full (EAGAIN)
  }

  if (value === undefined) return 0;
  const now = Date.now();
  const seat = seatFromEnv();
  try {
    appendReadings(seat, readingsOf(input), now);
  } catch (err) {
    quiet("recording usage readings", err);
  }
  try {
    const agent = findAgent();
    recordSession({
      pid: agent.pid,
      start_time: agent.start_time,
      transcript_path: input.transcript_path,
      session_id: input.session_id,
      cwd: input.cwd,
      seat,
      context_window_size: input.context_size,
      at: iso(now),
    });
  } catch (err) {
    quiet("recording the session map", err);
  }
  return 0;
}
