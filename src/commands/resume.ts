import { openProgram } from "../config/context.js";
import { EXIT } from "../errors.js";
import { appendEvent, readEvents } from "../journal/journal.js";
import { replay } from "../journal/replay.js";
import { afterEvents } from "../page/hooks.js";
import { parseCommandArgs } from "../util/args.js";

/** `sheepdog resume`: clears a stand-down; the next start is planned (DESIGN §6). */
export async function run(argv: string[]): Promise<number> {
  const { values } = parseCommandArgs("resume", argv);
  const program = openProgram(values.program, { create: true });
  const state = replay(readEvents(program.stateDir));
  if (!state.stoodDown) {
    if (values.json) printJson({ program: program.name, cleared: false, was: null });
    else process.stdout.write(`${program.name}: not stood down; nothing to clear\n`);
    return EXIT.ok;
  }
  const event = appendEvent(program.stateDir, {
    type: "cleared",
    stood_down_at: state.stoodDown.at,
    ...(values.note ? { note: values.note } : {}),
  });
  await afterEvents(program, [event]);
  if (values.json) {
    const was = { reason: state.stoodDown.reason ?? null, at: state.stoodDown.at };
    printJson({ program: program.name, cleared: true, was });
    return EXIT.ok;
  }
  process.stdout.write(
    `${program.name}: stand-down cleared (it was: ${String(state.stoodDown.reason ?? "")}); the next tick starts a manager if none holds it\n`,
  );
  return EXIT.ok;
}

function printJson(out: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(out)}\n`);
}
