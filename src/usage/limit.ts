// STUB (owned by the manager's-side work, issue 4): signatures are the contract; bodies to be written.

export type UsageWindow = "five_hour" | "seven_day";

/** Whether a seat is limited now (DESIGN §5), and until when. */
export interface SeatLimit {
  limited: boolean;
  /** ISO time the limiting window resets, or null when unknown. */
  until: string | null;
  reason: string;
  window: UsageWindow | null;
}

/** Merges the seat's readings and says whether it is limited at `pauseAtPercent`. */
export function seatLimit(
  _seat: string,
  _pauseAtPercent: number,
  _now: number = Date.now(),
): SeatLimit {
  return { limited: false, until: null, reason: "no usage readings yet", window: null };
}
