import { openProgram } from "../config/context.js";
import { EXIT } from "../errors.js";
import { parseCommandArgs } from "../util/args.js";

export async function run(argv: string[]): Promise<number> {
  const { values } = parseCommandArgs("check", argv);
  const program = openProgram(values.program);
  if (values.json) {
    process.stdout.write(
      `${JSON.stringify({ ok: true, program: program.name, root: program.root, config: program.config })}\n`,
    );
  } else {
    process.stdout.write(
      `${program.configPath}: ok (program ${program.name}, launcher ${program.config.manager.launcher})\n`,
    );
  }
  return EXIT.ok;
}
