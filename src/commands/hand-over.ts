import { openProgram } from "../config/context.js";
import { EXIT, UsageError } from "../errors.js";
import { performHandOver } from "../hand-over/hand-over.js";
import { findManager } from "../process/manager.js";
import { parseCommandArgs, pidOption } from "../util/args.js";

export async function run(argv: string[]): Promise<number> {
  const { values } = parseCommandArgs("hand-over", argv);
  if (values.note === undefined || !values.note.trim())
    throw new UsageError(
      "sheepdog hand-over: --note TEXT is required (what the next manager should know)",
    );
  const program = openProgram(values.program, { create: true });
  const manager = findManager(pidOption(values.pid));
  const result = await performHandOver(program, {
    manager,
    note: values.note,
    ...(values.transcript !== undefined ? { transcript: values.transcript } : {}),
    ...(values.progress !== undefined ? { progress: values.progress } : {}),
  });
  process.stdout.write(`${JSON.stringify(result)}\n`);
  return EXIT.ok;
}
