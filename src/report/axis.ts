// The time axis of the picture: tick marks at round local times, and how to write a time.
// Local time because a person reads the report at 7 am in their own day; the zone is named.
import { clock, dayOf } from "../util/local-time.js";

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
