import { join } from "node:path";
import { int, type ParsedPlist, type PlistValue, parsePlist, writePlist } from "./plist.js";
import { type CalendarEntry, launchdCalendar, type Schedule } from "./schedule.js";
import { type Target, type TmuxVar, tickArgs, tmuxVarsIn } from "./target.js";

export const LABEL_PREFIX = "dev.sheepdog";

/** The comment that marks a plist as written by sheepdog (uninstall removes only these). */
export const LAUNCHD_MARKER =
  'sheepdog-managed: made by "sheepdog install launchd"; "sheepdog uninstall launchd" removes it';

/** The launchd keys sheepdog sets; see docs/install.md ("The plist's keys") for why each one. */
export interface LaunchAgent {
  Label: string;
  ProgramArguments: string[];
  StartCalendarInterval?: CalendarEntry[];
  StartInterval?: number;
  RunAtLoad: true;
  ProcessType: "Background";
  AbandonProcessGroup: true;
  StandardOutPath: string;
  StandardErrorPath: string;
  EnvironmentVariables: {
    PATH: string;
    SHEEPDOG_HOME?: string;
    SHEEPDOG_STATE_DIR?: string;
  } & Partial<Record<TmuxVar, string>>;
}

export function labelOf(target: Target): string {
  return target.kind === "all" ? LABEL_PREFIX : `${LABEL_PREFIX}.${target.name}`;
}

export const launchAgentsDir = (home: string) => join(home, "Library", "LaunchAgents");
export const launchdLogDir = (home: string) => join(home, "Library", "Logs", "sheepdog");
export const plistPathOf = (home: string, label: string) =>
  join(launchAgentsDir(home), `${label}.plist`);

/** File names that could be ours: `dev.sheepdog.plist`, `dev.sheepdog.<name>.plist`. */
export const OUR_PLIST_NAME = /^dev\.sheepdog(\.[a-z0-9][a-z0-9-]{0,62})?\.plist$/;

export function buildLaunchAgent(opts: {
  target: Target;
  node: string;
  cli: string;
  schedule: Schedule;
  /** The interval it ticks at, passed as `tick --every`. */
  every: string;
  home: string;
  path: string;
  sheepdogHome?: string;
  stateDir?: string;
  tmux?: Partial<Record<TmuxVar, string>>;
}): LaunchAgent {
  const label = labelOf(opts.target);
  const logs = launchdLogDir(opts.home);
  const calendar = launchdCalendar(opts.schedule);
  const env: LaunchAgent["EnvironmentVariables"] = { PATH: opts.path };
  if (opts.sheepdogHome) env.SHEEPDOG_HOME = opts.sheepdogHome;
  if (opts.stateDir) env.SHEEPDOG_STATE_DIR = opts.stateDir;
  Object.assign(env, opts.tmux ?? {});
  return {
    Label: label,
    ProgramArguments: [opts.node, opts.cli, ...tickArgs(opts.target, opts.every)],
    ...(calendar
      ? { StartCalendarInterval: calendar }
      : {
          StartInterval: opts.schedule.kind === "seconds" ? opts.schedule.seconds : 300,
        }),
    RunAtLoad: true,
    ProcessType: "Background",
    AbandonProcessGroup: true,
    StandardOutPath: join(logs, `${label}.out.log`),
    StandardErrorPath: join(logs, `${label}.err.log`),
    EnvironmentVariables: env,
  };
}

/** The typed agent as a property-list value: integers marked as such, key order kept. */
function toPlistValue(agent: LaunchAgent): PlistValue {
  return {
    Label: agent.Label,
    ProgramArguments: agent.ProgramArguments,
    StartCalendarInterval: agent.StartCalendarInterval?.map((e) => ({
      ...(e.Hour !== undefined ? { Hour: int(e.Hour) } : {}),
      Minute: int(e.Minute),
    })),
    StartInterval: agent.StartInterval !== undefined ? int(agent.StartInterval) : undefined,
    RunAtLoad: agent.RunAtLoad,
    ProcessType: agent.ProcessType,
    AbandonProcessGroup: agent.AbandonProcessGroup,
    StandardOutPath: agent.StandardOutPath,
    StandardErrorPath: agent.StandardErrorPath,
    EnvironmentVariables: { ...agent.EnvironmentVariables },
  };
}

export function renderLaunchAgent(agent: LaunchAgent): string {
  return writePlist(toPlistValue(agent), LAUNCHD_MARKER);
}

/** What doctor and uninstall read back from an installed plist of ours. */
export interface InstalledAgent {
  label: string;
  args: string[];
  path: string | undefined;
  sheepdogHome: string | undefined;
  stateDir: string | undefined;
  tmux: Partial<Record<TmuxVar, string>>;
}

/** Reads a plist if sheepdog wrote it (marker + a `Label` of ours); null otherwise. */
export function readOurPlist(text: string): InstalledAgent | null {
  if (!text.includes(`<!-- ${LAUNCHD_MARKER} -->`)) return null;
  let parsed: ParsedPlist;
  try {
    parsed = parsePlist(text);
  } catch {
    return null;
  }
  if (typeof parsed !== "object" || Array.isArray(parsed)) return null;
  const label = parsed.Label;
  if (
    typeof label !== "string" ||
    !(label === LABEL_PREFIX || label.startsWith(`${LABEL_PREFIX}.`))
  )
    return null;
  const args = Array.isArray(parsed.ProgramArguments)
    ? parsed.ProgramArguments.filter((a): a is string => typeof a === "string")
    : [];
  const env =
    typeof parsed.EnvironmentVariables === "object" && !Array.isArray(parsed.EnvironmentVariables)
      ? parsed.EnvironmentVariables
      : {};
  return {
    label,
    args,
    path: typeof env.PATH === "string" ? env.PATH : undefined,
    sheepdogHome: typeof env.SHEEPDOG_HOME === "string" ? env.SHEEPDOG_HOME : undefined,
    stateDir: typeof env.SHEEPDOG_STATE_DIR === "string" ? env.SHEEPDOG_STATE_DIR : undefined,
    tmux: tmuxVarsIn(env as Record<string, unknown>),
  };
}
