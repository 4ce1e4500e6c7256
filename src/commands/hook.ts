// `sheepdog hook stop-failure|stop|notification`: Claude Code's hooks. `stop-failure` (DESIGN §5):
// A turn that stopped at a usage limit is recorded at once as a refusal reading for the seat,
// so the next tick pauses without waiting to find it in the transcript; every other stop is
// ignored. Like `statusline` it never fails loudly: exit 0, at most one line on stdout.
import { EXIT, UsageError } from "../errors.js";
import { quiet } from "../usage/hook-quiet.js";
import {
  codexRolloutSeat,
  type HookKind,
  hookRecordOf,
  type StopRecord,
  writeHookRecord,
} from "../usage/hook-records.js";
import { readStdin } from "../util/stdin.js";

/**
 * `Stop` and `Notification` (DESIGN §14): recorded per session for the activity verdict. No
 * output, ever, and exit 0: a Stop hook's output or exit 2 would keep Claude from stopping.
 * Codex's Stop (DESIGN §19) names its rollout: that is recorded for the Codex process too
 * (src/usage/codex-stop-session.ts), so the watchdog finds the manager's own rollout.
 */
async function record(kind: HookKind): Promise<number> {
  try {
    // at most 1 MB, within 5 s: a stdin that never closes does not hang the turn
    const found = hookRecordOf(kind, JSON.parse(await readStdin()), Date.now());
    if (!found) return EXIT.ok;
    // Codex's rollout is recorded for its process first: whoever sees the Stop record then
    // finds the session too.
    const seat = kind === "stop" ? codexRolloutSeat(found.transcript_path) : null;
    if (seat) {
      try {
        (await import("../usage/codex-stop-session.js")).recordCodexSession(
          found as StopRecord,
          seat,
        );
      } catch (err) {
        quiet("recording the Codex session", err);
      }
    }
    writeHookRecord(kind, found);
  } catch (err) {
    quiet(`recording the ${kind} payload`, err);
  }
  return EXIT.ok;
}

const USAGE = `usage: sheepdog hook stop-failure|stop|notification   (Claude Code's StopFailure, Stop and Notification hooks; Codex's Stop)`;

export async function run(argv: string[]): Promise<number> {
  const [event, ...rest] = argv;
  if (rest.length > 0) throw new UsageError(USAGE);
  // Its own bundle in the hot path (dist/hot/hook-stop-failure.cjs): only it reads and writes
  // usage readings, whose zod schemas Stop and Notification would otherwise load every turn.
  if (event === "stop-failure")
    return await (await import("../usage/stop-failure-hook.js")).stopFailure();
  if (event === "stop" || event === "notification") return record(event);
  throw new UsageError(USAGE);
}
