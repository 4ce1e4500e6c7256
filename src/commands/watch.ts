import { allProgramRoots, resolveProgramRoot } from "../config/resolve.js";
import { EXIT, UsageError } from "../errors.js";
import { describeSkipped } from "../journal/journal.js";
import { Watcher } from "../resident/loop.js";
import { watchPass } from "../resident/pass.js";
import type { PassOutcome } from "../resident/program-watch.js";
import { parseCommandArgs } from "../util/args.js";
import { formatDuration } from "../util/duration.js";
import { envMs } from "../util/env-ms.js";
import { iso } from "../util/time.js";
import { PassSupervisor } from "../watchdog/pass/supervisor.js";

/** How long a stop (SIGTERM, SIGINT) waits for passes in progress before abandoning them. */
const STOP_WAIT_MS = 30_000;

const line = (text: string) => process.stdout.write(`${iso()}  ${text}\n`);

/** A pass as the log shows it: one line when it acted or failed, nothing when it did not. */
function passLine(o: PassOutcome): string | null {
  const r = o.report;
  const failed = r.decision === "tick_failed" || r.decision === "error";
  if (!failed && r.actions.length === 0) return null;
  const what = [r.reason, r.actions.join(", ")].filter(Boolean).join("; ");
  return `${r.program}  ${r.decision}  ${what}  (after: ${o.trigger})`;
}

/**
 * `sheepdog watch [--program P | --all] [--json]` (DESIGN §12): the tick's very pass, run at
 * once on file events and deaths and on every program's interval. Ends on SIGTERM/SIGINT
 * after the passes in progress finish (or, past the stop wait or on a second signal, abandons
 * them: journaled, paged, locks released, exit 1).
 */
export async function run(argv: string[]): Promise<number> {
  const { values } = parseCommandArgs("watch", argv);
  if (values.all && values.program !== undefined)
    throw new UsageError("sheepdog watch: --all and --program cannot be used together");
  const all = values.all === true;
  const fixed = all
    ? []
    : [resolveProgramRoot(values.program, process.cwd(), process.env, { takesAll: true })];
  const stopWaitMs = envMs("SHEEPDOG_WATCH_STOP_MS", STOP_WAIT_MS);
  const json = values.json === true;
  const skippedSaid = new Map<string, number>();

  // A pass past its deadline ends the watcher (a hung watcher must not look alive): the one
  // shutdown path, as a signal's past the stop wait (supervisor.ts).
  const supervisor: PassSupervisor = new PassSupervisor({
    command: "watch",
    overdue: { kind: "shutdown" },
    beforeExit: () => watcher.abandonRecord(),
  });
  const watcher = new Watcher({
    roots: () => (all ? allProgramRoots() : fixed),
    rescan: all,
    runPass: watchPass(supervisor),
    onPass(o) {
      if (json) {
        const doc = { at: iso(o.at), trigger: o.trigger, programs: [o.report] };
        process.stdout.write(`${JSON.stringify(doc)}\n`);
      } else {
        const text = passLine(o);
        if (text) line(text);
      }
      if (o.report.decision === "tick_failed" || o.report.decision === "error")
        process.stderr.write(`sheepdog watch: ${o.report.program}: ${o.report.reason}\n`);
      // Skipped journal lines are said when their count changes, not at every pass.
      const skipped = o.report.facts?.journal_skipped;
      if (skipped && skippedSaid.get(o.report.root) !== skipped.lines) {
        skippedSaid.set(o.report.root, skipped.lines);
        process.stderr.write(`sheepdog watch: ${o.report.program}: ${describeSkipped(skipped)}\n`);
      }
    },
    onProblem: (root, problem) => process.stderr.write(`sheepdog watch: ${root}: ${problem}\n`),
    onAdded: (root) => json || line(`watching ${root}`),
    onRemoved: (root) => json || line(`no longer watching ${root} (its program.json is gone)`),
  });

  // The first signal stops after the passes in progress (up to the stop wait); a second one,
  // or the wait running out, abandons them through the supervisor's one shutdown.
  const abandon = (why: string) => void supervisor.shutdown(why, { releaseLocks: true });
  const stopped = new Promise<number>((resolve) => {
    supervisor.onSignals((signal, count) => {
      if (count > 1) return abandon(`a second ${signal} while stopping`);
      if (!json) line(`${signal}: stopping after the passes in progress`);
      const late = setTimeout(
        () => abandon(`${signal}: passes still running after ${formatDuration(stopWaitMs)}`),
        stopWaitMs,
      );
      void watcher.stop().then(() => {
        clearTimeout(late);
        resolve(EXIT.ok);
      });
    });
  });
  await watcher.start();
  if (!json)
    line(
      all
        ? `watch started: every program under $SHEEPDOG_HOME (${watcher.programs.size} now)`
        : `watch started: ${fixed[0]}`,
    );
  return stopped;
}
