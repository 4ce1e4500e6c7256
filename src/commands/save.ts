import { openProgram } from "../config/context.js";
import { EXIT } from "../errors.js";
import { performSave } from "../heartbeat/save.js";
import { findManager } from "../process/manager.js";
import { ensureStateDir } from "../state/dir.js";
import { parseCommandArgs, pidOption } from "../util/args.js";

export async function run(argv: string[]): Promise<number> {
  const { values } = parseCommandArgs("save", argv);
  // Config, state-dir safety and the manager are all checked before any state is created.
  const pid = pidOption(values.pid);
  // a broken program.json: the last valid copy, and a notice in the answer (DESIGN §16)
  const checked = openProgram(values.program, { lastValid: true });
  const manager = findManager(pid);
  const program = { ...checked, stateDir: ensureStateDir(checked.root) };
  const result = await performSave(program, {
    manager,
    ...(values.transcript !== undefined ? { transcript: values.transcript } : {}),
    ...(values.progress !== undefined ? { progress: values.progress } : {}),
  });
  process.stdout.write(`${JSON.stringify(result)}\n`);
  return EXIT.ok;
}
