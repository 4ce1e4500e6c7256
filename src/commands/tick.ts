import { openProgramAt, type ProgramContext, selectRoots } from "../config/context.js";
import { leaseTtlNeeded } from "../config/warnings.js";
import { EXIT, SheepdogError } from "../errors.js";
import { describeSkipped } from "../journal/journal.js";
import { parseCommandArgs } from "../util/args.js";
import { formatDuration } from "../util/duration.js";
import { outputWidth } from "../util/terminal.js";
import { iso } from "../util/time.js";
import { jsonReport, tickLines } from "../watchdog/pass/report.js";
import {
  exitCodeOf,
  exitFlushed,
  failureReport,
  givenUpGraceMs,
  PassSupervisor,
  type StopSignal,
} from "../watchdog/pass/supervisor.js";
import * as tick from "../watchdog/pass/tick.js";

const SIGNAL_WHO: Record<StopSignal, string> = {
  SIGTERM: "a scheduler's timeout or unload, or a person",
  SIGINT: "interrupted",
  SIGHUP: "its terminal went away",
};

/**
 * A `--every` longer than the program's lease allows: another host may take the lease over
 * between two ticks while this one's manager runs. Said at every tick (the scheduler's log
 * keeps it); `doctor` fails the installed timer for the same reason.
 */
function warnLeaseCadence(program: ProgramContext, every: number): void {
  const lease = program.policy.lease;
  if (!lease) return;
  const least = leaseTtlNeeded(lease, every);
  if (least === null) return;
  process.stderr.write(
    `sheepdog tick: ${program.name}: --every ${formatDuration(every)} is too seldom for lease.ttl ${program.config.lease?.ttl}: another host may take the lease over before this one renews it (it needs ttl ≥ 2 × margin + the cadence, ${formatDuration(least)}); tick more often, or raise lease.ttl on every host\n`,
  );
}

/** How many programs' passes run at once (`SHEEPDOG_TICK_CONCURRENCY`, default 4). */
function tickConcurrency(): number {
  const n = Number(process.env.SHEEPDOG_TICK_CONCURRENCY);
  return Number.isInteger(n) && n > 0 ? n : 4;
}

const isFailure = (r: tick.ProgramReport | undefined) =>
  r?.decision === "tick_failed" || r?.decision === "error";

export async function run(argv: string[]): Promise<number> {
  const { values } = parseCommandArgs("tick", argv);
  const dryRun = values["dry-run"] === true;
  const roots = selectRoots(values.program, values.all);
  const every = values.every;
  const startedAt = Date.now();
  // Every program pass has its own deadline (the tick lock's, 4 min): launchd has none, and a
  // hung pass must not be silent. One given up is journaled and paged and acts no more; the
  // other programs' passes go on, and the run ends soon after (supervisor.ts).
  const supervisor = new PassSupervisor({
    command: "tick",
    overdue: { kind: "give_up", graceMs: givenUpGraceMs() },
  });
  // Killed from outside: journaled, locks released, paged, exit 1 (a second signal: at once).
  if (!dryRun)
    supervisor.onSignals((signal) =>
      supervisor.shutdown(`killed by ${signal} before the tick finished (${SIGNAL_WHO[signal]})`, {
        releaseLocks: true,
      }),
    );

  const reports: (tick.ProgramReport | undefined)[] = [];
  let code: number = EXIT.ok;
  const one = async (root: string, i: number) => {
    try {
      // a program.json that breaks mid-run is judged on its last valid copy (DESIGN §16)
      const program = openProgramAt(root, { create: !dryRun, lastValid: true });
      const invalid = program.configInvalid;
      if (invalid && !values.json)
        process.stderr.write(
          `sheepdog tick: ${program.name}: ${invalid.file} is invalid (${invalid.error}); judged with the last valid config (${program.configPath})\n`,
        );
      if (every !== undefined) {
        program.policy.cadence = every;
        warnLeaseCadence(program, every);
      }
      // A real pass runs supervised: its failure comes back as its report.
      reports[i] = dryRun
        ? await tick.tickProgram(program, { dryRun })
        : await supervisor.run(program, (signal) => tick.tickProgram(program, { signal }));
      if (!isFailure(reports[i])) return;
      code = Math.max(code, EXIT.failed);
    } catch (err) {
      // One program with bad config or usage: the plain exit-2 message, nothing else.
      if (err instanceof SheepdogError && roots.length === 1 && !values.json) throw err;
      code = Math.max(code, exitCodeOf(err));
      reports[i] = failureReport(root, err);
    }
  };
  // Programs are independent (each pass holds its own tick.lock, as watch's do), and a pass
  // mostly waits on git, a launcher or a stop's grace: a few at once, so fifty programs whose
  // leases each take a push do not take fifty pushes' time.
  let next = 0;
  const worker = async () => {
    // a deadline or signal ending this run: no further program starts
    while (!supervisor.stopping && next < roots.length) {
      const i = next++;
      await one(roots[i] as string, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(tickConcurrency(), roots.length) }, worker));
  if (supervisor.stopping) code = EXIT.failed; // shutdown exits the process once it has paged
  const done = reports.filter((r): r is tick.ProgramReport => r !== undefined);
  if (values.json) process.stdout.write(jsonReport(iso(startedAt), done));
  else if (done.length > 0) process.stdout.write(`${tickLines(done, outputWidth(values.wide))}\n`);
  else process.stdout.write("no programs found\n");
  for (const r of done) {
    if ((isFailure(r) || r.decision === "skipped") && !values.json)
      process.stderr.write(`sheepdog tick: ${r.program}: ${r.reason}\n`);
    // An old journal's lines that no reader accepts never fail a tick, but they are said.
    const skipped = r.facts?.journal_skipped && describeSkipped(r.facts.journal_skipped);
    if (skipped) process.stderr.write(`sheepdog tick: ${r.program}: ${skipped}\n`);
  }
  // A pass given up may still hold the event loop (a hung child, a socket): the run is over.
  if (supervisor.gaveUp) await exitFlushed(code);
  return code;
}
