import { existsSync } from "node:fs";
import { join } from "node:path";
import { CONFIG_FILE } from "../config/files.js";
import { LAST_VALID, lastValidText } from "../config/last-valid.js";
import { loadProgram, type Program, programOf } from "../config/load.js";
import { allProgramRoots, resolveProgramRoot, sheepdogHome } from "../config/resolve.js";
import { type Installed, installedLaunchd, installedSystemd } from "../install/installed.js";
import { launchAgentsDir } from "../install/launchd.js";
import { userUnitDir } from "../install/systemd.js";
import { homeDir } from "../install/target.js";
import { programFolderProblems, stateDirOf, stateDirProblem } from "../state/dir.js";
import { type PathProblem, pathProblem } from "../state/owned.js";
import { HOST_SUBDIRS, hostStateDir } from "../usage/host-state.js";
import { agentChecks } from "./agent-checks.js";
import { bad, type Check, guarded, nativeScheduler, ok } from "./check.js";
import { leaseCheck } from "./lease-check.js";
import {
  activityCheck,
  cadenceCheck,
  coveringUnits,
  lastTickCheck,
  timerCheck,
  tmuxCheck,
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
  if (problem) return bad(label, "state", "fail", problem.problem, problem.fix);
  return ok(
    label,
    "state",
    existsSync(dir)
      ? `${dir}: yours, not writable by others`
      : `${dir}: not created yet (the first tick creates it)`,
  );
}

/** Whether what runs is the user's own (DESIGN §18): the folder, program.json, the prompt. */
function folderCheck(label: string, root: string): Check {
  const problems = programFolderProblems(root);
  if (problems.length === 0)
    return ok(
      label,
      "folder",
      `${root}: the folder, ${CONFIG_FILE} and the prompt are yours, not writable by others`,
    );
  return bad(
    label,
    "folder",
    "fail",
    `${problems.map((p) => p.problem).join("; ")}: no tick runs this program until it is fixed`,
    problems.map((p) => p.fix).join("; "),
  );
}

/**
 * The host's own folders (DESIGN §18): the host state dir and what is in it (the usage
 * readings, the session map, the bin/ shim every unit runs), and the unit or plist folder.
 */
export function hostChecks(home = homeDir()): Check[] {
  const state = hostStateDir();
  const dirs = [state, ...HOST_SUBDIRS.map((d) => join(state, d))];
  const units = nativeScheduler() === "launchd" ? launchAgentsDir(home) : userUnitDir(home);
  const problems = [
    ...dirs.map((d) => pathProblem(d, "dir", { chmod: "700" })),
    pathProblem(join(state, "bin", "sheepdog"), "file"),
    pathProblem(units, "dir"),
  ].filter((p): p is PathProblem => p !== null);
  if (problems.length === 0)
    return [
      {
        program: null,
        check: "host_folders",
        status: "ok",
        detail: `${state} and ${units}: yours, not writable by others`,
        fix: null,
      },
    ];
  return problems.map((p) => ({
    program: null,
    check: "host_folders",
    status: "fail" as const,
    detail: `${p.problem}: sheepdog refuses to read or write there`,
    fix: p.fix,
  }));
}

/** The installed timers/agents whose tick covers this program root. */
export function programChecks(root: string, installed: Installed[]): Check[] {
  let program: Program;
  let invalid: Check | null = null;
  try {
    program = loadProgram(root);
  } catch (err) {
    // Broken now: the watchdog goes on with the last valid copy (DESIGN §16), and so does every
    // other check here, against that copy; with none, there is nothing more to check.
    const keptPath = join(stateDirOf(root), LAST_VALID);
    const kept = lastValidText(stateDirOf(root));
    let last: Program | null = null;
    try {
      // Its fixes name program.json, the file a person edits.
      last = kept === null ? null : programOf(root, kept);
    } catch {
      // the copy no longer loads either (an older version's schema)
    }
    invalid = bad(
      last?.name ?? root,
      "config",
      "fail",
      `${(err as Error).message.split("\n").join("; ")}${last ? `; the watchdog goes on with the last valid copy (${keptPath}) until it is fixed, and the checks below are of that copy` : ""}`,
      `edit ${join(root, "program.json")}, then: sheepdog check --program ${root}`,
    );
    if (!last) return [invalid, folderCheck(root, root), stateCheck(root, root)];
    program = last;
  }
  // only the scheduler this platform runs counts; the other's files are inert here
  const all = coveringUnits(root, installed, homeDir());
  const covering = all.filter((i) => i.scheduler === nativeScheduler());
  const inert = all.filter((i) => i.scheduler !== nativeScheduler());
  return [
    invalid ??
      ok(
        program.name,
        "config",
        `${program.configPath}: valid (launcher ${program.config.manager.launcher})`,
      ),
    folderCheck(program.name, root),
    stateCheck(program.name, root),
    guarded(program.name, "timer", () => timerCheck(program, covering, inert)),
    ...[tmuxCheck(program, covering)].filter((c): c is Check => c !== null),
    guarded(program.name, "cadence", () => cadenceCheck(program, covering)),
    guarded(program.name, "activity", () => activityCheck(program)),
    guarded(program.name, "last_tick", () => lastTickCheck(program, covering)),
    guarded(program.name, "watcher", () => watcherCheck(program, nativeScheduler())),
    ...toolChecks(program, covering),
    ...agentChecks(program, covering),
    guarded(program.name, "pages", () => pagesCheck(program)),
    ...[leaseCheck(program)].filter((c): c is Check => c !== null),
  ];
}

export function runChecks(roots: string[]): Check[] {
  const home = homeDir();
  const installed = [...installedLaunchd(home), ...installedSystemd(home)];
  const checks: Check[] = [nodeCheck(), ...hostChecks(home)];
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
