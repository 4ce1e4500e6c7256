import type { When } from "../cli-spec.js";
import { openProgram } from "../config/context.js";
import { EXIT } from "../errors.js";
import { describeSkipped, type JournalEvent, readAllJournal } from "../journal/journal.js";
import { parseCommandArgs, whenAt } from "../util/args.js";
import { formatDuration } from "../util/duration.js";
import { localTime, localTimes } from "../util/local-time.js";

// Start times and machine ids identify processes for sheepdog; people read pids.
const SKIP_IN_LINE = new Set(["at", "type", "carried", "start_time", "machine_id"]);

function value(v: unknown): string {
  if (typeof v === "string") return /[\s"]/.test(v) ? JSON.stringify(v) : v;
  return JSON.stringify(v);
}

/** One aligned line per event: local time, type, then the fields as key=value. */
export function formatEvent(e: JournalEvent): string {
  const time = localTime(Date.parse(e.at));
  const fields = Object.entries(e)
    .filter(([k, v]) => !SKIP_IN_LINE.has(k) && v !== null && v !== undefined)
    .map(([k, v]) => `${k}=${value(v)}`)
    .join(" ");
  return `${time}  ${e.type.padEnd(16)} ${localTimes(fields)}`.trimEnd();
}

/** ` in the last 1h`, ` since 2026-11-30 10:00:00Z`, or nothing without --since. */
function sinceText(w: When | undefined): string {
  if (!w) return "";
  return "duration" in w
    ? ` in the last ${formatDuration(w.duration)}`
    : ` since ${localTime(w.at)}`;
}

export async function run(argv: string[]): Promise<number> {
  const { values } = parseCommandArgs("journal", argv);
  const since =
    values.since === undefined
      ? Number.NEGATIVE_INFINITY
      : whenAt(values.since, Date.now(), "back");
  const program = openProgram(values.program, { lastValid: true });
  const journal = readAllJournal(program.stateDir);
  const events = journal.events.filter((e) => Date.parse(e.at) >= since);
  if (values.json) {
    process.stdout.write(`${JSON.stringify({ program: program.name, events })}\n`);
  } else {
    for (const e of events) process.stdout.write(`${formatEvent(e)}\n`);
    if (events.length === 0)
      process.stderr.write(`${program.name}: no events${sinceText(values.since)}\n`);
  }
  const skipped = describeSkipped(journal.skipped);
  if (skipped) process.stderr.write(`${program.name}: ${skipped}\n`);
  return EXIT.ok;
}
