import { readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import * as z from "zod/mini";
import { livenessOf } from "../process/identity.js";
import { hostDir } from "../usage/host-state.js";
import { readJsonFile } from "../util/json-file.js";
import { orElse } from "../util/lenient.js";

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

/** The watchers' folder, checked like every host state folder (DESIGN §18). */
export function watchersDir(env: NodeJS.ProcessEnv = process.env): string {
  return hostDir(WATCHERS_DIR, env);
}

const orNull = orElse(z.nullable(z.string()), null);

/** One program a watcher watches: without its root it matches no program and is dropped. */
const watchedSchema = z.object({
  program: orElse(z.string(), ""),
  root: z.string(),
  last_pass_at: orNull,
  decision: orNull,
});

/**
 * A `watchers/<pid>.json` file. Without a pid and a list of programs it is no record; every
 * other field is dropped on its own when malformed: an identity field that is not a string
 * reads as "" (so the watcher is not alive: a missing start time as a reused pid, a missing
 * machine id as another host's), a stop or pass time as null, the pass count as 0, and a
 * program entry that is not one is left out of the list. Unknown keys are dropped.
 */
const recordSchema = z.object({
  pid: z.number(),
  start_time: orElse(z.string(), ""),
  machine_id: orElse(z.string(), ""),
  started_at: orElse(z.string(), ""),
  stopped_at: orNull,
  last_pass_at: orNull,
  passes: orElse(z.number(), 0),
  programs: z.pipe(
    z.array(z.unknown()),
    z.transform((entries) =>
      entries.flatMap((e) => {
        const parsed = watchedSchema.safeParse(e);
        return parsed.success ? [parsed.data] : [];
      }),
    ),
  ),
});

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
    // a torn or foreign file: not a record
    const record = readJsonFile(join(dir, name), recordSchema);
    if (record) out.push(record);
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
