import { join, resolve } from "node:path";
import { openProgramAt, selectRoots } from "../config/context.js";
import { EXIT, SheepdogError, UsageError } from "../errors.js";
import { readAllEvents } from "../journal/journal.js";
import { reportHtml } from "../report/html.js";
import { incidentSpans } from "../report/incidents.js";
import { nightNumbers, verdict } from "../report/numbers.js";
import { buildTimeline, type Timeline } from "../report/timeline.js";
import { ensureHostDir } from "../usage/host-state.js";
import { parseCommandArgs, whenAt } from "../util/args.js";
import { writeFileAtomic } from "../util/fs.js";
import { iso } from "../util/time.js";

/** The window a report draws without --since: the last 24 h. */
const DEFAULT_WINDOW_MS = 24 * 60 * 60_000;

// `sheepdog report`: the picture of a night (DESIGN §13), read from the journal alone.

/** `2026-11-30`: the local date, the day the person reading it is in. */
function localDate(t: number): string {
  const d = new Date(t);
  const p = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}`;
}

interface Loaded {
  timelines: Timeline[];
  /** Where a default report goes: the program's state folder, or the host's for --all. */
  defaultDir: () => string;
  name: string;
  code: number;
}

function load(values: { program?: string; all?: boolean }, from: number, to: number): Loaded {
  const roots = selectRoots(values.program, values.all);
  const timelines: Timeline[] = [];
  let code: number = EXIT.ok;
  let stateDir: string | null = null;
  for (const root of roots) {
    try {
      // It reads the journal alone: a program.json broken since is the last valid one's.
      const program = openProgramAt(root, { lastValid: true });
      stateDir = program.stateDir;
      const events = readAllEvents(program.stateDir);
      const pages_configured = program.config.page?.ntfy !== undefined;
      const invalid = program.configInvalid
        ? { file: program.configInvalid.file, error: program.configInvalid.error }
        : null;
      if (invalid)
        process.stderr.write(
          `sheepdog report: ${invalid.file} is invalid (${invalid.error}); the report reads the journal, and the last valid config for the rest\n`,
        );
      timelines.push({
        ...buildTimeline({
          program: program.name,
          root,
          events,
          from,
          to,
          pages_configured,
          config_invalid: invalid,
        }),
        incidents: incidentSpans(events, from, to),
      });
    } catch (err) {
      if (roots.length === 1 || !(err instanceof SheepdogError)) throw err;
      // --all: one broken program must not hide the others' night.
      process.stderr.write(`sheepdog report: ${root}: ${(err as Error).message}\n`);
      code = Math.max(code, err.exitCode);
    }
  }
  const single = !values.all && roots.length === 1 ? roots[0] : undefined;
  return {
    timelines,
    code,
    name: single ? (timelines[0]?.program ?? "program") : "all",
    defaultDir: () =>
      single && stateDir
        ? openProgramAt(single, { create: true, lastValid: true }).stateDir
        : ensureHostDir(""),
  };
}

function jsonOf(timelines: readonly Timeline[], from: number, to: number, file: string | null) {
  return {
    generated_at: iso(to),
    window: { from: iso(from), to: iso(to) },
    file,
    programs: timelines.map((t) => {
      const numbers = nightNumbers(t);
      return { ...t, verdict: verdict(t, numbers), numbers };
    }),
  };
}

export async function run(argv: string[]): Promise<number> {
  const { values } = parseCommandArgs("report", argv);
  const to = Date.now();
  const from = whenAt(values.since ?? { duration: DEFAULT_WINDOW_MS }, to, "back");
  const loaded = load(values, from, to);
  // --json is data for people who chart it themselves: a file only when asked for one.
  let file: string | null = null;
  if (!values.json || values.out !== undefined || values.open) {
    file = resolve(
      values.out ?? join(loaded.defaultDir(), `report-${loaded.name}-${localDate(to)}.html`),
    );
    const sources = "the journal (journal.jsonl and its rotations)";
    try {
      writeFileAtomic(file, reportHtml(loaded.timelines, to, sources));
    } catch (err) {
      throw new UsageError(`--out ${file}: cannot write the report: ${(err as Error).message}`);
    }
  }
  if (values.json)
    process.stdout.write(`${JSON.stringify(jsonOf(loaded.timelines, from, to, file))}\n`);
  else process.stdout.write(`${file}\n`);
  if (values.open && file) {
    const { openFile, openerFor } = await import("../report/open.js");
    const why = await openFile(file);
    if (why) process.stderr.write(`not opened (${why}); open ${file} in a browser\n`);
    else if (!values.json) process.stderr.write(`opened with ${openerFor()}\n`);
  }
  return loaded.code;
}
