import { resolveProgramRoot, rootOf } from "../config/resolve.js";
import { UsageError } from "../errors.js";
import { collector, planJson, say, schedulerArg } from "../install/args.js";
import { uninstallPlan } from "../install/install.js";
import { describePlan, executePlan } from "../install/plan.js";
import { parseCommandArgs } from "../util/args.js";

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs("uninstall", argv, {
    program: { type: "string" },
    all: { type: "boolean" },
    "dry-run": { type: "boolean" },
    json: { type: "boolean" },
  });
  const scheduler = schedulerArg("uninstall", positionals);
  if (values.all && values.program !== undefined)
    throw new UsageError("sheepdog uninstall: --all and --program cannot be used together");
  // Our files are found by what they tick, not by the program's config: a program whose
  // config is broken, or whose directory is gone, can still be uninstalled by its path.
  const target = values.all
    ? ({ kind: "all" } as const)
    : {
        kind: "program" as const,
        root: values.program !== undefined ? rootOf(values.program) : resolveProgramRoot(undefined),
      };
  const plan = uninstallPlan(scheduler, target);
  const dryRun = values["dry-run"] === true;
  if (values.json) {
    const { out, lines } = collector();
    if (!dryRun) executePlan(plan.title, plan.steps, out);
    const found = plan.found.map((f) => f.name);
    const json = planJson(scheduler, plan, { dryRun, lines, extra: { target, found } });
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
