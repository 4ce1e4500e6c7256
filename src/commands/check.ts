import { openProgram } from "../config/context.js";
import { activityWarnings, configWarnings, policyWarnings } from "../config/warnings.js";
import { EXIT, UsageError } from "../errors.js";
import {
  hookSettingsFiles,
  unknownHookEvents,
  unknownHookEventText,
} from "../usage/claude-settings.js";
import { knownHookEvents, TESTED_VERSIONS } from "../usage/claude-versions.js";
import { seatOf } from "../usage/seat.js";
import { parseCommandArgs } from "../util/args.js";

export async function run(argv: string[]): Promise<number> {
  const { values } = parseCommandArgs("check", argv);
  const program = openProgram(values.program);
  // A hook event the seat's Claude Code does not know holds every start at a dialog (DESIGN
  // §14): an error, judged against every tested version's list (doctor reads the seat's own).
  const unknown = unknownHookEvents(
    hookSettingsFiles(seatOf(program.config), program.root),
    knownHookEvents(null),
  );
  if (unknown.length > 0)
    throw new UsageError(
      unknown.map((u) => unknownHookEventText(u, TESTED_VERSIONS.join(" and "))).join("\n"),
    );
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
