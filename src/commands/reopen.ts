import { openProgram } from "../config/context.js";
import { EXIT } from "../errors.js";
import { appendEvent, readEvents } from "../journal/journal.js";
import { replay } from "../journal/replay.js";
import { parseCommandArgs } from "../util/args.js";

/** `sheepdog reopen`: undoes `finish`; the next tick starts a manager (planned). */
export async function run(argv: string[]): Promise<number> {
  const { values } = parseCommandArgs("reopen", argv);
  const program = openProgram(values.program, { create: true });
  const state = replay(readEvents(program.stateDir));
  if (!state.finished) {
    if (values.json) printJson({ program: program.name, reopened: false, was: null });
    else process.stdout.write(`${program.name}: not finished; nothing to reopen\n`);
    return EXIT.ok;
  }
  const was = { at: state.finished.at, note: state.finished.note ?? null };
  appendEvent(program.stateDir, {
    type: "reopened",
    finished_at: state.finished.at,
    ...(values.note ? { note: values.note } : {}),
  });
  if (values.json) printJson({ program: program.name, reopened: true, was });
  else process.stdout.write(`${program.name}: reopened; the next tick starts a manager\n`);
  return EXIT.ok;
}

function printJson(out: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(out)}\n`);
}
