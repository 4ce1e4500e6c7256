import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
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
