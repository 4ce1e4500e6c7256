// Times for people are in the host's zone, with the zone named (DESIGN §16); JSON, the journal
// and every file keep ISO-8601 UTC. Reasons are written once, in UTC, by the pure core; a
// renderer for people passes its text through `localTimes` at the last moment.

const ISO = /\b\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z\b/g;
const MONTHS = "Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec".split(" ");
const pad = (n: number) => String(n).padStart(2, "0");

/** The local zone's short name at `ms`: `UTC`, `EST`, `GMT+1`. */
export function zoneName(ms: number): string {
  const part = new Intl.DateTimeFormat("en-US", { timeZoneName: "short" })
    .formatToParts(new Date(ms))
    .find((p) => p.type === "timeZoneName")?.value;
  return !part || part === "GMT" ? "UTC" : part;
}

/** The local zone's name and offset, for a page's header: `Europe/Berlin, UTC+01:00`. */
export function zoneDescription(ms: number): string {
  const name = Intl.DateTimeFormat().resolvedOptions().timeZone ?? "local time";
  const off = -new Date(ms).getTimezoneOffset();
  const abs = Math.abs(off);
  return `${name}, UTC${off < 0 ? "-" : "+"}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
}

/** `Nov 30`, local. */
export function dayOf(ms: number): string {
  const d = new Date(ms);
  return `${MONTHS[d.getMonth()]} ${d.getDate()}`;
}

/** `03:12`, or `03:12:07` when seconds matter; local. */
export function clock(ms: number, seconds = false): string {
  const d = new Date(ms);
  const hm = `${pad(d.getHours())}:${pad(d.getMinutes())}`;
  return seconds ? `${hm}:${pad(d.getSeconds())}` : hm;
}

/** A time for tables and titles whose zone is named once nearby: `Nov 30 03:12:07`. */
export function stamp(at: string | number): string {
  const ms = typeof at === "number" ? at : Date.parse(at);
  return `${dayOf(ms)} ${clock(ms, true)}`;
}

/** `2026-11-30 06:55:12 EST`: a time for people on a line of its own, its zone named. */
export function localTime(ms: number, opts: { seconds?: boolean } = {}): string {
  if (!Number.isFinite(ms)) return "-";
  const d = new Date(ms);
  const date = `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
  return `${date} ${clock(ms, opts.seconds !== false)} ${zoneName(ms)}`;
}

/** `text` with every ISO-8601 UTC time in it shown as a local time with its zone. */
export function localTimes(text: string): string {
  return text.replace(ISO, (iso) => localTime(Date.parse(iso)));
}
