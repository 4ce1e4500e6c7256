import { readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { livenessOf } from "../process/identity.js";
import { hostStateDir } from "../usage/host-state.js";

/** Where each watcher says it runs and when it last passed: `<state>/watchers/<pid>.json`. */
export const WATCHERS_DIR = "watchers";

export interface WatcherRecord {
  pid: number;
  start_time: string;
  machine_id: string;
  started_at: string;
  /** Set when it ended cleanly; a record without it whose pid is gone died. */
  stopped_at: string | null;
  last_pass_at: string | null;
  passes: number;
  programs: {
    program: string;
    root: string;
    last_pass_at: string | null;
    decision: string | null;
  }[];
}

export function watchersDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(hostStateDir(env), WATCHERS_DIR);
}

/** Every watcher record on this host (unreadable ones skipped: they are being replaced). */
export function readWatcherRecords(env: NodeJS.ProcessEnv = process.env): WatcherRecord[] {
  const dir = watchersDir(env);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const out: WatcherRecord[] = [];
  for (const name of names.filter((n) => /^\d+\.json$/.test(n)).sort()) {
    try {
      const r = JSON.parse(readFileSync(join(dir, name), "utf8")) as WatcherRecord;
      if (typeof r.pid === "number" && Array.isArray(r.programs)) out.push(r);
    } catch {
      // a torn or foreign file: not a record
    }
  }
  return out;
}

/**
 * Removes the records of watchers that are over (stopped, dead, or their pid reused), but this
 * one's. Called by a starting watcher: without it every restart (a crash under systemd's
 * Restart=, each reboot) left a file behind for good. The newest gone watcher's record is the
 * only one doctor reads, and only while no watcher runs; this watcher's own is kept when it dies.
 */
export function pruneWatcherRecords(selfPid: number, env: NodeJS.ProcessEnv = process.env): number {
  let removed = 0;
  for (const r of readWatcherRecords(env)) {
    if (r.pid === selfPid) continue;
    const over = r.stopped_at !== null || ["dead", "reused"].includes(livenessOf(r));
    if (!over) continue;
    rmSync(join(watchersDir(env), `${r.pid}.json`), { force: true });
    removed++;
  }
  return removed;
}
