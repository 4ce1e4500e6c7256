import { openProgramAt, selectRoots } from "../config/context.js";
import { EXIT, SheepdogError } from "../errors.js";
import { appendEvent, type JournalEvent } from "../journal/journal.js";
import { parseCommandArgs } from "../util/args.js";
import { iso } from "../util/time.js";
import { jsonReport, tickLines } from "../watchdog/report.js";
import * as tick from "../watchdog/tick.js";

/** Every tick enforces its own deadline: launchd has none, and a hung tick must not be silent. */
function armDeadline(ms: number): void {
  setTimeout(() => {
    const program = tick.current;
    const message = `the tick passed its deadline (${Math.round(ms / 1000)}s)`;
    process.stderr.write(`sheepdog tick: ${message}\n`);
    const exit = () => process.exit(EXIT.failed);
    if (!program) return exit();
    let failed: JournalEvent;
    try {
      failed = appendEvent(program.stateDir, { type: "tick_failed", error: message });
    } catch {
      return exit(); // nothing more can be done; the exit code still says it
    }
    // Try to page, but never wait long: this tick is already late.
    const paging = import("../page/hooks.js").then(({ afterEvents }) =>
      afterEvents(program, [failed], { tick: true }),
    );
    Promise.race([paging, new Promise((r) => setTimeout(r, 5000))]).finally(exit);
  }, ms).unref();
}

export async function run(argv: string[]): Promise<number> {
  const { values } = parseCommandArgs(
    "tick",
    argv,
    {
      program: { type: "string" },
      all: { type: "boolean" },
      "dry-run": { type: "boolean" },
      json: { type: "boolean" },
    },
    false,
  );
  const dryRun = values["dry-run"] === true;
  const roots = selectRoots(values.program, values.all);
  const startedAt = Date.now();
  if (!dryRun) armDeadline(Number(process.env.SHEEPDOG_TICK_DEADLINE_MS) || 4 * 60_000);

  const reports: tick.ProgramReport[] = [];
  let code: number = EXIT.ok;
  for (const root of roots) {
    try {
      const program = openProgramAt(root, { create: !dryRun });
      reports.push(await tick.tickProgram(program, { dryRun }));
    } catch (err) {
      const failed = err instanceof tick.TickFailed;
      // One program with bad config or usage: the plain exit-2 message, nothing else.
      if (!failed && err instanceof SheepdogError && roots.length === 1 && !values.json) throw err;
      code = Math.max(code, err instanceof SheepdogError ? err.exitCode : EXIT.failed);
      reports.push({
        program: failed ? err.program.name : root.split("/").pop() || root,
        root,
        decision: failed ? "tick_failed" : "error",
        reason: (err as Error)?.message ?? String(err),
        facts: failed ? err.facts : null,
        actions: [],
      });
    }
  }
  if (values.json) process.stdout.write(jsonReport(iso(startedAt), reports));
  else if (reports.length > 0) process.stdout.write(`${tickLines(reports)}\n`);
  else process.stdout.write("no programs found\n");
  for (const r of reports)
    if ((r.decision === "tick_failed" || r.decision === "error") && !values.json)
      process.stderr.write(`sheepdog tick: ${r.program}: ${r.reason}\n`);
  return code;
}
