const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
const DURATION = /^(\d+[smhd])+$/;
const PART = /(\d+)([smhd])/g;

/** True for `90s`, `5m`, `2h`, `1d`, `1h30m`. */
export function isDuration(text: string): boolean {
  return DURATION.test(text);
}

/** Milliseconds in a duration such as `45m`; throws on anything else. */
export function parseDuration(text: string): number {
  if (!isDuration(text)) throw new Error(`not a duration: ${JSON.stringify(text)}`);
  let ms = 0;
  for (const [, n, unit] of text.matchAll(PART))
    ms += Number(n) * UNIT_MS[unit as keyof typeof UNIT_MS];
  return ms;
}

/** Short human form of a span: `42s`, `7m`, `3h12m`, `2d4h`. */
export function formatDuration(ms: number): string {
  const sign = ms < 0 ? "-" : "";
  let s = Math.round(Math.abs(ms) / 1000);
  if (s < 60) return `${sign}${s}s`;
  const d = Math.floor(s / 86400);
  s -= d * 86400;
  const h = Math.floor(s / 3600);
  s -= h * 3600;
  const m = Math.floor(s / 60);
  s -= m * 60;
  if (d > 0) return `${sign}${d}d${h ? `${h}h` : ""}`;
  if (h > 0) return `${sign}${h}h${m ? `${m}m` : ""}`;
  return `${sign}${m}m${s ? `${s}s` : ""}`;
}

export const DURATION_EXPECTED = "a positive duration such as 90s, 5m, 2h or 1d";

/** A duration longer than zero: every setting and flag that takes one refuses `0s` (DESIGN §16). */
export function isPositiveDuration(text: string): boolean {
  return isDuration(text) && parseDuration(text) > 0;
}
