import { UsageError } from "../errors.js";
import type { Scheduler } from "./installed.js";

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

/** Lines starting with "warning:" go to stderr; everything else to stdout. */
export function say(line: string): void {
  if (line.startsWith("warning:")) process.stderr.write(`${line}\n`);
  else process.stdout.write(`${line}\n`);
}
