import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { isErrno } from "../util/fs.js";
import { LAUNCHD_MARKER, launchAgentsDir, OUR_PLIST_NAME, readOurPlist } from "./launchd.js";
import { isOurUnit, OUR_UNIT_NAME, readOurService, userUnitDir } from "./systemd.js";
import { everyOfArgs, type TmuxVar, targetOfArgs } from "./target.js";

export type Scheduler = "launchd" | "systemd";

/** One timer/agent sheepdog installed, as found on disk (files recognised by name + marker). */
export interface Installed {
  scheduler: Scheduler;
  /** The launchd label or the systemd unit base name (`sheepdog-demo`). */
  name: string;
  /** Every file of it (plist; or service and timer). */
  files: string[];
  /** What its tick targets: `--all`, or `--program ROOT`; null when its command is unreadable. */
  target: { kind: "all" } | { kind: "program"; root: string } | null;
  /** The command it runs (node, CLI, tick args) and the PATH it runs with. */
  args: string[];
  /** The `tick --every` it passes (ms); undefined for units written before `--every`. */
  every: number | undefined;
  path: string | undefined;
  sheepdogHome: string | undefined;
  /** `SHEEPDOG_STATE_DIR` it runs with; undefined means the default (under its HOME). */
  stateDir: string | undefined;
  /** The tmux variables it runs with (`SHEEPDOG_TMUX_SOCKET`, `TMUX_TMPDIR`): its managers' server. */
  tmux: Partial<Record<TmuxVar, string>>;
}

function listDir(dir: string): string[] {
  try {
    return readdirSync(dir).sort();
  } catch (err) {
    if (isErrno(err, "ENOENT") || isErrno(err, "ENOTDIR")) return [];
    throw err;
  }
}

function readText(path: string): string | null {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return null;
  }
}

export function installedLaunchd(home: string): Installed[] {
  const dir = launchAgentsDir(home);
  const found: Installed[] = [];
  for (const file of listDir(dir)) {
    if (!OUR_PLIST_NAME.test(file)) continue;
    const path = join(dir, file);
    const text = readText(path);
    if (!text?.includes(LAUNCHD_MARKER)) continue;
    const agent = readOurPlist(text);
    // the label must match the file name too, as launchd expects and as install writes it
    if (!agent || `${agent.label}.plist` !== file) continue;
    found.push({
      scheduler: "launchd",
      name: agent.label,
      files: [path],
      target: targetOfArgs(agent.args),
      every: everyOfArgs(agent.args),
      args: agent.args,
      path: agent.path,
      sheepdogHome: agent.sheepdogHome,
      stateDir: agent.stateDir,
      tmux: agent.tmux,
    });
  }
  return found;
}

export function installedSystemd(home: string, env = process.env): Installed[] {
  const dir = userUnitDir(home, env);
  const files = listDir(dir).filter((f) => OUR_UNIT_NAME.test(f));
  const bases = [...new Set(files.map((f) => f.replace(/\.(service|timer)$/, "")))];
  const found: Installed[] = [];
  for (const base of bases) {
    const ours = [`${base}.service`, `${base}.timer`]
      .map((f) => join(dir, f))
      .filter((p) => {
        const text = readText(p);
        return text !== null && isOurUnit(text);
      });
    if (!ours.length) continue;
    const serviceText = readText(join(dir, `${base}.service`));
    const service = serviceText ? readOurService(serviceText) : null;
    found.push({
      scheduler: "systemd",
      name: base,
      files: ours,
      target: service ? targetOfArgs(service.args) : null,
      every: service ? everyOfArgs(service.args) : undefined,
      args: service?.args ?? [],
      path: service?.path,
      sheepdogHome: service?.sheepdogHome,
      stateDir: service?.stateDir,
      tmux: service?.tmux ?? {},
    });
  }
  return found;
}

export function installedOf(scheduler: Scheduler, home: string, env = process.env): Installed[] {
  return scheduler === "launchd" ? installedLaunchd(home) : installedSystemd(home, env);
}
