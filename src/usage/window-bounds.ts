// How far ahead a window's reset can be (DESIGN §5): a reset more than the window's length
// after the moment it was read, or before it, cannot be right (a date read into next year, a
// clock time read in the wrong zone). One bound for refusal texts and statusline readings.
/** The windows a refusal can name (the weekly family is bounded as seven_day). */
export type RefusalWindow = "five_hour" | "seven_day";

const HOUR = 3_600_000;
export const WINDOW_MS: Record<RefusalWindow, number> = {
  five_hour: 5 * HOUR,
  seven_day: 7 * 24 * HOUR,
};
/** Slack over the window's length: resets are printed rounded, and clocks differ a little. */
export const RESET_SLACK_MS = 15 * 60_000;

/**
 * Whether a reset at `resetMs`, read at `readAtMs`, fits its window: no further ahead than the
 * window's length (plus slack), and, for a refusal, not before it (resets are printed to the
 * minute, so a minute back is allowed). A statusline reading's past reset is the proof that the
 * window reopened (an idle session re-renders its last values): `pastIsFine`.
 */
export function plausibleReset(
  window: RefusalWindow,
  resetMs: number,
  readAtMs: number,
  opts: { pastIsFine?: boolean } = {},
): boolean {
  if (!Number.isFinite(resetMs)) return false;
  if (resetMs > readAtMs + WINDOW_MS[window] + RESET_SLACK_MS) return false;
  return opts.pastIsFine === true || resetMs >= readAtMs - 60_000;
}
