/**
 * A program's `watchdog.interval` as a node-cron expression (six fields, seconds first), or null
 * when no cron step can say it (90s, 7m): the watcher's once-a-second check covers those.
 * Steps are aligned to the clock, as the timer's OnCalendar slots are.
 */
export function cronOf(intervalMs: number): string | null {
  if (intervalMs < 1000 || intervalMs % 1000 !== 0) return null;
  const s = intervalMs / 1000;
  if (s < 60) return 60 % s === 0 ? `*/${s} * * * * *` : null;
  if (s % 60 !== 0) return null;
  const m = s / 60;
  if (m < 60) return 60 % m === 0 ? `0 */${m} * * * *` : null;
  if (m % 60 !== 0) return null;
  const h = m / 60;
  if (h < 24) return 24 % h === 0 ? `0 0 */${h} * * *` : null;
  return h === 24 ? "0 0 0 * * *" : null;
}
