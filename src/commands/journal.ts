import type { When } from "../cli-spec.js";
import { openProgramAt, selectRoots } from "../config/context.js";
import { EXIT, SheepdogError } from "../errors.js";
import { describeSkipped, type JournalEvent, readAllJournal } from "../journal/journal.js";
import { parseCommandArgs, whenAt } from "../util/args.js";
import { formatDuration } from "../util/duration.js";
import { localTime, localTimes } from "../util/local-time.js";
import { cut, outputWidth } from "../util/terminal.js";

// Start times and machine ids identify processes for sheepdog; people read pids.
const SKIP_IN_LINE = new Set(["at", "type", "carried", "start_time", "machine_id"]);

function value(v: unknown): string {
  if (typeof v === "string") return /[\s"]/.test(v) ? JSON.stringify(v) : v;
  return JSON.stringify(v);
}

/**
 * One aligned line per event: local time, (with `--all`) the program, type, then the fields as
 * key=value, cut to `width` (a screen or an evidence list makes a line of hundreds of
 * characters: `--wide` or `--json` shows it whole).
 */
export function formatEvent(
  e: JournalEvent,
  o: { program?: string; programWidth?: number; width?: number } = {},
): string {
  const time = localTime(Date.parse(e.at));
  const fields = Object.entries(e)
    .filter(([k, v]) => !SKIP_IN_LINE.has(k) && v !== null && v !== undefined)
    .map(([k, v]) => `${k}=${value(v)}`)
    .join(" ");
  const who = o.program !== undefined ? `${o.program.padEnd(o.programWidth ?? 0)}  ` : "";
  const line = `${time}  ${who}${e.type.padEnd(16)} ${localTimes(fields)}`.trimEnd();
  return cut(line, o.width ?? Number.POSITIVE_INFINITY);
}

/**
 * The programs' events in one list by time, each program's in its own append order (the truth
 * when a clock was stepped back), each with its program's name.
 */
function merged(programs: { program: string; events: JournalEvent[] }[]) {
  const next = programs.map(() => 0);
  const out: { p: string; e: JournalEvent }[] = [];
  for (;;) {
    let pick = -1;
    for (const [i, p] of programs.entries()) {
      const e = p.events[next[i] as number];
      if (!e) continue;
      const best = pick < 0 ? undefined : programs[pick]?.events[next[pick] as number];
      if (!best || Date.parse(e.at) < Date.parse(best.at)) pick = i;
    }
    if (pick < 0) return out;
    const p = programs[pick] as { program: string; events: JournalEvent[] };
    out.push({ p: p.program, e: p.events[next[pick] as number] as JournalEvent });
    next[pick] = (next[pick] as number) + 1;
  }
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
  const roots = selectRoots(values.program, values.all);
  const programs: { program: string; events: JournalEvent[] }[] = [];
  let code: number = EXIT.ok;
  for (const root of roots) {
    try {
      // The journal is read whatever program.json says now: a broken one is the last valid's.
      const program = openProgramAt(root, { lastValid: true });
      if (program.configInvalid && !values.json)
        process.stderr.write(
          `sheepdog journal: ${program.configInvalid.file} is invalid (${program.configInvalid.error}); its journal is shown all the same\n`,
        );
      const journal = readAllJournal(program.stateDir);
      const events = journal.events.filter((e) => Date.parse(e.at) >= since);
      programs.push({ program: program.name, events });
      // Lines no reader accepts (an old journal's) are skipped, and said.
      const skipped = describeSkipped(journal.skipped);
      if (skipped) process.stderr.write(`${program.name}: ${skipped}\n`);
    } catch (err) {
      if (!values.all || !(err instanceof SheepdogError)) throw err;
      // --all: one program that cannot be read must not hide the others' night.
      process.stderr.write(`sheepdog journal: ${root}: ${(err as Error).message}\n`);
      code = Math.max(code, err.exitCode);
    }
  }
  if (values.json) {
    const doc = values.all ? { programs } : programs[0];
    process.stdout.write(`${JSON.stringify(doc)}\n`);
    return code;
  }
  const width = outputWidth(values.wide);
  if (values.all) {
    const lines = merged(programs);
    const programWidth = Math.max(0, ...programs.map((p) => p.program.length));
    for (const { p, e } of lines)
      process.stdout.write(`${formatEvent(e, { program: p, programWidth, width })}\n`);
    if (lines.length === 0)
      process.stderr.write(
        `${programs.length} program${programs.length === 1 ? "" : "s"}: no events${sinceText(values.since)}\n`,
      );
    return code;
  }
  const one = programs[0] as { program: string; events: JournalEvent[] };
  for (const e of one.events) process.stdout.write(`${formatEvent(e, { width })}\n`);
  if (one.events.length === 0)
    process.stderr.write(`${one.program}: no events${sinceText(values.since)}\n`);
  return code;
}
