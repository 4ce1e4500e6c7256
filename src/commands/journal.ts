import { openProgram } from "../config/context.js";
import { EXIT, UsageError } from "../errors.js";
import { type JournalEvent, readAllEvents } from "../journal/journal.js";
import { parseCommandArgs } from "../util/args.js";
import { isDuration, parseDuration } from "../util/duration.js";

// Start times and machine ids identify processes for sheepdog; people read pids.
const SKIP_IN_LINE = new Set(["at", "type", "carried", "start_time", "machine_id"]);

function value(v: unknown): string {
  if (typeof v === "string") return /[\s"]/.test(v) ? JSON.stringify(v) : v;
  return JSON.stringify(v);
}

/** One aligned line per event: time, type, then the fields as key=value. */
export function formatEvent(e: JournalEvent): string {
  const time = e.at.replace("T", " ").replace(/\.\d+Z$/, "Z");
  const fields = Object.entries(e)
    .filter(([k, v]) => !SKIP_IN_LINE.has(k) && v !== null && v !== undefined)
    .map(([k, v]) => `${k}=${value(v)}`)
    .join(" ");
  return `${time}  ${e.type.padEnd(16)} ${fields}`.trimEnd();
}

export async function run(argv: string[]): Promise<number> {
  const { values } = parseCommandArgs(
    "journal",
    argv,
    { program: { type: "string" }, since: { type: "string" }, json: { type: "boolean" } },
    false,
  );
  let since = Number.NEGATIVE_INFINITY;
  if (values.since !== undefined) {
    if (isDuration(values.since)) since = Date.now() - parseDuration(values.since);
    else if (!Number.isNaN(Date.parse(values.since))) since = Date.parse(values.since);
    else
      throw new UsageError(
        `--since: expected a duration such as 1h or an ISO-8601 time, got ${JSON.stringify(values.since)}`,
      );
  }
  const program = openProgram(values.program);
  const events = readAllEvents(program.stateDir).filter((e) => Date.parse(e.at) >= since);
  if (values.json) {
    process.stdout.write(`${JSON.stringify({ program: program.name, events })}\n`);
  } else {
    for (const e of events) process.stdout.write(`${formatEvent(e)}\n`);
    if (events.length === 0)
      process.stderr.write(
        `${program.name}: no events${values.since ? ` in the last ${values.since}` : ""}\n`,
      );
  }
  return EXIT.ok;
}
