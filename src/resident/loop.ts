import { join } from "node:path";
import { identityOf } from "../process/identity.js";
import { ensureHostDir } from "../usage/host-state.js";
import { faultPoint } from "../util/fault-point.js";
import { writeJsonAtomic } from "../util/fs.js";
import { iso } from "../util/time.js";
import {
  type Libraries,
  type PassOutcome,
  type PassRunner,
  ProgramWatch,
} from "./program-watch.js";
import {
  pruneWatcherRecords,
  WATCHERS_DIR,
  type WatcherRecord,
  watchersDir,
} from "./status-file.js";

export interface WatcherOptions {
  /** The program roots to watch; asked again every second when `rescan` is set (`--all`). */
  roots: () => string[];
  rescan: boolean;
  runPass: PassRunner;
  onPass(outcome: PassOutcome): void;
  /** A program whose config cannot be loaded (said once per distinct problem). */
  onProblem(root: string, problem: string): void;
  onAdded(root: string): void;
  onRemoved(root: string): void;
}

/** The death poll's period (DESIGN §12: every second). */
const POLL_MS = 1000;

/**
 * The resident loop (DESIGN §12): chokidar drives the file events, and one timer a second runs,
 * for every program together, the death poll, the full pass due on each `watchdog.interval`
 * slot, and the `--all` rescan. (node-cron was dropped: a second scheduler beside this timer,
 * and a per-second job of it cost 0.35 % of a core while idle in its timezone formatting.)
 */
export class Watcher {
  readonly programs = new Map<string, ProgramWatch>();
  private libs: Libraries | null = null;
  private poll: NodeJS.Timeout | null = null;
  private syncing = false;
  private stopping = false;
  private dirty = true;
  private problems = new Map<string, string>();
  private readonly record: WatcherRecord;
  private readonly recordPath: string;

  constructor(private readonly opts: WatcherOptions) {
    const me = identityOf(process.pid);
    if (!me) throw new Error("cannot read this process's own identity");
    this.record = {
      ...me,
      started_at: iso(),
      stopped_at: null,
      last_pass_at: null,
      passes: 0,
      programs: [],
    };
    this.recordPath = join(watchersDir(), `${process.pid}.json`);
  }

  async start(): Promise<void> {
    this.libs = { chokidar: await import("chokidar") };
    await this.sync();
    try {
      pruneWatcherRecords(process.pid);
    } catch {
      // an unreadable folder: doctor reads what it can
    }
    this.writeRecord();
    this.poll = setInterval(() => this.second(), POLL_MS);
  }

  /** Adds programs that appeared and drops ones that went (their pass in progress finishes). */
  private async sync(): Promise<void> {
    if (this.syncing || this.stopping || !this.libs) return;
    this.syncing = true;
    try {
      const roots = new Set(this.opts.roots());
      for (const [root, watch] of this.programs)
        if (!roots.has(root)) {
          this.programs.delete(root);
          this.dirty = true;
          this.opts.onRemoved(root);
          await watch.close();
        }
      for (const root of roots)
        if (!this.programs.has(root) && !this.stopping) {
          const watch = new ProgramWatch(root, this.opts.runPass, (o, p) =>
            this.passed(root, o, p),
          );
          this.programs.set(root, watch);
          this.dirty = true;
          this.opts.onAdded(root);
          await watch.start(this.libs);
        }
    } finally {
      this.syncing = false;
    }
  }

  private passed(root: string, outcome: PassOutcome | null, problem: string | null): void {
    if (problem !== null) {
      if (this.problems.get(root) !== problem) this.opts.onProblem(root, problem);
      this.problems.set(root, problem);
      return;
    }
    this.problems.delete(root);
    if (!outcome) return;
    this.record.passes++;
    this.record.last_pass_at = iso(outcome.at);
    this.dirty = true;
    this.opts.onPass(outcome);
    faultPoint("watch.after-pass");
  }

  private second(): void {
    if (this.stopping) return;
    if (this.opts.rescan) void this.sync();
    const now = Date.now();
    for (const watch of this.programs.values()) watch.poll(now);
    if (this.dirty) this.writeRecord();
  }

  /** `<state>/watchers/<pid>.json`, temp-then-rename: what `doctor` reads. */
  private writeRecord(): void {
    this.dirty = false;
    this.record.programs = [...this.programs.values()].map((w) => ({
      program: w.name,
      root: w.root,
      last_pass_at: w.last ? iso(w.last.at) : null,
      decision: w.last?.report.decision ?? null,
    }));
    try {
      ensureHostDir(WATCHERS_DIR);
      writeJsonAtomic(this.recordPath, this.record);
    } catch {
      // doctor then says no watcher runs; the watching itself goes on
    }
  }

  /** No new pass starts; resolves when every pass in progress has finished. */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.poll) clearInterval(this.poll);
    await Promise.all([...this.programs.values()].map((w) => w.close()));
    this.record.stopped_at = iso();
    this.writeRecord();
  }

  /** For a watcher that is going away without finishing: its record says it stopped. */
  abandonRecord(): void {
    this.record.stopped_at = iso();
    this.writeRecord();
  }
}
