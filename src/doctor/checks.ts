import { statSync } from "node:fs";
import { join } from "node:path";
import { LAST_VALID, lastValidText } from "../config/last-valid.js";
import { loadProgram, type Program } from "../config/load.js";
import { allProgramRoots, resolveProgramRoot, sheepdogHome } from "../config/resolve.js";
import { type Installed, installedLaunchd, installedSystemd } from "../install/installed.js";
import { homeDir } from "../install/target.js";
import { stateDirOf, stateDirProblem } from "../state/dir.js";
import { agentChecks } from "./agent-checks.js";
import { bad, type Check, nativeScheduler, ok } from "./check.js";
import { leaseCheck } from "./lease-check.js";
import {
  activityCheck,
  cadenceCheck,
  coveringUnits,
  lastTickCheck,
  timerCheck,
} from "./schedule-checks.js";
import { pagesCheck, toolChecks } from "./tool-checks.js";
import { watcherCheck } from "./watcher.js";

export { type Check, nativeScheduler, type Status } from "./check.js";

export const MIN_NODE = [20, 19] as const;

export function nodeCheck(version = process.versions.node): Check {
  const [major = 0, minor = 0] = version.split(".").map(Number);
  const ok = major > MIN_NODE[0] || (major === MIN_NODE[0] && minor >= MIN_NODE[1]);
  return {
    program: null,
    check: "node",
    status: ok ? "ok" : "fail",
    detail: `node ${version} (${process.execPath})${ok ? "" : `; sheepdog needs ${MIN_NODE.join(".")} or later`}`,
    fix: ok
      ? null
      : `install Node ${MIN_NODE.join(".")} or later, then reinstall the timer so it runs that node`,
  };
}

/** Which programs doctor looks at: `--program`, `--all`, else the resolvable one, else all. */
export function doctorRoots(flag: string | undefined, all: boolean | undefined): string[] {
  if (all) return allProgramRoots();
  if (flag !== undefined) return [resolveProgramRoot(flag)];
  try {
    return [resolveProgramRoot(undefined)];
  } catch {
    return allProgramRoots();
  }
}

function stateCheck(label: string, root: string): Check {
  const dir = stateDirOf(root);
  const problem = stateDirProblem(dir);
  if (!problem) {
    let exists = true;
    try {
      statSync(dir);
    } catch {
      exists = false;
    }
    return ok(
      label,
      "state",
      exists
        ? `${dir}: yours, not writable by others`
        : `${dir}: not created yet (the first tick creates it)`,
    );
  }
  const fix = /writable/.test(problem)
    ? `chmod 700 ${dir}`
    : /owned by/.test(problem)
      ? `chown -R $(id -un) ${dir} (or remove it if it is not sheepdog's)`
      : `move ${dir} out of the way; sheepdog recreates it`;
  return bad(label, "state", "fail", problem, fix);
}

/** The installed timers/agents whose tick covers this program root. */
export function programChecks(root: string, installed: Installed[]): Check[] {
  let program: Program;
  try {
    program = loadProgram(root);
  } catch (err) {
    const kept = lastValidText(stateDirOf(root)) !== null;
    return [
      bad(
        root,
        "config",
        "fail",
        `${(err as Error).message.split("\n").join("; ")}${kept ? `; the watchdog goes on with the last valid copy (${join(stateDirOf(root), LAST_VALID)}) until it is fixed` : ""}`,
        `edit ${join(root, "program.json")}, then: sheepdog check --program ${root}`,
      ),
      stateCheck(root, root),
    ];
  }
  // only the scheduler this platform runs counts; the other's files are inert here
  const all = coveringUnits(root, installed, homeDir());
  const covering = all.filter((i) => i.scheduler === nativeScheduler());
  const inert = all.filter((i) => i.scheduler !== nativeScheduler());
  return [
    ok(
      program.name,
      "config",
      `${program.configPath}: valid (launcher ${program.config.manager.launcher})`,
    ),
    stateCheck(program.name, root),
    timerCheck(program, covering, inert),
    cadenceCheck(program, covering),
    activityCheck(program),
    lastTickCheck(program, covering),
    watcherCheck(program, nativeScheduler()),
    ...toolChecks(program, covering),
    ...agentChecks(program, covering),
    pagesCheck(program),
    ...[leaseCheck(program)].filter((c): c is Check => c !== null),
  ];
}

export function runChecks(roots: string[]): Check[] {
  const home = homeDir();
  const installed = [...installedLaunchd(home), ...installedSystemd(home)];
  const checks: Check[] = [nodeCheck()];
  if (!roots.length)
    checks.push({
      program: null,
      check: "programs",
      status: "warn",
      detail: `no programs under ${sheepdogHome()}`,
      fix: "create one: sheepdog init DIR (or set $SHEEPDOG_HOME / pass --program)",
    });
  for (const root of roots) checks.push(...programChecks(root, installed));
  return checks;
}
