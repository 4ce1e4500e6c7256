// Wall-clock dates and times in a named zone, and back to instants (no dependency: Intl only):
// Claude Code's refusal texts (src/usage/refusal.ts) and Codex's (src/agent/codex/rollout.ts).

const formatters = new Map<string, Intl.DateTimeFormat>();

export interface WallTime {
  y: number;
  /** 1–12. */
  mo: number;
  d: number;
  h: number;
  mi: number;
  s: number;
  /** 0 = Sunday. */
  wd: number;
}

/** Whether `zone` is an IANA zone name this runtime knows. */
export function validZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** The wall-clock date and time of an instant (epoch ms) in a zone. */
export function wallTimeOf(ms: number, zone: string): WallTime {
  let f = formatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat("en-US", {
      timeZone: zone,
      hourCycle: "h23",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric",
      weekday: "short",
    });
    formatters.set(zone, f);
  }
  const p: Record<string, string> = {};
  for (const part of f.formatToParts(ms)) p[part.type] = part.value;
  return {
    y: Number(p.year),
    mo: Number(p.month),
    d: Number(p.day),
    h: Number(p.hour),
    mi: Number(p.minute),
    s: Number(p.second),
    wd: ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"].indexOf(p.weekday ?? ""),
  };
}

/** The zone's offset from UTC (ms) at an instant. */
function offsetAt(ms: number, zone: string): number {
  const p = wallTimeOf(ms, zone);
  return Date.UTC(p.y, p.mo - 1, p.d, p.h, p.mi, p.s) - Math.floor(ms / 1000) * 1000;
}

/** The instant (epoch ms) a wall-clock time on a date has in a zone (the day may overflow). */
export function instantOfWallTime(
  day: { y: number; mo: number; d: number },
  h: number,
  mi: number,
  zone: string,
): number {
  const wall = Date.UTC(day.y, day.mo - 1, day.d, h, mi);
  let guess = wall - offsetAt(wall, zone);
  guess = wall - offsetAt(guess, zone); // a second pass settles a DST edge
  return guess;
}
