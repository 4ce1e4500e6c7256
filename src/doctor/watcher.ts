import type { Program } from "../config/load.js";
import type { Scheduler } from "../install/installed.js";
import { homeDir } from "../install/target.js";
import { installedWatchers } from "../install/watch-units.js";
import { livenessOf } from "../process/identity.js";
import { readWatcherRecords, type WatcherRecord } from "../resident/status-file.js";
import { formatDuration } from "../util/duration.js";
import { parseIso } from "../util/time.js";
import type { Check } from "./check.js";

const check = (
  program: Program,
  status: Check["status"],
  detail: string,
  fix: string | null = null,
): Check => ({
  program: program.name,
  check: "watcher",
  status,
  detail,
  fix,
});

function ago(at: string | null): string {
  const t = parseIso(at);
  return Number.isNaN(t) ? "never" : `${formatDuration(Math.max(0, Date.now() - t))} ago`;
}

/**
 * Whether a watcher (`sheepdog watch`) covers this program and when it last passed it, from
 * the watchers' own records (`<state>/watchers/<pid>.json`) and the installed watcher units.
 * A watcher is optional: none at all is fine; one installed but not running, one that died,
 * or one that stopped passing is a warning.
 */
export function watcherCheck(program: Program, scheduler: Scheduler): Check {
  const mine = (r: WatcherRecord) => r.programs.find((p) => p.root === program.root);
  const records = readWatcherRecords().filter((r) => mine(r));
  const live = records.filter((r) => r.stopped_at === null && livenessOf(r) === "alive");
  const units = installedWatchers(scheduler, homeDir()).filter(
    (w) => w.target && (w.target.kind === "all" || w.target.root === program.root),
  );
  const run = `sheepdog watch --program ${program.root}`;
  if (live.length) {
    const r = live[0] as WatcherRecord;
    const last = mine(r)?.last_pass_at ?? null;
    const said = `watched by pid ${r.pid} since ${r.started_at}; last pass ${ago(last)}${mine(r)?.decision ? ` (${mine(r)?.decision})` : ""}`;
    // a watcher that has not passed yet is judged from its start
    const age = Date.now() - parseIso(last ?? r.started_at);
    if (!(age <= 2 * program.policy.interval))
      return check(
        program,
        "warn",
        `${said}: more than twice the interval without a pass`,
        `restart the watcher (pid ${r.pid})`,
      );
    return check(program, "ok", `${said}${live.length > 1 ? ` (${live.length} watchers)` : ""}`);
  }
  const gone = records.filter((r) => r.stopped_at === null).at(-1);
  const died = gone
    ? `; watcher pid ${gone.pid} died without stopping (last pass ${ago(gone.last_pass_at)})`
    : "";
  if (units.length) {
    const u = units[0];
    const fix =
      u?.scheduler === "systemd"
        ? `see: systemctl --user status ${u.name}; journalctl --user -u ${u.name}`
        : `see: launchctl print gui/${process.getuid?.() ?? 0}/${u?.name}`;
    return check(program, "warn", `watcher ${u?.name} is installed but not running${died}`, fix);
  }
  if (gone) return check(program, "warn", died.slice(2), `run it again: ${run}`);
  return check(
    program,
    "ok",
    "no watcher (optional): the timer alone replaces a dead manager within one interval",
  );
}
