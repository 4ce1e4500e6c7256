import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Scheduler } from "./installed.js";
import { launchAgentsDir, launchdLogDir } from "./launchd.js";
import type { Step } from "./plan.js";
import { int, type ParsedPlist, type PlistValue, parsePlist, writePlist } from "./plist.js";
import {
  isOurUnit,
  quoteAssignment,
  quoteExecWord,
  readOurService,
  SYSTEMD_MARKER,
  unitBaseOf,
  userUnitDir,
} from "./systemd.js";
import { type Target, type TmuxVar, targetAfter } from "./target.js";

/**
 * The resident watcher (`install --watch`, DESIGN §12), installed next to the timer, which stays
 * as the watcher's own watchdog. Its files are named so that no program name can collide with
 * them and the timer's own readers (OUR_UNIT_NAME, OUR_PLIST_NAME) never mistake them for a tick:
 * `sheepdog[-<name>].watch.service` and `dev.sheepdog-watch[.<name>].plist`.
 */
export const LAUNCHD_WATCH_MARKER =
  'sheepdog-managed watcher: made by "sheepdog install launchd" (watch mode); "sheepdog uninstall launchd" removes it';

export const OUR_WATCH_UNIT = /^sheepdog(-[a-z0-9][a-z0-9-]{0,62})?\.watch\.service$/;
export const OUR_WATCH_PLIST = /^dev\.sheepdog-watch(\.[a-z0-9][a-z0-9-]{0,62})?\.plist$/;

/** How long systemd waits for a stopping watcher: beyond its own 30 s wait for passes. */
export const WATCH_STOP_TIMEOUT = "60s";

export function watchArgs(target: Target): string[] {
  return target.kind === "all" ? ["watch", "--all"] : ["watch", "--program", target.root];
}

/** What a watcher's argv watches, or null when it is not `watch --all|--program ROOT`. */
export function watchTargetOfArgs(
  args: readonly string[],
): { kind: "all" } | { kind: "program"; root: string } | null {
  return targetAfter(args, "watch");
}

export const watchUnitName = (target: Target) => `${unitBaseOf(target)}.watch.service`;
export const watchLabelOf = (target: Target) =>
  target.kind === "all" ? "dev.sheepdog-watch" : `dev.sheepdog-watch.${target.name}`;

export interface WatchUnitOpts {
  target: Target;
  node: string;
  cli: string;
  path: string;
  sheepdogHome?: string;
  stateDir?: string;
  tmux?: Partial<Record<TmuxVar, string>>;
}

function envOf(o: WatchUnitOpts): Record<string, string> {
  const env: Record<string, string> = { PATH: o.path };
  if (o.sheepdogHome) env.SHEEPDOG_HOME = o.sheepdogHome;
  if (o.stateDir) env.SHEEPDOG_STATE_DIR = o.stateDir;
  Object.assign(env, o.tmux ?? {});
  return env;
}

const whatOf = (t: Target) =>
  t.kind === "all" ? "every sheepdog program" : `sheepdog program ${t.name}`;

/**
 * The watcher's user service. Restart=always with no start limit: a watcher that dies comes
 * back, and the timer covers the gap. KillMode=process: stopping or restarting the watcher must
 * not take the managers it started (they are in its cgroup) with it.
 */
export function renderWatchService(o: WatchUnitOpts): string {
  const exec = [o.node, o.cli, ...watchArgs(o.target)].map((w, i) => quoteExecWord(w, i)).join(" ");
  const lines = [
    SYSTEMD_MARKER,
    "",
    "[Unit]",
    `Description=sheepdog watcher (resident watchdog) for ${whatOf(o.target).replace(/%/g, "%%")}`,
    "StartLimitIntervalSec=0",
    "",
    "[Service]",
    "Type=simple",
    `ExecStart=${exec}`,
    ...Object.entries(envOf(o)).map(([k, v]) => `Environment=${quoteAssignment(k, v)}`),
    "Restart=always",
    "RestartSec=2s",
    "KillMode=process",
    `TimeoutStopSec=${WATCH_STOP_TIMEOUT}`,
    "",
    "[Install]",
    "WantedBy=default.target",
  ];
  return `${lines.join("\n")}\n`;
}

