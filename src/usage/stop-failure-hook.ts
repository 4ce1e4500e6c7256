// `sheepdog hook stop-failure` (DESIGN §5): a usage-limit StopFailure is recorded as a refusal
// at once. Loaded only for that event (its own bundle in the hot path: see scripts/build.mjs).
import { writeSync } from "node:fs";
import { EXIT } from "../errors.js";
import { readStdin } from "../util/stdin.js";
import { quiet } from "./hook-quiet.js";
import { seatFromEnv } from "./host-state.js";
import { refusalReadingOf } from "./limit.js";
import { appendReadings } from "./readings.js";
import { readStopFailure, refusalOfStopFailure } from "./stop-failure.js";

/** `usage.pause_fallback`'s default: the hook belongs to no program, so it has no setting. */
const FALLBACK_MS = 3600_000;

export async function stopFailure(): Promise<number> {
  let raw: unknown;
  try {
    // at most 1 MB, within 5 s: a stdin that never closes does not hang the turn
    raw = JSON.parse(await readStdin());
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
