import { UsageError } from "../errors.js";
import { formatDuration } from "../util/duration.js";

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** Minute steps that divide an hour, and hour steps that divide a day: calendar-expressible. */
export const CALENDAR_MINUTES = [1, 2, 3, 4, 5, 6, 10, 12, 15, 20, 30] as const;
export const CALENDAR_HOURS = [1, 2, 3, 4, 6, 8, 12, 24] as const;

/**
 * How often the tick runs, as calendar steps when it can be: a calendar schedule (unlike a
 * plain "every N seconds") runs a slot missed while the machine slept once on wake.
 */
export type Schedule =
  | { kind: "minutes"; step: number }
  | { kind: "hours"; step: number }
  | { kind: "seconds"; seconds: number };

export function scheduleOf(ms: number): Schedule {
  if (ms % HOUR === 0 && ms <= DAY && DAY % ms === 0) return { kind: "hours", step: ms / HOUR };
  if (ms % MINUTE === 0 && ms < HOUR && HOUR % ms === 0)
    return { kind: "minutes", step: ms / MINUTE };
  return { kind: "seconds", seconds: Math.max(1, Math.round(ms / 1000)) };
}

export interface CalendarEntry {
  Hour?: number;
  Minute: number;
}

/** launchd `StartCalendarInterval` entries, or null when only `StartInterval` can say it. */
export function launchdCalendar(schedule: Schedule): CalendarEntry[] | null {
  if (schedule.kind === "minutes")
    return Array.from({ length: 60 / schedule.step }, (_, i) => ({ Minute: i * schedule.step }));
  if (schedule.kind === "hours") {
    if (schedule.step === 1) return [{ Minute: 0 }];
    return Array.from({ length: 24 / schedule.step }, (_, i) => ({
      Hour: i * schedule.step,
      Minute: 0,
    }));
  }
  return null;
}

/** systemd `OnCalendar=` for an interval (ms); exit 2 for one a calendar cannot express. */
export function systemdOnCalendar(ms: number): string {
  const schedule = scheduleOf(ms);
  const text = formatDuration(ms);
  if (schedule.kind === "minutes") return `*:0/${schedule.step}`;
  if (schedule.kind === "hours") return `0/${schedule.step}:00`;
  throw new UsageError(
    `--interval ${text}: a systemd timer here runs at calendar times, so the interval must be ` +
      `minutes that divide an hour (${CALENDAR_MINUTES.map((m) => `${m}m`).join(", ")}) or hours ` +
      `that divide a day (${CALENDAR_HOURS.map((h) => `${h}h`).join(", ")})`,
  );
}
