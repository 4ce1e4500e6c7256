import { openProgram } from "../config/context.js";
import { UsageError } from "../errors.js";
import { requireSchedulerTool, runPlan, schedulerArg } from "../install/args.js";
import { installPlan } from "../install/install.js";
import { ALL_INTERVAL_MS, type Target } from "../install/target.js";
import { withWatcher } from "../install/watch-plan.js";
import { parseCommandArgs } from "../util/args.js";

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs("install", argv);
  const scheduler = schedulerArg("install", positionals);
  // a dry run shows what would be written on any host; a real one needs the scheduler here
  if (values["dry-run"] !== true) requireSchedulerTool(scheduler);
  if (values.all && values.program !== undefined)
    throw new UsageError("sheepdog install: --all and --program cannot be used together");
  let target: Target;
  let interval = values.interval;
  if (values.all) target = { kind: "all" };
  else {
    // like every command but doctor, install refuses a program whose config or state is bad
    const program = openProgram(values.program, { takesAll: true });
    target = { kind: "program", name: program.name, root: program.root };
    interval ??= program.policy.interval;
  }
  let plan = installPlan(scheduler, target, interval ?? ALL_INTERVAL_MS);
  // --watch: the resident watcher too, beside the timer (which stays as its watchdog)
  if (values.watch) plan = withWatcher(scheduler, target, plan);
  return runPlan(scheduler, plan, {
    dryRun: values["dry-run"] === true,
    json: values.json === true,
    extra: { target, ...(values.watch ? { watch: true } : {}) },
  });
}
