import { openProgramAt, type ProgramContext, selectRoots } from "../config/context.js";
import { TICK_DEADLINE_MS } from "../config/load.js";
import { leaseTtlNeeded } from "../config/warnings.js";
import { EXIT, SheepdogError, UsageError } from "../errors.js";
import { UNSAFE_PROGRAM } from "../state/dir.js";
import { UnsafePath } from "../state/owned.js";
import { parseCommandArgs } from "../util/args.js";
import {
  DURATION_EXPECTED,
  formatDuration,
  isPositiveDuration,
  parseDuration,
} from "../util/duration.js";
import { outputWidth } from "../util/terminal.js";
import { iso } from "../util/time.js";
import { abandonPasses, giveUpPass } from "../watchdog/abandon.js";
import { jsonReport, tickLines } from "../watchdog/report.js";
import * as tick from "../watchdog/tick.js";
import { BREAK_AFTER_DEADLINE_MS } from "../watchdog/tick-lock.js";

/** Signals that end a tick from outside: systemd's TimeoutStartSec, launchd, a person. */
const SIGNALS = ["SIGTERM", "SIGINT", "SIGHUP"] as const;
const SIGNAL_WHO: Record<(typeof SIGNALS)[number], string> = {
  SIGTERM: "a scheduler's timeout or unload, or a person",
  SIGINT: "interrupted",
  SIGHUP: "its terminal went away",
};

/** Set once the tick is failing (deadline or signal): no further program pass starts. */
let failing = false;

/**
 * Ends a tick that cannot finish: says why on stderr, journals `tick_failed` for the program in
 * progress, releases its tick lock when asked (a signal: this process is about to go, so a
 * later tick must not find it `locked`), tries the pages hook for at most 5 s, and exits 1.
 * An unsupervised program must never be silent (DESIGN §6).
 */
function failTick(message: string, opts: { releaseLock: boolean }): void {
  const exit: () => never = () => process.exit(EXIT.failed);
  if (failing) exit(); // a second signal while failing: go now
  failing = true;
  process.stderr.write(`sheepdog tick: ${message}\n`);
  const programs = [...tick.inFlight];
  if (programs.length === 0) exit();
  abandonPasses(programs, message, { releaseLocks: opts.releaseLock })
    .catch(() => {})
    .finally(exit);
}

/** Set once a pass was given up at its deadline: the run then exits when the others are done. */
let gaveUp = false;

/**
 * Every program pass has its own deadline (the tick lock's, 4 min): launchd has none, and a hung
 * pass must not be silent. One given up is journaled `tick_failed` and paged, acts no more if
 * it wakes, and leaves its lock for the next tick to break (its holder gone by then); the other
 * programs' passes go on, and those not started yet still start.
 */
async function withinDeadline(
  program: ProgramContext,
  pass: Promise<tick.ProgramReport>,
  ms: number,
): Promise<tick.ProgramReport> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<null>((done) => {
    timer = setTimeout(() => {
      giveUpPass(program); // at once: the pass must not start another effect meanwhile
      done(null);
    }, ms);
  });
  const report = await Promise.race([pass, late]).finally(() => clearTimeout(timer));
  if (report) return report;
  pass.catch(() => {}); // it ends, if ever, after this run has said why
  tick.inFlight.delete(program); // journaled here, once: a signal later must not say it again
  if (!gaveUp) {
    gaveUp = true;
    // The effect it is in may still run, and its lock may be broken a minute past its deadline
    // (tick-lock.ts): this run ends before then, whatever else is still in flight.
    setTimeout(
      () =>
        failTick(
          `the tick ended early: ${program.name}'s pass, given up at its deadline, was still running ${GIVEN_UP_GRACE_MS / 1000} s later`,
          { releaseLock: false },
        ),
      GIVEN_UP_GRACE_MS,
    ).unref();
  }
  const message = `the tick passed its deadline (${Math.round(ms / 1000)}s)`;
  await abandonPasses([program], message, { releaseLocks: false });
  throw new tick.TickFailed(program, message, null);
}

/** How long a run goes on after giving up a pass: half the lock's break-after (tests: shorter). */
const GIVEN_UP_GRACE_MS =
  Number(process.env.SHEEPDOG_TICK_GIVEN_UP_GRACE_MS) || BREAK_AFTER_DEADLINE_MS / 2;

/** Ends the process once stdout and stderr have taken what was written (a pipe is asynchronous). */
async function exitFlushed(code: number): Promise<never> {
  await Promise.all(
    [process.stdout, process.stderr].map((s) => new Promise<void>((r) => s.write("", () => r()))),
  );
  process.exit(code);
}

