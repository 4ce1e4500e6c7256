import { readClaim } from "../claim/claim.js";
import { allProgramRoots, resolveProgramRoot, rootOf } from "../config/resolve.js";
import { coveringUnits } from "../doctor/schedule-checks.js";
import { UsageError } from "../errors.js";
import { runPlan, schedulerArg } from "../install/args.js";
import { uninstallPlan } from "../install/install.js";
import { type Installed, installedLaunchd, installedSystemd } from "../install/installed.js";
import { homeDir } from "../install/target.js";
import { withoutWatchers } from "../install/watch-plan.js";
import { stateDirOf } from "../state/dir.js";
import { parseCommandArgs } from "../util/args.js";

/** A manager still running in a program the removed units were the last to tick. */
interface Unsupervised {
  root: string;
  pid: number;
}

/**
 * The programs this uninstall leaves with a live manager and no timer (issue 33: stopping the
 * units never touches a manager, so one may go on for hours that nothing watches any more).
 */
function leftUnsupervised(
  target: { kind: "all" } | { kind: "program"; root: string },
  removed: readonly Installed[],
): Unsupervised[] {
  const home = homeDir();
  const gone = new Set(removed.flatMap((i) => i.files));
  const remaining = [...installedLaunchd(home), ...installedSystemd(home)].filter(
    (i) => !i.files.some((f) => gone.has(f)),
  );
  const roots = target.kind === "all" ? allProgramRoots() : [target.root];
  return roots.flatMap((root) => {
    if (coveringUnits(root, remaining, home).length > 0) return [];
    const claim = readClaim(stateDirOf(root));
    return claim.held && claim.holder && claim.liveness === "alive"
      ? [{ root, pid: claim.holder.pid }]
      : [];
  });
}

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
  const dryRun = values["dry-run"] === true;
  const unsupervised = timer.found.length > 0 ? leftUnsupervised(target, timer.found) : [];
  const code = await runPlan(scheduler, plan, {
    dryRun,
    json: values.json === true,
    extra: {
      target,
      found: [...timer.found.map((f) => f.name), ...plan.watchers],
      // Only when there are any: the document's keys stay as they were otherwise.
      ...(unsupervised.length > 0 ? { unsupervised } : {}),
    },
  });
  if (!values.json)
    for (const u of unsupervised)
      process.stderr.write(
        `warning: ${u.root}: its manager (pid ${u.pid}) ${dryRun ? "would be" : "is"} left running with nothing to supervise it: no tick restarts it if it dies or hangs, and nothing pages; stop it (kill ${u.pid}) or install the timer again (sheepdog install ${scheduler} --program ${u.root})\n`,
      );
  return code;
}
