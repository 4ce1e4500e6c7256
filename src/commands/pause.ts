import { openProgram } from "../config/context.js";
import { EXIT, UsageError } from "../errors.js";
import { PAUSE_REASON, pauseUntil } from "../lifecycle/answers.js";
import { parseCommandArgs } from "../util/args.js";
import { formatDuration, isDuration, parseDuration } from "../util/duration.js";
import { iso } from "../util/time.js";

/** `WHEN`: an ISO-8601 time or a duration from now (DESIGN §9). */
export function parseWhen(text: string, now = Date.now()): number {
  if (isDuration(text)) return now + parseDuration(text);
  const at = /^\d{4}-\d{2}-\d{2}T/.test(text) ? Date.parse(text) : Number.NaN;
  if (Number.isNaN(at))
    throw new UsageError(
      `--until: expected an ISO-8601 time (2026-11-30T18:00:00Z) or a duration from now (2h), got ${JSON.stringify(text)}`,
    );
  return at;
}

/** `sheepdog pause --until WHEN`: nothing starts until then; a live manager is told at its next save. */
export async function run(argv: string[]): Promise<number> {
  const { values } = parseCommandArgs("pause", argv);
  if (values.until === undefined) throw new UsageError("sheepdog pause: --until WHEN is required");
  const now = Date.now();
  const until = parseWhen(values.until, now);
  if (until <= now) throw new UsageError(`--until ${values.until}: that time has already passed`);
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