/**
 * A tick killed from outside journals it, releases its lock, tries to page, and exits 1 (a
 * second signal meanwhile: exits 1 at once).
 */
function handleSignals(): void {
  for (const signal of SIGNALS)
    process.on(signal, () =>
      failTick(`killed by ${signal} before the tick finished (${SIGNAL_WHO[signal]})`, {
        releaseLock: true,
      }),
    );
}

/**
 * A `--every` longer than the program's lease allows: another host may take the lease over
 * between two ticks while this one's manager runs. Said at every tick (the scheduler's log
 * keeps it); `doctor` fails the installed timer for the same reason.
 */
function warnLeaseCadence(program: ProgramContext, every: number): void {
  const lease = program.config.lease;
  if (!lease) return;
  const least = leaseTtlNeeded(lease, every);
  if (least === null) return;
  process.stderr.write(
    `sheepdog tick: ${program.name}: --every ${formatDuration(every)} is too seldom for lease.ttl ${lease.ttl}: another host may take the lease over before this one renews it (it needs ttl ≥ 2 × margin + the cadence, ${formatDuration(least)}); tick more often, or raise lease.ttl on every host\n`,
  );
}

/** How many programs' passes run at once (`SHEEPDOG_TICK_CONCURRENCY`, default 4). */
function tickConcurrency(): number {
  const n = Number(process.env.SHEEPDOG_TICK_CONCURRENCY);
  return Number.isInteger(n) && n > 0 ? n : 4;
}

function parseEvery(text: string): number {
  if (!isPositiveDuration(text))
    throw new UsageError(`--every ${JSON.stringify(text)}: expected ${DURATION_EXPECTED}`);
  return parseDuration(text);
}

export async function run(argv: string[]): Promise<number> {
  const { values } = parseCommandArgs("tick", argv);
  const dryRun = values["dry-run"] === true;
  const roots = selectRoots(values.program, values.all);
  const every = values.every === undefined ? undefined : parseEvery(values.every);
  const startedAt = Date.now();
  const deadlineMs = Number(process.env.SHEEPDOG_TICK_DEADLINE_MS) || TICK_DEADLINE_MS;
  if (!dryRun) handleSignals();

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
      const pass = tick.tickProgram(program, { dryRun });
      reports[i] = dryRun ? await pass : await withinDeadline(program, pass, deadlineMs);
    } catch (err) {
      const failed = err instanceof tick.TickFailed;
      // A folder under $SHEEPDOG_HOME that is not the user's own is skipped, and said so.
      const skipped = err instanceof UnsafePath && err.what === UNSAFE_PROGRAM;
      // One program with bad config or usage: the plain exit-2 message, nothing else.
      if (!failed && err instanceof SheepdogError && roots.length === 1 && !values.json) throw err;
      code = Math.max(code, err instanceof SheepdogError ? err.exitCode : EXIT.failed);
      reports[i] = {
        program: failed ? err.program.name : root.split("/").pop() || root,
        root,
        decision: failed ? "tick_failed" : skipped ? "skipped" : "error",
        reason: `${skipped ? "skipped: " : ""}${(err as Error)?.message ?? String(err)}`,
        facts: failed ? err.facts : null,
        actions: [],
      };
    }
  };
  // Programs are independent (each pass holds its own tick.lock, as watch's do), and a pass
  // mostly waits on git, a launcher or a stop's grace: a few at once, so fifty programs whose
  // leases each take a push do not take fifty pushes' time.
  let next = 0;
  const worker = async () => {
    // a deadline or signal ending this run: no further program starts
    while (!failing && next < roots.length) {
      const i = next++;
      await one(roots[i] as string, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(tickConcurrency(), roots.length) }, worker));
  if (failing) code = EXIT.failed; // failTick exits the process once it has paged
  const done = reports.filter((r): r is tick.ProgramReport => r !== undefined);
  if (values.json) process.stdout.write(jsonReport(iso(startedAt), done));
  else if (done.length > 0) process.stdout.write(`${tickLines(done, outputWidth(values.wide))}\n`);
  else process.stdout.write("no programs found\n");
  for (const r of done)
    if (["tick_failed", "error", "skipped"].includes(r.decision) && !values.json)
      process.stderr.write(`sheepdog tick: ${r.program}: ${r.reason}\n`);
  // A pass given up may still hold the event loop (a hung child, a socket): the run is over.
  if (gaveUp) await exitFlushed(code);
  return code;
}
