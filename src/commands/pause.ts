import { openProgram } from "../config/context.js";
import { EXIT, UsageError } from "../errors.js";
import { PAUSE_REASON, pauseUntil } from "../lifecycle/answers.js";
import { parseCommandArgs, whenAt } from "../util/args.js";
import { formatDuration } from "../util/duration.js";
import { iso } from "../util/time.js";

/** `sheepdog pause --until WHEN`: nothing starts until then; a live manager is told at its next save. */
export async function run(argv: string[]): Promise<number> {
  const { values } = parseCommandArgs("pause", argv);
  if (values.until === undefined) throw new UsageError("sheepdog pause: --until WHEN is required");
  const now = Date.now();
  // WHEN: an ISO-8601 time or a duration from now (DESIGN §9).
  const until = whenAt(values.until, now, "ahead");
  if (until <= now) throw new UsageError(`--until ${iso(until)}: that time has already passed`);
  const program = openProgram(values.program, { create: true });
  const reason = PAUSE_REASON;
  pauseUntil(program, until, {}, now);
  if (values.json) {
    const out = { program: program.name, paused: true, until: iso(until), reason };
    process.stdout.write(`${JSON.stringify(out)}\n`);
    return EXIT.ok;
  }
  process.stdout.write(
    `${program.name}: paused until ${iso(until)} (${formatDuration(until - now)} from now); sheepdog unpause ends it early\n`,
  );
  return EXIT.ok;
}
