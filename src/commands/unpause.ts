import { openProgram } from "../config/context.js";
import { EXIT } from "../errors.js";
import { appendEvent, readEvents } from "../journal/journal.js";
import { replay } from "../journal/replay.js";
import { parseCommandArgs } from "../util/args.js";

/** `sheepdog unpause`: ends a pause early; the next start is planned. */
export async function run(argv: string[]): Promise<number> {
  const { values } = parseCommandArgs("unpause", argv);
  const program = openProgram(values.program, { create: true });
  const state = replay(readEvents(program.stateDir));
  if (!state.paused) {
    if (values.json) printJson({ program: program.name, unpaused: false, was: null });
    else process.stdout.write(`${program.name}: not paused\n`);
    return EXIT.ok;
  }
  // A person who unpauses has looked: what is already recorded no longer limits the seat for
  // this program (DESIGN §5); the next real reading or refusal pauses again.
  appendEvent(program.stateDir, { type: "unpaused", reason: "unpaused by a person", by: "person" });
  if (values.json) {
    const was = { until: state.paused.until ?? null, reason: state.paused.reason ?? null };
    printJson({ program: program.name, unpaused: true, was });
    return EXIT.ok;
  }
  process.stdout.write(
    `${program.name}: unpaused (was paused until ${String(state.paused.until)}: ${String(state.paused.reason ?? "")})\n`,
  );
  return EXIT.ok;
}

function printJson(out: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(out)}\n`);
}
