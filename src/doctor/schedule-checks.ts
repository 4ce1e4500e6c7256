// Doctor's checks of the scheduler: a unit that runs this program's tick, and a recent tick.
import { readFileSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import type { Program } from "../config/load.js";
import { activityWarnings, leaseTtlNeeded, policyWarnings } from "../config/warnings.js";
import type { Installed, Scheduler } from "../install/installed.js";
import { ALL_INTERVAL_MS, TMUX_VARS, tmuxEnvOf } from "../install/target.js";
import { stateDirOf, stateFiles } from "../state/dir.js";
import { defaultHostStateDir, hostStateDir } from "../usage/host-state.js";
import { formatDuration } from "../util/duration.js";
import { parseIso } from "../util/time.js";

import { bad, type Check, nativeScheduler, ok } from "./check.js";

export function coveringUnits(root: string, installed: Installed[], home: string): Installed[] {
  return installed.filter((i) => {
    if (!i.target) return false;
    if (i.target.kind === "program") return resolve(i.target.root) === root;
    const home_ = i.sheepdogHome ?? join(home, "loops");
    return resolve(home_) === dirname(root);
  });
}

export function installHint(scheduler: Scheduler, root: string): string {
  return `sheepdog install ${scheduler} --program ${root}`;
}

const describe = (i: Installed) =>
  `${i.scheduler} ${i.scheduler === "systemd" ? `${i.name}.timer` : i.name}`;

/**
 * A tmux program: the timer's tick must talk to the tmux server this shell does (issue 33), or
 * the managers it starts are where `tmux attach` from here does not look (and a person's
 * `tmux ls` shows none). Null for other launchers, or when nothing ticks it.
 */
export function tmuxCheck(program: Program, covering: Installed[]): Check | null {
  if (program.config.manager.launcher !== "tmux" || covering.length === 0) return null;
  const here = tmuxEnvOf();
  const show = (v: string | undefined) => v ?? "unset";
  for (const i of covering)
    for (const v of TMUX_VARS)
      if ((i.tmux[v] ?? undefined) !== (here[v] ?? undefined))
        return bad(
          program.name,
          "tmux",
          "warn",
          `${describe(i)} runs with ${v}=${show(i.tmux[v])}, but this shell has ${show(here[v])}: its tick starts managers on another tmux server than the one tmux attach reaches from here`,
          `reinstall it from the shell whose tmux you use: sheepdog install ${i.scheduler} ${i.target?.kind === "all" ? "--all" : `--program ${program.root}`}`,
        );
  const socket = here.SHEEPDOG_TMUX_SOCKET;
  return ok(
    program.name,
    "tmux",
    `the timer's tick and this shell use the same tmux server (${socket ? `tmux -L ${socket}` : "tmux's default"})`,
  );
}

export function timerCheck(program: Program, covering: Installed[], inert: Installed[]): Check {
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

/** An `--all` unit from before `tick --every` ticks at `install --all`'s default interval. */
const ALL_DEFAULT_CADENCE = ALL_INTERVAL_MS;

/** The unit that ticks this program least often, and how often that is. */
function slowestUnit(
  program: Program,
  covering: Installed[],
): { unit: Installed; ms: number } | undefined {
  return covering
    .map((unit) => ({
      unit,
      ms:
        unit.every ?? (unit.target?.kind === "all" ? ALL_DEFAULT_CADENCE : program.policy.interval),
    }))
    .sort((a, b) => b.ms - a.ms)[0];
}

/**
 * The cadence rule (DESIGN §6): a program ticked less often than its interval is judged late
 * (a death is seen up to a cadence late), and a stale_after under two cadences can stop a
 * working manager after one late tick.
 */
export function cadenceCheck(program: Program, covering: Installed[]): Check {
  const slowest = slowestUnit(program, covering);
  const cadence = slowest?.ms ?? program.policy.interval;
  const interval = program.policy.interval;
  const reinstall = slowest
    ? `sheepdog install ${slowest.unit.scheduler} --program ${program.root} --interval ${formatDuration(interval)}`
    : null;
  // A lease renewed less often than its ttl allows (DESIGN §15: ttl ≥ 2 × margin + the cadence)
  // can be taken over while its holder's manager still runs: not a late tick, two managers.
  const lease = program.policy.lease;
  if (slowest && lease) {
    const least = leaseTtlNeeded(lease, cadence);
    if (least !== null)
      return bad(
        program.name,
        "cadence",
        "fail",
        `${describe(slowest.unit)} ticks every ${formatDuration(cadence)}, too seldom for lease.ttl ${program.config.lease?.ttl}: another host may take the lease over before this one renews it (it needs ttl ≥ 2 × margin + the cadence, ${formatDuration(least)})`,
        `${reinstall} (or raise lease.ttl to ${formatDuration(least)} on every host)`,
      );
  }
  if (slowest && interval < cadence)
    return bad(
      program.name,
      "cadence",
      "warn",
      `${describe(slowest.unit)} ticks every ${formatDuration(cadence)}, but watchdog.interval is ${formatDuration(interval)}: deaths and limits are seen up to ${formatDuration(cadence)} late`,
      `${reinstall} (or set watchdog.interval to ${formatDuration(cadence)})`,
    );
  const [warning] = policyWarnings(program.policy, cadence);
  if (warning)
    return bad(
      program.name,
      "cadence",
      "warn",
      warning,
      `raise watchdog.stale_after in ${program.configPath} to at least ${formatDuration(2 * cadence)}`,
    );
  return ok(
    program.name,
    "cadence",
    slowest
      ? `ticked every ${formatDuration(cadence)}; watchdog.interval ${formatDuration(interval)}`
      : `watchdog.interval ${formatDuration(interval)} (no timer yet)`,
  );
}

export function lastTickCheck(program: Program, covering: Installed[]): Check {
  const path = join(stateDirOf(program.root), stateFiles.lastTick);
  const interval = Math.max(program.policy.interval, slowestUnit(program, covering)?.ms ?? 0);
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
      `${said}, more than twice the cadence (${formatDuration(interval)})`,
      hint,
    );
  return ok(program.name, "last_tick", said);
}

/** The argv[0]s a program's manager launcher needs, with whether each is required. */

/** Whether the activity rules (DESIGN §14) get their window before rule 9. */
export function activityCheck(program: Program): Check {
  const { quietAfter, nudgeWait, staleAfter } = program.policy;
  const [warning] = activityWarnings(program.policy);
  if (warning)
    return bad(
      program.name,
      "activity",
      "warn",
      warning,
      `in ${program.configPath}, set watchdog.quiet_after + nudge_wait under stale_after (defaults: 10m + 3m under 45m)`,
    );
  return ok(
    program.name,
    "activity",
    `a quiet manager is judged after ${formatDuration(quietAfter)}, an idle one restarted ${formatDuration(nudgeWait)} after its nudge, all before stale_after ${formatDuration(staleAfter)}`,
  );
}
