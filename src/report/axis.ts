// The time axis of the picture: tick marks at round local times, and how to write a time.
// Local time because a person reads the report at 7 am in their own day; the zone is named.

const S = 1000;
const M = 60 * S;
const H = 60 * M;
const STEPS = [
  S,
  2 * S,
  5 * S,
  10 * S,
  15 * S,
  30 * S,
  M,
  2 * M,
  5 * M,
  10 * M,
  15 * M,
  30 * M,
  H,
  2 * H,
  3 * H,
  6 * H,
  12 * H,
  24 * H,
];

export interface AxisTick {
  t: number;
  label: string;
  /** The day, on the first tick and wherever the day changes. */
  day: string | null;
}

const pad = (n: number) => String(n).padStart(2, "0");
const MONTHS = "Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec".split(" ");

export function dayOf(t: number): string {
  const d = new Date(t);
  return `${MONTHS[d.getMonth()]} ${d.getDate()}`;
}

/** `03:12`, or `03:12:07` when seconds matter. */
export function clock(t: number, seconds = false): string {
  const d = new Date(t);
  const hm = `${pad(d.getHours())}:${pad(d.getMinutes())}`;
  return seconds ? `${hm}:${pad(d.getSeconds())}` : hm;
}

/** A time for tables and titles: `Nov 30 03:12:07`. */
export function stamp(at: string | number): string {
  const t = typeof at === "number" ? at : Date.parse(at);
  return `${dayOf(t)} ${clock(t, true)}`;
}

/** The local zone's name and offset: `Europe/Berlin, UTC+01:00`. */
export function zoneName(at: number): string {
  const name = Intl.DateTimeFormat().resolvedOptions().timeZone ?? "local time";
  const off = -new Date(at).getTimezoneOffset();
  const sign = off < 0 ? "-" : "+";
  const abs = Math.abs(off);
  return `${name}, UTC${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
}

/** Ticks at round local times, about `want` of them, across [from, to]. */
export function axisTicks(from: number, to: number, want = 8): AxisTick[] {
  const span = Math.max(to - from, S);
  const step = STEPS.find((s) => span / s <= want) ?? 24 * H;
  const d = new Date(from);
  const midnight = new Date(d.getFullYear(), d.getMonth(), d.getDate()).getTime();
  const first = midnight + Math.ceil((from - midnight) / step) * step;
  const ticks: AxisTick[] = [];
  let lastDay = "";
  for (let t = first; t <= to; t += step) {
    const day = dayOf(t);
    ticks.push({
      t,
      label: step >= 24 * H ? day : clock(t, step < M),
      day: day !== lastDay && step < 24 * H ? day : null,
    });
    lastDay = day;
  }
  return ticks;
}
