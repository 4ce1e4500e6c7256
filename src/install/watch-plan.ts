import { readFileSync } from "node:fs";
import { join } from "node:path";
import { RefusedError } from "../errors.js";
import type { Plan } from "./install.js";
import type { Scheduler } from "./installed.js";
import { launchAgentsDir, launchdLogDir } from "./launchd.js";
import type { Step } from "./plan.js";
import { userUnitDir } from "./systemd.js";
import {
  cliPath,
  homeDir,
  sameTarget,
  sheepdogHomeEnv,
  sheepdogStateDirEnv,
  type Target,
  tmuxEnvOf,
  unitPath,
} from "./target.js";
import {
  installedWatchers,
  LAUNCHD_WATCH_MARKER,
  renderWatchAgent,
  renderWatchService,
  watcherRemovalSteps,
  watchLabelOf,
  watchUnitName,
} from "./watch-units.js";

const uid = () => process.getuid?.() ?? 0;

function refuseForeign(path: string, marker: string): void {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    return;
  }
  if (!text.includes(marker))
    throw new RefusedError(
      `${path} exists and was not written by sheepdog (no sheepdog-managed marker); not overwriting it`,
    );
}

/** `install --watch`: the timer's plan, then the watcher's unit written and (re)started. */
export function withWatcher(
  scheduler: Scheduler,
  target: Target,
  plan: Plan,
  env = process.env,
): Plan {
  const home = homeDir(env);
  const sheepdogHome = sheepdogHomeEnv(env);
  const stateDir = sheepdogStateDirEnv(env);
  const opts = {
    target,
    node: process.execPath,
    cli: cliPath(),
    path: unitPath({ homebrew: scheduler === "launchd", env }),
    ...(sheepdogHome ? { sheepdogHome } : {}),
    ...(stateDir ? { stateDir } : {}),
    tmux: tmuxEnvOf(env),
  };
  const steps: Step[] = [];
  let summary: string;
  if (scheduler === "systemd") {
    const name = watchUnitName(target);
    const path = join(userUnitDir(home, env), name);
    refuseForeign(path, "sheepdog-managed");
    steps.push(
      { op: "write", path, content: renderWatchService(opts) },
      { op: "run", argv: ["systemctl", "--user", "daemon-reload"] },
      { op: "run", argv: ["systemctl", "--user", "enable", name] },
      // restart, not start: a reinstall must run the watcher the new unit describes
      { op: "run", argv: ["systemctl", "--user", "restart", name] },
    );
    summary = `installed systemd watcher ${name} (Restart=always) beside the timer; logs: journalctl --user -u ${name}`;
  } else {
    const label = watchLabelOf(target);
    const path = join(launchAgentsDir(home), `${label}.plist`);
    refuseForeign(path, LAUNCHD_WATCH_MARKER);
    steps.push(
      { op: "write", path, content: renderWatchAgent({ ...opts, home }) },
      {
        op: "run",
        argv: ["launchctl", "bootout", `gui/${uid()}/${label}`],
        harmless: (r) => (r.status !== 0 ? "it was not loaded" : null),
      },
      { op: "run", argv: ["launchctl", "bootstrap", `gui/${uid()}`, path] },
    );
    summary = `installed launchd watcher ${label} (KeepAlive) beside the timer; logs in ${launchdLogDir(home)}`;
  }
  return { ...plan, steps: [...plan.steps, ...steps], summary: `${plan.summary}\n${summary}` };
}

/** `uninstall`: the watchers of the same target go with the timer. */
export function withoutWatchers(
  scheduler: Scheduler,
  target: { kind: "all" } | { kind: "program"; root: string },
  plan: Plan,
  env = process.env,
): Plan & { watchers: string[] } {
  const found = installedWatchers(scheduler, homeDir(env), env).filter(
    (w) => w.target && sameTarget(w.target, target),
  );
  if (!found.length) return { ...plan, watchers: [] };
  const steps = [...watcherRemovalSteps(found, uid()), ...plan.steps];
  const reload = steps.some((s) => s.op === "run" && s.argv.includes("daemon-reload"));
  if (scheduler === "systemd" && !reload)
    steps.push({ op: "run", argv: ["systemctl", "--user", "daemon-reload"] });
  const names = found.map((w) => w.name).join(", ");
  const timerGone = !/^nothing/.test(plan.summary);
  return {
    ...plan,
    steps,
    watchers: found.map((w) => w.name),
    summary: timerGone
      ? `${plan.summary}; removed watcher ${names}`
      : `uninstalled watcher ${names}`,
  };
}
