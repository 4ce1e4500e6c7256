import { UsageError } from "../errors.js";
import type { Plan } from "./install.js";
import type { Scheduler } from "./installed.js";
import { describePlan, executePlan, shellLine, UNIT_FILE_MODE } from "./plan.js";
import { which } from "./target.js";

export const SCHEDULERS: readonly Scheduler[] = ["launchd", "systemd"];

/** The one positional `launchd|systemd` of install/uninstall. */
export function schedulerArg(command: string, positionals: string[]): Scheduler {
  const [which, ...extra] = positionals;
  if (which === undefined || extra.length || !SCHEDULERS.includes(which as Scheduler))
    throw new UsageError(
      `sheepdog ${command}: expected launchd or systemd${which === undefined ? "" : `, got ${JSON.stringify(positionals.join(" "))}`}`,
    );
  return which as Scheduler;
}

/** The tool each scheduler is driven by. */
export const SCHEDULER_TOOL: Record<Scheduler, string> = {
  launchd: "launchctl",
  systemd: "systemctl",
};

/**
 * `install` on a host without the scheduler's tool refuses before writing anything (DESIGN
 * §16): a plist on Linux would never run, and its half-done install would need cleaning up.
 */
export function requireSchedulerTool(scheduler: Scheduler, path = process.env.PATH): void {
  const tool = SCHEDULER_TOOL[scheduler];
  if (which(tool, path)) return;
  const other = scheduler === "launchd" ? "systemd" : "launchd";
  throw new UsageError(
    `install ${scheduler}: ${tool} is not on PATH, so this host does not run ${scheduler}; nothing was written (on this host: sheepdog install ${other}, or sheepdog watch)`,
  );
}

/** Lines starting with "warning:" go to stderr; everything else to stdout. */
export function say(line: string): void {
  if (line.startsWith("warning:")) process.stderr.write(`${line}\n`);
  else process.stdout.write(`${line}\n`);
}

/**
 * With `--json`, the lines `executePlan` would print are kept for the one document instead;
 * warnings still reach stderr as they happen, as they do for people.
 */
export function collector(): { out: (line: string) => void; lines: string[] } {
  const lines: string[] = [];
  return {
    lines,
    out(line) {
      lines.push(line);
      if (line.startsWith("warning:")) process.stderr.write(`${line}\n`);
    },
  };
}

/**
 * The `--json` document of install/uninstall: every file written or removed (with its content
 * in a dry run), every command as an argv, and what the run said beyond echoing its steps.
 */
export function planJson(
  scheduler: Scheduler,
  plan: Plan,
  opts: { dryRun: boolean; lines?: readonly string[]; extra?: Record<string, unknown> },
): Record<string, unknown> {
  const files: Record<string, unknown>[] = [];
  const dirs: string[] = [];
  const commands: string[][] = [];
  const echoes = new Set<string>();
  for (const step of plan.steps) {
    if (step.op === "mkdir") dirs.push(step.path);
    else if (step.op === "write") {
      files.push({
        path: step.path,
        action: "write",
        mode: `0${(step.mode ?? UNIT_FILE_MODE).toString(8)}`,
        ...(opts.dryRun ? { content: step.content } : {}),
      });
      echoes.add(`wrote ${step.path}`);
    } else if (step.op === "remove") {
      files.push({ path: step.path, action: "remove" });
      echoes.add(`removed ${step.path}`);
    } else {
      commands.push([...step.argv]);
      echoes.add(`ran ${shellLine(step.argv)}`);
    }
  }
  const lines = opts.lines ?? [];
  const warnings = lines
    .filter((l) => l.startsWith("warning:"))
    .map((l) => l.replace(/^warning:\s*/, ""));
  const notes = lines.filter((l) => !l.startsWith("warning:") && !echoes.has(l));
  return {
    scheduler,
    ...opts.extra,
    dry_run: opts.dryRun,
    files,
    dirs,
    commands,
    warnings,
    notes,
    summary: opts.dryRun ? null : plan.summary,
  };
}

/**
 * Carries out (or, with --dry-run, only describes) an install or uninstall plan, printing it
 * for people or, with --json, as one document. `extra` goes into the JSON as it is.
 */
export async function runPlan(
  scheduler: Scheduler,
  plan: Plan,
  opts: { dryRun: boolean; json: boolean; extra: Record<string, unknown> },
): Promise<number> {
  if (opts.json) {
    const { out, lines } = collector();
    if (!opts.dryRun) await executePlan(plan.title, plan.steps, out);
    const json = planJson(scheduler, plan, { dryRun: opts.dryRun, lines, extra: opts.extra });
    process.stdout.write(`${JSON.stringify(json)}\n`);
    return 0;
  }
  if (opts.dryRun) {
    process.stdout.write(describePlan(plan.title, plan.steps));
    return 0;
  }
  await executePlan(plan.title, plan.steps, say);
  say(plan.summary);
  return 0;
}
