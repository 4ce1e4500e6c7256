import { existsSync, readFileSync } from "node:fs";
import { userInfo } from "node:os";
import { dirname, join } from "node:path";
import { RefusedError } from "../errors.js";
import { formatDuration } from "../util/duration.js";
import { type Installed, installedOf, type Scheduler } from "./installed.js";
import {
  buildLaunchAgent,
  LAUNCHD_MARKER,
  labelOf,
  launchAgentsDir,
  launchdLogDir,
  plistPathOf,
  renderLaunchAgent,
} from "./launchd.js";
import { type CommandResult, LAUNCHER_FILE_MODE, type Step } from "./plan.js";
import { launchdCalendar, type Schedule, scheduleOf, systemdOnCalendar } from "./schedule.js";
import {
  buildUnits,
  isOurUnit,
  renderService,
  renderTimer,
  timerStampPath,
  userUnitDir,
} from "./systemd.js";
import {
  cliPath,
  homeDir,
  sameTarget,
  sheepdogBin,
  sheepdogHomeEnv,
  sheepdogStateDirEnv,
  type Target,
  type TmuxVar,
  tickArgs,
  tmuxEnvOf,
  unitPath,
} from "./target.js";

export interface Plan {
  title: string;
  steps: Step[];
  /** Printed after a successful run (not in a dry run). */
  summary: string;
}

function uid(): number {
  return process.getuid?.() ?? 0;
}

/** launchctl's answers for "that service is not loaded": bootout of it is already done. */
function notLoaded(r: CommandResult): string | null {
  if (r.missing) return "launchctl is not on this host, so nothing was loaded";
  const said = `${r.stderr}\n${r.stdout}`;
  if (r.status === 3 || r.status === 113) return "it was not loaded";
  return /no such process|could not find|not loaded|service not found/i.test(said)
    ? "it was not loaded"
    : null;
}

const bootout = (label: string): Step => ({
  op: "run",
  argv: ["launchctl", "bootout", `gui/${uid()}/${label}`],
  harmless: notLoaded,
});

/** The `sheepdog` launcher the unit's PATH names, when one must be written (DESIGN §16). */
export function shimSteps(env: NodeJS.ProcessEnv): Step[] {
  const { dir, shim } = sheepdogBin(env);
  if (!shim) return [];
  // The host state dir first: made 0700, or narrowed when an older install left it open.
  return [
    { op: "mkdir", path: dirname(dir) },
    { op: "mkdir", path: dir },
    { op: "write", path: shim.path, content: shim.content, mode: LAUNCHER_FILE_MODE },
  ];
}

/** Refuses to overwrite a file of the same name that sheepdog did not write. */
function refuseForeign(path: string, isOurs: (text: string) => boolean): void {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    return;
  }
  if (!isOurs(text))
    throw new RefusedError(
      `${path} exists and was not written by sheepdog (no sheepdog-managed marker); not overwriting it`,
    );
}

function describeTarget(target: Target): string {
  return target.kind === "all" ? "every program" : `program ${target.name} (${target.root})`;
}

/** What both schedulers' plans are made from. */
interface PlanInput {
  target: Target;
  /** How often the tick runs, in ms (the `--interval` flag, parsed by util/args.ts). */
  interval: number;
  env: NodeJS.ProcessEnv;
  home: string;
  schedule: Schedule;
  every: string;
  title: string;
  /** The files every unit runs and the environment it passes on. */
  runs: {
    node: string;
    cli: string;
    sheepdogHome?: string;
    stateDir?: string;
    tmux?: Partial<Record<TmuxVar, string>>;
  };
  /** An earlier install for the same target under another name (the program was renamed). */
  stale: (name: string) => ReturnType<typeof installedOf>;
}

export function installPlan(
  scheduler: Scheduler,
  target: Target,
  interval: number,
  env = process.env,
): Plan {
  const home = homeDir(env);
  const schedule = scheduleOf(interval);
  const sheepdogHome = sheepdogHomeEnv(env);
  const stateDir = sheepdogStateDirEnv(env);
  const input: PlanInput = {
    target,
    interval,
    env,
    home,
    schedule,
    every: formatDuration(interval),
    title: `sheepdog install ${scheduler}`,
    runs: {
      node: process.execPath,
      cli: cliPath(),
      ...(sheepdogHome ? { sheepdogHome } : {}),
      ...(stateDir ? { stateDir } : {}),
      tmux: tmuxEnvOf(env),
    },
    stale: (name) =>
      installedOf(scheduler, home, env).filter(
        (i) => i.name !== name && i.target && sameTarget(i.target, target),
      ),
  };
  return scheduler === "launchd" ? launchdPlan(input) : systemdPlan(input);
}

