import { resolveProgramRoot, rootOf } from "../config/resolve.js";
import { UsageError } from "../errors.js";
import { runPlan, schedulerArg } from "../install/args.js";
import { uninstallPlan } from "../install/install.js";
import { withoutWatchers } from "../install/watch-plan.js";
import { parseCommandArgs } from "../util/args.js";

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs("uninstall", argv);
  const scheduler = schedulerArg("uninstall", positionals);
  if (values.all && values.program !== undefined)
    throw new UsageError("sheepdog uninstall: --all and --program cannot be used together");
  // Our files are found by what they tick, not by the program's config: a program whose
  // config is broken, or whose directory is gone, can still be uninstalled by its path.
  const target = values.all
    ? ({ kind: "all" } as const)
    : {
        kind: "program" as const,
        root:
          values.program !== undefined
            ? rootOf(values.program)
            : resolveProgramRoot(undefined, process.cwd(), process.env, { takesAll: true }),
      };
  const timer = uninstallPlan(scheduler, target);
  const plan = withoutWatchers(scheduler, target, timer);
  return runPlan(scheduler, plan, {
    dryRun: values["dry-run"] === true,
    json: values.json === true,
    extra: { target, found: [...timer.found.map((f) => f.name), ...plan.watchers] },
  });
}
