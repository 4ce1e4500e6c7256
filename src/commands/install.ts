import { openProgram } from "../config/context.js";
import { UsageError } from "../errors.js";
import { collector, planJson, say, schedulerArg } from "../install/args.js";
import { installPlan } from "../install/install.js";
import { describePlan, executePlan } from "../install/plan.js";
import type { Target } from "../install/target.js";
import { parseCommandArgs } from "../util/args.js";

/** The interval when --interval is not given: the program's own, or the default for --all. */
const DEFAULT_INTERVAL = "5m";

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs("install", argv, {
    program: { type: "string" },
    all: { type: "boolean" },
    interval: { type: "string" },
    "dry-run": { type: "boolean" },
    json: { type: "boolean" },
  });
  const scheduler = schedulerArg("install", positionals);
  if (values.all && values.program !== undefined)
    throw new UsageError("sheepdog install: --all and --program cannot be used together");
  let target: Target;
  let interval = values.interval;
  if (values.all) target = { kind: "all" };
  else {
    // like every command but doctor, install refuses a program whose config or state is bad
    const program = openProgram(values.program);
    target = { kind: "program", name: program.name, root: program.root };
    interval ??= program.config.watchdog.interval;
  }
  const plan = installPlan(scheduler, target, interval ?? DEFAULT_INTERVAL);
  const dryRun = values["dry-run"] === true;
  if (values.json) {
    const { out, lines } = collector();
    if (!dryRun) executePlan(plan.title, plan.steps, out);
    const json = planJson(scheduler, plan, { dryRun, lines, extra: { target } });
    process.stdout.write(`${JSON.stringify(json)}\n`);
    return 0;
  }
  if (dryRun) {
    process.stdout.write(describePlan(plan.title, plan.steps));
    return 0;
  }
  executePlan(plan.title, plan.steps, say);
  say(plan.summary);
  return 0;
}
