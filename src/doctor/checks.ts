import { accessSync, constants, readFileSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { loadProgram, type Program } from "../config/load.js";
import { allProgramRoots, resolveProgramRoot, sheepdogHome } from "../config/resolve.js";
import {
  type Installed,
  installedLaunchd,
  installedSystemd,
  type Scheduler,
} from "../install/installed.js";
import { homeDir, unitPath, which } from "../install/target.js";
import { stateDirOf, stateDirProblem, stateFiles } from "../state/dir.js";
import {
  claudeSettingsSnippet,
  runsSheepdog,
  STOP_FAILURE_COMMAND,
  stopFailureCommands,
} from "../usage/claude-settings.js";
import { defaultHostStateDir, hostStateDir } from "../usage/host-state.js";
import { seatOf } from "../usage/seat.js";
import { formatDuration } from "../util/duration.js";
import { parseIso } from "../util/time.js";
import { trustCheck } from "./trust.js";
import { watcherCheck } from "./watcher.js";

/**
 * Everything doctor looks at, read only: no state directory is created, no file written, no
 * journal line appended. A check says what it saw and, when not ok, the one thing to do.
 */
export type Status = "ok" | "warn" | "fail";

export interface Check {
  program: string | null;
  check: string;
  status: Status;
  detail: string;
  fix: string | null;
}

export const MIN_NODE = [20, 19] as const;

/** The scheduler this platform uses, for the fixes doctor suggests. */
export function nativeScheduler(): Scheduler {
  return process.platform === "darwin" ? "launchd" : "systemd";
}

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

const ok = (program: string, check: string, detail: string): Check => ({
  program,
  check,
  status: "ok",
  detail,
  fix: null,
});
const bad = (
  program: string,
  check: string,
  status: Status,
  detail: string,
  fix: string,
): Check => ({
  program,
  check,
  status,
  detail,
  fix,
});

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
function coveringUnits(root: string, installed: Installed[], home: string): Installed[] {
  return installed.filter((i) => {
    if (!i.target) return false;
    if (i.target.kind === "program") return resolve(i.target.root) === root;
    const home_ = i.sheepdogHome ?? join(home, "loops");
    return resolve(home_) === dirname(root);
  });
}

function installHint(scheduler: Scheduler, root: string): string {
  return `sheepdog install ${scheduler} --program ${root}`;
}

const describe = (i: Installed) =>
  `${i.scheduler} ${i.scheduler === "systemd" ? `${i.name}.timer` : i.name}`;

function timerCheck(program: Program, covering: Installed[], inert: Installed[]): Check {
  const scheduler = nativeScheduler();
  if (!covering.length)
    return bad(
      program.name,
      "timer",
      "warn",
      inert.length
        ? `only ${inert.map(describe).join(", ")} ticks this program, which ${process.platform} does not run`
        : "no launchd agent or systemd timer of sheepdog's ticks this program",
      installHint(scheduler, program.root),
    );
  for (const i of covering) {
    const [node, cli] = i.args;
    const missing = [node, cli].filter((f) => !f || !isFile(f));
    if (missing.length)
      return bad(
        program.name,
        "timer",
        "fail",
        `${describe(i)} runs ${missing.join(" and ")}, which no longer exists`,
        `reinstall it: sheepdog install ${i.scheduler} ${i.target?.kind === "all" ? "--all" : `--program ${program.root}`}`,
      );
  }
  // Statuslines write usage readings under $SHEEPDOG_STATE_DIR; a tick reading another folder
  // never sees a limit.
  const here = hostStateDir();
  for (const i of covering) {
    const theirs = i.stateDir ?? defaultHostStateDir();
    if (resolve(theirs) !== here)
      return bad(
        program.name,
        "timer",
        "warn",
        `${describe(i)} runs with SHEEPDOG_STATE_DIR=${theirs}${i.stateDir ? "" : " (the default)"}, but this shell has ${here}${process.env.SHEEPDOG_STATE_DIR ? "" : " (the default)"}: the tick does not read the usage readings statuslines started from here write`,
        `reinstall it from this shell: sheepdog install ${i.scheduler} ${i.target?.kind === "all" ? "--all" : `--program ${program.root}`}`,
      );
  }
  if (covering.length > 1)
    return bad(
      program.name,
      "timer",
      "warn",
      `ticked by ${covering.length} units (${covering.map(describe).join(", ")}); the tick lock keeps them apart, but one is enough`,
      `remove one: sheepdog uninstall ${covering[0]?.scheduler} ${covering[0]?.target?.kind === "all" ? "--all" : `--program ${program.root}`}`,
    );
  return ok(
    program.name,
    "timer",
    covering.map((i) => `${describe(i)} in ${dirname(i.files[0] ?? "")}`).join("; "),
  );
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

function lastTickCheck(program: Program, covering: Installed[]): Check {
  const path = join(stateDirOf(program.root), stateFiles.lastTick);
  const interval = program.policy.interval;
  const hint = covering[0]
    ? covering[0].scheduler === "systemd"
      ? `see: systemctl --user status ${covering[0].name}.timer; journalctl --user -u ${covering[0].name}.service`
      : `see: launchctl print gui/${process.getuid?.() ?? 0}/${covering[0].name}; logs in ~/Library/Logs/sheepdog/`
    : `install a timer (${installHint(nativeScheduler(), program.root)}) or run: sheepdog tick --program ${program.root}`;
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    return bad(program.name, "last_tick", "warn", "no tick has run yet", hint);
  }
  let at = Number.NaN;
  let decision: unknown;
  try {
    const parsed = JSON.parse(text) as { at?: string; decision?: unknown };
    at = parseIso(parsed.at);
    decision = parsed.decision;
  } catch {
    // handled below as unreadable
  }
  if (Number.isNaN(at))
    return bad(program.name, "last_tick", "warn", `${path}: no readable "at"`, hint);
  const age = Date.now() - at;
  const said = `last tick ${formatDuration(Math.max(0, age))} ago (${new Date(at).toISOString()})${typeof decision === "string" ? `: ${decision}` : ""}`;
  if (age > 2 * interval)
    return bad(
      program.name,
      "last_tick",
      "warn",
      `${said}, more than twice the interval (${formatDuration(interval)})`,
      hint,
    );
  return ok(program.name, "last_tick", said);
}

/** The argv[0]s a program's manager launcher needs, with whether each is required. */
function neededTools(program: Program): string[] {
  const m = program.config.manager;
  const tools: string[] = [];
  if (program.config.ledger || program.config.merge_lock) tools.push("git");
  if (m.launcher === "herdr") {
    tools.push("herdr");
    if ((m.herdr?.kind ?? "claude") === "claude") tools.push("claude");
  } else if (m.launcher === "tmux") {
    tools.push("tmux", m.tmux?.command[0] ?? "claude");
  } else if (m.command?.[0]) tools.push(m.command[0]);
  return [...new Set(tools)];
}

function toolChecks(program: Program, covering: Installed[]): Check[] {
  const fromUnit = covering.find((i) => i.path !== undefined);
  const path = fromUnit?.path ?? unitPath({ homebrew: nativeScheduler() === "launchd" });
  const whose = fromUnit ? `the PATH of ${fromUnit.name}` : "the PATH install would write";
  return neededTools(program).map((tool) => {
    // a relative command path is resolved against the program root, where the launcher runs it
    const found = tool.includes("/") ? which(resolve(program.root, tool), path) : which(tool, path);
    if (found) return ok(program.name, `tool:${tool}`, `${tool}: ${found} (on ${whose})`);
    return bad(
      program.name,
      `tool:${tool}`,
      "fail",
      `${tool} is not on ${whose}: ${path}`,
      fromUnit
        ? `install ${tool}, then reinstall the timer from a shell where it is on PATH`
        : `install ${tool}, or put it on PATH before running sheepdog install`,
    );
  });
}

/** The seat's settings.json, parsed, or why it cannot be. */
function readSettings(settings: string): { parsed: unknown } | { why: string } {
  try {
    return { parsed: JSON.parse(readFileSync(settings, "utf8")) };
  } catch (err) {
    return {
      why:
        (err as NodeJS.ErrnoException).code === "ENOENT"
          ? "does not exist"
          : `cannot be read as JSON: ${(err as Error).message}`,
    };
  }
}

const settingsFix = (settings: string) => `merge into ${settings}: ${claudeSettingsSnippet()}`;

function statuslineCheck(program: Program): Check {
  const seat = seatOf(program.config);
  const settings = join(seat, "settings.json");
  const fix = settingsFix(settings);
  const read = readSettings(settings);
  if ("why" in read)
    return bad(
      program.name,
      "statusline",
      "warn",
      `${settings} ${read.why}; no usage readings for seat ${seat}`,
      fix,
    );
  const command = (read.parsed as { statusLine?: { command?: unknown } } | null)?.statusLine
    ?.command;
  if (typeof command === "string" && runsSheepdog(command, "statusline"))
    return ok(program.name, "statusline", `${settings}: statusLine runs ${command}`);
  return bad(
    program.name,
    "statusline",
    "warn",
    typeof command === "string"
      ? `${settings}: statusLine runs ${JSON.stringify(command)}, not sheepdog statusline; usage limits will not pause this program`
      : `${settings}: no statusLine command; usage limits will not pause this program`,
    fix,
  );
}

/** The StopFailure hook (DESIGN §5): a usage-limit stop recorded at once, not at the next tick. */
function stopFailureHookCheck(program: Program): Check {
  const settings = join(seatOf(program.config), "settings.json");
  const read = readSettings(settings);
  const name = "stop_failure_hook";
  if ("why" in read)
    return bad(program.name, name, "warn", `${settings} ${read.why}`, settingsFix(settings));
  const commands = stopFailureCommands(read.parsed);
  const ours = commands.find((c) => runsSheepdog(c, "hook stop-failure"));
  if (ours) return ok(program.name, name, `${settings}: StopFailure runs ${ours}`);
  return bad(
    program.name,
    name,
    "warn",
    `${settings}: no StopFailure hook runs ${STOP_FAILURE_COMMAND}; a usage-limit stop is seen only when a tick reads the transcript`,
    settingsFix(settings),
  );
}

function pagesCheck(program: Program): Check {
  const ntfy = program.config.page?.ntfy;
  if (!ntfy)
    return bad(
      program.name,
      "pages",
      "warn",
      "no pages configured: a stand-down reaches nobody",
      `add "page": {"ntfy": {"topic": "..."}} to ${program.configPath}, then: sheepdog page --test`,
    );
  const where = `ntfy topic ${ntfy.topic} on ${ntfy.server}`;
  if (ntfy.token_file) {
    const file = ntfy.token_file;
    let st: ReturnType<typeof statSync>;
    try {
      st = statSync(file);
    } catch {
      return bad(
        program.name,
        "pages",
        "fail",
        `${where}: token_file ${file} does not exist`,
        `write the token to ${file} and chmod 600 ${file}`,
      );
    }
    const mode = st.mode & 0o777;
    if (mode & 0o077)
      return bad(
        program.name,
        "pages",
        "fail",
        `${where}: token_file ${file} has mode ${mode.toString(8).padStart(4, "0")}; a token file must be 0600`,
        `chmod 600 ${file}`,
      );
    try {
      accessSync(file, constants.R_OK);
    } catch {
      return bad(
        program.name,
        "pages",
        "fail",
        `${where}: token_file ${file} is not readable by you`,
        `chown $(id -un) ${file}; chmod 600 ${file}`,
      );
    }
    if (st.size === 0)
      return bad(
        program.name,
        "pages",
        "fail",
        `${where}: token_file ${file} is empty`,
        `write the token to ${file}`,
      );
    return ok(program.name, "pages", `${where}; token from ${file} (0600, readable)`);
  }
  if (ntfy.token_env) {
    const here = Boolean(process.env[ntfy.token_env]?.trim());
    // install writes only PATH, SHEEPDOG_HOME and SHEEPDOG_STATE_DIR into the unit (a token
    // never goes in a file others can read), so a scheduled tick cannot see this variable
    return bad(
      program.name,
      "pages",
      here ? "warn" : "fail",
      `${where}: token_env ${ntfy.token_env} is ${here ? "set in this shell, but" : "not set, and"} the timer's environment does not carry it; pages from the tick will fail`,
      `put the token in a file (chmod 600) and set page.ntfy.token_file in ${program.configPath}`,
    );
  }
  return ok(
    program.name,
    "pages",
    `${where}; no token (anyone who knows the topic can read the pages)`,
  );
}

/** All checks for one program root. A broken config stops at the checks that need none. */
export function programChecks(root: string, installed: Installed[]): Check[] {
  let program: Program;
  try {
    program = loadProgram(root);
  } catch (err) {
    return [
      bad(
        root,
        "config",
        "fail",
        (err as Error).message.split("\n").join("; "),
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
    lastTickCheck(program, covering),
    watcherCheck(program, nativeScheduler()),
    ...toolChecks(program, covering),
    statuslineCheck(program),
    stopFailureHookCheck(program),
    ...[trustCheck(program)].filter((c): c is Check => c !== null),
    pagesCheck(program),
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
