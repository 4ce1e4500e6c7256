// `sheepdog usage [--seat DIR] [--json]`: the merged usage readings per seat (DESIGN §5, §9).
import { resolve } from "node:path";
import { UsageError } from "../errors.js";
import { judgeReadings } from "../usage/limit.js";
import {
  type Merged,
  mergeReadings,
  readReadings,
  seatsWithReadings,
  WINDOWS,
} from "../usage/readings.js";
import { parseCommandArgs } from "../util/args.js";
import { expandHome } from "../util/fs.js";
import { localTime, localTimes } from "../util/local-time.js";
import { iso } from "../util/time.js";

/**
 * What `sheepdog usage` reports for one seat: the statusline's merged windows, and whether the
 * seat is limited (by a full window or by a usage-limit refusal not yet reset, which the
 * reason names).
 */
export function seatReport(seat: string, now: number, pauseAtPercent = 100) {
  const readings = readReadings(seat);
  const merged: Merged = mergeReadings(readings, now);
  const limit = judgeReadings(readings, pauseAtPercent, now);
  const windows: Record<
    string,
    { used_percentage: number; resets_at: string; reset: boolean } | null
  > = {};
  for (const w of WINDOWS) {
    const m = merged[w];
    windows[w] = m
      ? { used_percentage: m.used_percentage, resets_at: iso(m.resets_at), reset: m.reset }
      : null;
  }
  return { seat, limited: limit.limited, reason: limit.reason, windows };
}

export async function run(argv: string[]): Promise<number> {
  const { values } = parseCommandArgs("usage", argv);
  if (values.seat !== undefined && values.seat.trim() === "")
    throw new UsageError(
      "sheepdog usage: --seat: expected a seat (a Claude config folder or a CODEX_HOME), got an empty path",
    );
  const now = Date.now();
  const seats =
    values.seat !== undefined ? [resolve(expandHome(values.seat))] : seatsWithReadings();
  const reports = seats.map((s) => seatReport(s, now));
  if (values.json) {
    process.stdout.write(`${JSON.stringify({ seats: reports }, null, 2)}\n`);
    return 0;
  }
  if (reports.length === 0) {
    process.stdout.write(
      "no usage readings yet (sheepdog statusline records Claude Code's; save and the tick a Codex manager's)\n",
    );
    return 0;
  }
  const rows: string[][] = [["seat", "window", "used", "resets", "state"]];
  for (const r of reports) {
    let first = true;
    for (const w of WINDOWS) {
      const m = r.windows[w];
      const state = !m
        ? ""
        : m.reset
          ? "reset"
          : r.limited && r.reason.includes(w)
            ? "limited"
            : "open";
      rows.push([
        first ? r.seat : "",
        w,
        m
          ? `${Number.isInteger(m.used_percentage) ? m.used_percentage : m.used_percentage.toFixed(1)}%`
          : "-",
        m ? localTime(Date.parse(m.resets_at), { seconds: false }) : "-",
        state,
      ]);
      first = false;
    }
  }
  const widths =
    rows[0]?.map((_, i) => Math.max(...rows.map((row) => (row[i] ?? "").length))) ?? [];
  for (const row of rows) {
    const cells = row.map((c, i) =>
      i === 2 ? c.padStart(widths[i] ?? 0) : c.padEnd(widths[i] ?? 0),
    );
    process.stdout.write(`${cells.join("  ").trimEnd()}\n`);
  }
  for (const r of reports)
    if (r.limited) process.stdout.write(`${r.seat}: limited: ${localTimes(r.reason)}\n`);
  return 0;
}
