// `sheepdog hook stop-failure|stop|notification`: Claude Code's hooks. `stop-failure` (DESIGN §5):
// A turn that stopped at a usage limit is recorded at once as a refusal reading for the seat,
// so the next tick pauses without waiting to find it in the transcript; every other stop is
// ignored. Like `statusline` it never fails loudly: exit 0, at most one line on stdout.
import { readFileSync, writeSync } from "node:fs";
import { EXIT, UsageError } from "../errors.js";
import { type HookKind, hookRecordOf, writeHookRecord } from "../usage/hook-records.js";
import { seatFromEnv } from "../usage/host-state.js";
import { refusalReadingOf } from "../usage/limit.js";
import { appendReadings } from "../usage/readings.js";
import { readStopFailure, refusalOfStopFailure } from "../usage/stop-failure.js";

/** `usage.pause_fallback`'s default: the hook belongs to no program, so it has no setting. */
const FALLBACK_MS = 3600_000;

function quiet(what: string, err: unknown): void {
  if (process.env.SHEEPDOG_DEBUG)
    process.stderr.write(`sheepdog hook: ${what}: ${(err as Error).message}\n`);
}

function stopFailure(): number {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(0, "utf8"));
  } catch (err) {
    quiet("reading the payload", err);
    return EXIT.ok;
  }
  const stop = readStopFailure(raw);
  const now = Date.now();
  const found = stop ? refusalOfStopFailure(stop, now) : null;
  if (!stop || !found) return EXIT.ok;
  // Recorded before anything else is read: `claude -p` kills its hooks when it exits
  // (2.1.328), so a hook that first read the transcript could be gone before it wrote.
  try {
    const seat = seatFromEnv();
    const [reading] = appendReadings(seat, [refusalReadingOf(found, FALLBACK_MS, now)], now);
    writeSync(1, `sheepdog: usage limit on ${seat} recorded until ${reading?.resets_at}\n`);
  } catch (err) {
    quiet("recording the refusal", err);
  }
  return EXIT.ok;
}

/**
 * `Stop` and `Notification` (DESIGN §14): recorded per session for the activity verdict. No
 * output, ever, and exit 0: a Stop hook's output or exit 2 would keep Claude from stopping.
 */
function record(kind: HookKind): number {
  try {
    const found = hookRecordOf(kind, JSON.parse(readFileSync(0, "utf8")), Date.now());
    if (found) writeHookRecord(kind, found);
  } catch (err) {
    quiet(`recording the ${kind} payload`, err);
  }
  return EXIT.ok;
}

const USAGE = `usage: sheepdog hook stop-failure|stop|notification   (Claude Code's StopFailure, Stop and Notification hooks)`;

export async function run(argv: string[]): Promise<number> {
  const [event, ...rest] = argv;
  if (rest.length > 0) throw new UsageError(USAGE);
  if (event === "stop-failure") return stopFailure();
  if (event === "stop" || event === "notification") return record(event);
  throw new UsageError(USAGE);
}
