import { openProgram } from "../config/context.js";
import { activityWarnings, configWarnings, policyWarnings } from "../config/warnings.js";
import { EXIT } from "../errors.js";
import { parseCommandArgs } from "../util/args.js";

export async function run(argv: string[]): Promise<number> {
  const { values } = parseCommandArgs("check", argv);
  const program = openProgram(values.program);
  const warnings = [
    ...configWarnings(program.config),
    ...policyWarnings(program.policy, program.policy.interval),
    ...activityWarnings(program.policy),
  ];
  if (values.json) {
    process.stdout.write(
      `${JSON.stringify({ ok: true, program: program.name, root: program.root, config: program.config, warnings })}\n`,
    );
  } else {
    process.stdout.write(
      `${program.configPath}: ok (program ${program.name}, launcher ${program.config.manager.launcher})\n`,
    );
    for (const w of warnings) process.stderr.write(`warning: ${program.configPath}: ${w}\n`);
  }
  return EXIT.ok;
}