function launchdPlan({ target, env, home, schedule, every, title, runs, stale }: PlanInput): Plan {
  const label = labelOf(target);
  const plist = plistPathOf(home, label);
  refuseForeign(plist, (t) => t.includes(LAUNCHD_MARKER));
  const agent = buildLaunchAgent({
    target,
    ...runs,
    schedule,
    every,
    home,
    path: unitPath({ homebrew: true, env }),
  });
  const steps: Step[] = [
    ...shimSteps(env),
    { op: "mkdir", path: launchAgentsDir(home) },
    { op: "mkdir", path: launchdLogDir(home) },
    { op: "write", path: plist, content: renderLaunchAgent(agent) },
  ];
  for (const old of stale(label))
    steps.push(bootout(old.name), ...old.files.map((p): Step => ({ op: "remove", path: p })));
  steps.push(bootout(label), {
    op: "run",
    argv: ["launchctl", "bootstrap", `gui/${uid()}`, plist],
  });
  const when = launchdCalendar(schedule)
    ? `StartCalendarInterval, every ${every}`
    : `StartInterval ${agent.StartInterval}s`;
  return {
    title,
    steps,
    summary: `installed launchd agent ${label}: runs sheepdog ${tickArgs(target, every).join(" ")} (${when}) for ${describeTarget(target)}; logs in ${launchdLogDir(home)}`,
  };
}

function systemdPlan({ target, interval, every, env, home, title, runs, stale }: PlanInput): Plan {
  const onCalendar = systemdOnCalendar(interval);
  const dir = userUnitDir(home, env);
  const units = buildUnits({
    target,
    ...runs,
    onCalendar,
    every,
    path: unitPath({ homebrew: false, env }),
  });
  const servicePath = join(dir, `${units.base}.service`);
  const timerPath = join(dir, `${units.base}.timer`);
  for (const p of [servicePath, timerPath]) refuseForeign(p, isOurUnit);
  const user = env.USER || userInfo().username;
  const steps: Step[] = [
    ...shimSteps(env),
    { op: "mkdir", path: dir },
    { op: "write", path: servicePath, content: renderService(units.service) },
    { op: "write", path: timerPath, content: renderTimer(units.timer) },
  ];
  for (const old of stale(units.base)) steps.push(...systemdRemoval(old, home, env));
  steps.push(
    { op: "run", argv: ["systemctl", "--user", "daemon-reload"] },
    { op: "run", argv: ["systemctl", "--user", "enable", "--now", `${units.base}.timer`] },
    {
      op: "run",
      argv: ["loginctl", "show-user", user, "--property=Linger"],
      probe: (r) => lingerNote(r, user),
    },
  );
  return {
    title,
    steps,
    summary: `installed systemd timer ${units.base}.timer (OnCalendar=${onCalendar}, Persistent=true): runs sheepdog ${tickArgs(target, every).join(" ")} for ${describeTarget(target)}; logs: journalctl --user -u ${units.base}.service`,
  };
}

function lingerNote(r: CommandResult, user: string): string | null {
  const linger = /Linger=(yes|no)/.exec(r.stdout)?.[1];
  if (linger === "yes")
    return `lingering is on for ${user}: the timer runs while you are logged out`;
  if (linger === "no")
    return `warning: lingering is off for ${user}: the timer stops when you log out; turn it on with: loginctl enable-linger ${user}`;
  const why = r.missing
    ? "loginctl not found"
    : r.status !== 0
      ? `loginctl exit ${r.status}`
      : "no Linger= in its answer";
  return `warning: could not tell whether lingering is on for ${user} (${why}); for the timer to run while you are logged out: loginctl enable-linger ${user}`;
}

/** Without systemctl no timer of these files can be enabled: removing them is all there is. */
function noSystemctl(r: CommandResult): string | null {
  return r.missing ? "systemctl is not on this host, so nothing was enabled" : null;
}

/**
 * Disables the timer (never stopping the service: a tick may be starting a manager, and under
 * systemd the managers run in units of their own that uninstall never touches), removes the
 * unit files, and the `Persistent=` timer's stamp, which systemd leaves behind.
 */
function systemdRemoval(old: Installed, home: string, env: NodeJS.ProcessEnv): Step[] {
  const steps: Step[] = [];
  if (old.files.some((p) => p.endsWith(".timer")))
    steps.push({
      op: "run",
      argv: ["systemctl", "--user", "disable", "--now", `${old.name}.timer`],
      harmless: noSystemctl,
    });
  for (const p of old.files) steps.push({ op: "remove", path: p });
  const stamp = timerStampPath(home, old.name, env);
  if (existsSync(stamp)) steps.push({ op: "remove", path: stamp });
  return steps;
}

/** What `uninstall` removes: only files of ours whose tick targets the same program (or `--all`). */
export function uninstallPlan(
  scheduler: Scheduler,
  target: { kind: "all" } | { kind: "program"; root: string },
  env = process.env,
): Plan & { found: Installed[] } {
  const home = homeDir(env);
  const found = installedOf(scheduler, home, env).filter(
    (i) => i.target && sameTarget(i.target, target),
  );
  const steps: Step[] = [];
  for (const one of found) {
    if (scheduler === "launchd")
      steps.push(bootout(one.name), ...one.files.map((p): Step => ({ op: "remove", path: p })));
    else steps.push(...systemdRemoval(one, home, env));
  }
  if (scheduler === "systemd" && found.length)
    steps.push({
      op: "run",
      argv: ["systemctl", "--user", "daemon-reload"],
      harmless: noSystemctl,
    });
  return {
    title: `sheepdog uninstall ${scheduler}`,
    steps,
    found,
    summary: found.length
      ? `uninstalled ${found.map((f) => f.name).join(", ")}`
      : "nothing of sheepdog's is installed for that target",
  };
}