/**
 * The watcher's launch agent: KeepAlive brings it back whenever it exits; AbandonProcessGroup
 * keeps the managers it started alive when it goes; Standard, not Background: reacting fast
 * is its whole point.
 */
export function renderWatchAgent(o: WatchUnitOpts & { home: string }): string {
  const label = watchLabelOf(o.target);
  const logs = launchdLogDir(o.home);
  const agent: PlistValue = {
    Label: label,
    ProgramArguments: [o.node, o.cli, ...watchArgs(o.target)],
    RunAtLoad: true,
    KeepAlive: true,
    ThrottleInterval: int(5),
    ProcessType: "Standard",
    AbandonProcessGroup: true,
    StandardOutPath: join(logs, `${label}.out.log`),
    StandardErrorPath: join(logs, `${label}.err.log`),
    EnvironmentVariables: envOf(o),
  };
  return writePlist(agent, LAUNCHD_WATCH_MARKER);
}

/** One installed watcher, found on disk by name and marker. */
export interface InstalledWatcher {
  scheduler: Scheduler;
  /** The unit file name (`sheepdog-demo.watch.service`) or the launchd label. */
  name: string;
  file: string;
  target: { kind: "all" } | { kind: "program"; root: string } | null;
}

function list(dir: string): string[] {
  try {
    return readdirSync(dir).sort();
  } catch {
    return [];
  }
}

function read(path: string): string | null {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return null;
  }
}

export function installedWatchers(
  scheduler: Scheduler,
  home: string,
  env = process.env,
): InstalledWatcher[] {
  const out: InstalledWatcher[] = [];
  if (scheduler === "systemd") {
    const dir = userUnitDir(home, env);
    for (const file of list(dir).filter((f) => OUR_WATCH_UNIT.test(f))) {
      const text = read(join(dir, file));
      if (!text || !isOurUnit(text)) continue;
      const service = readOurService(text);
      out.push({
        scheduler,
        name: file,
        file: join(dir, file),
        target: service ? watchTargetOfArgs(service.args) : null,
      });
    }
    return out;
  }
  const dir = launchAgentsDir(home);
  for (const file of list(dir).filter((f) => OUR_WATCH_PLIST.test(f))) {
    const text = read(join(dir, file));
    if (!text?.includes(LAUNCHD_WATCH_MARKER)) continue;
    let parsed: ParsedPlist;
    try {
      parsed = parsePlist(text);
    } catch {
      continue;
    }
    if (typeof parsed !== "object" || Array.isArray(parsed)) continue;
    const args = Array.isArray(parsed.ProgramArguments)
      ? parsed.ProgramArguments.filter((a): a is string => typeof a === "string")
      : [];
    out.push({
      scheduler,
      name: file.replace(/\.plist$/, ""),
      file: join(dir, file),
      target: watchTargetOfArgs(args),
    });
  }
  return out;
}

/** Steps that stop and remove installed watchers. */
export function watcherRemovalSteps(found: InstalledWatcher[], uid: number): Step[] {
  const steps: Step[] = [];
  for (const w of found) {
    if (w.scheduler === "systemd")
      steps.push({
        op: "run",
        argv: ["systemctl", "--user", "disable", "--now", w.name],
        harmless: notLoadedUnit,
      });
    else
      steps.push({
        op: "run",
        argv: ["launchctl", "bootout", `gui/${uid}/${w.name}`],
        harmless: (r) =>
          r.status === 3 ||
          r.status === 113 ||
          /no such process|not loaded|could not find/i.test(`${r.stderr}${r.stdout}`)
            ? "it was not loaded"
            : null,
      });
    steps.push({ op: "remove", path: w.file });
  }
  return steps;
}

function notLoadedUnit(r: { stderr: string; stdout: string }): string | null {
  return /not loaded|does not exist|not found/i.test(`${r.stderr}${r.stdout}`)
    ? "it was not loaded"
    : null;
}
