import { readFileSync } from "node:fs";

/**
 * TEST HOOK (issue 14's clock-step tests): with `SHEEPDOG_CLOCK_FILE` set, this process's
 * `Date.now` is shifted by the milliseconds written in that file, as if the wall clock had been
 * stepped. Every process of a test (ticks and the managers they start, which inherit the
 * variable) reads the same file, so one write steps the clock for all of them. Unset (every
 * real run), it costs one environment read.
 */
export function applyClockStep(): void {
  const file = process.env.SHEEPDOG_CLOCK_FILE;
  if (!file) return;
  let offset = 0;
  try {
    offset = Number(readFileSync(file, "utf8").trim());
  } catch {
    return;
  }
  if (!Number.isFinite(offset) || offset === 0) return;
  const real = Date.now;
  Date.now = () => real() + offset;
}
