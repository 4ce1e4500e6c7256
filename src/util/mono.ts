import { readFileSync } from "node:fs";

// The clock that no step moves (DESIGN §6): CLOCK_MONOTONIC (libuv's hrtime), the same for
// every process of one boot. A stamp keeps it beside its wall time, so a later reader can tell
// how much of the wall time since was a step back: wall time alone reads a clock stepped back an
// hour as an hour less silence, and every time rule comes an hour late. Only a step back is read
// from it (monotonic time since a stamp beyond the wall time since): Linux's CLOCK_MONOTONIC
// stops while the host sleeps, macOS's clock (libuv's mach_continuous_time) counts the sleep
// as wall time does, so a sleep is never a step either way; sleeps stay the gaps' business.

export interface MonoStamp {
  /** Milliseconds on the monotonic clock. */
  mono_ms: number;
  /** This boot's id (Linux `boot_id`); null where there is none (macOS). */
  boot: string | null;
}

let bootCache: string | null | undefined;

function bootId(): string | null {
  if (bootCache !== undefined) return bootCache;
  try {
    bootCache = readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim() || null;
  } catch {
    bootCache = null;
  }
  return bootCache;
}

export function monoNow(): MonoStamp {
  return { mono_ms: Number(process.hrtime.bigint() / 1_000_000n), boot: bootId() };
}

/** Slewing (NTP's ≤ 500 ppm) and the instants two processes read: not a step. */
const slack = (elapsed: number) => 2000 + elapsed / 1000;

/**
 * How far the wall clock was stepped back between a stamp and now (ms, 0 when it was not, or
 * when the two cannot be compared: no monotonic time, another boot). The monotonic time since
 * the stamp, less the wall time since: a sleep only ever makes this smaller.
 */
export function steppedBack(
  wallThen: number,
  then: Partial<MonoStamp> | null | undefined,
  wallNow: number,
  now: MonoStamp | null | undefined,
): number {
  if (!now || typeof then?.mono_ms !== "number" || !Number.isFinite(wallThen)) return 0;
  if ((then.boot ?? null) !== now.boot) return 0;
  const mono = now.mono_ms - then.mono_ms;
  if (mono < 0) return 0; // another boot on a host with no boot id
  const back = mono - (wallNow - wallThen);
  return back > slack(mono) ? back : 0;
}
