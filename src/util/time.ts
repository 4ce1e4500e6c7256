/** Every time sheepdog writes is an ISO-8601 UTC string. */
export function iso(ms: number = Date.now()): string {
  return new Date(ms).toISOString();
}

/** Milliseconds since the epoch of an ISO string, or NaN. */
export function parseIso(text: string | undefined | null): number {
  if (!text) return Number.NaN;
  return Date.parse(text);
}
