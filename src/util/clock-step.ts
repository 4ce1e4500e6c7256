import { readFileSync } from "node:fs";

/**
 * TEST HOOK (issue 14's clock-step tests): with `SHEEPDOG_CLOCK_FILE` set, this process's
 * `Date.now` is shifted by the milliseconds written in that file, as if the wall clock had been
 * stepped. Every process of a test (ticks and the managers they start, which inherit the
 * variable) reads the same file, so one write steps the clock for all of them. Unset (every
 * real run), it costs one environment read.
 */
let offset = 0;
let installed = false;

export function applyClockStep(): void {
  const file = process.env.SHEEPDOG_CLOCK_FILE;
  if (!file) return;
  offset = readOffset(file);
  if (installed) return;
  installed = true;
  const real = Date.now;
  Date.now = () => real() + offset;
}

/**
 * A resident process (`watch`) calls this before each pass: the file is read again, so a step
 * written while it runs is seen at its next pass (one small read, and only under the test hook).
 */
export const refreshClockStep = applyClockStep;

/** The step in the file; a missing or unreadable file is no step (as before it was written). */
function readOffset(file: string): number {
  try {
    const n = Number(readFileSync(file, "utf8").trim());
    return Number.isFinite(n) ? n : 0;
  } catch {
    return 0;
  }
}
