import { relative } from "node:path";
import type { FSWatcher } from "chokidar";
import { openProgramAt, type ProgramContext } from "../config/context.js";
import { CONFIG_SETTLE_MS, sightPending } from "../config/last-valid.js";
import { livenessOf, machineId } from "../process/identity.js";
import { ControlFeed } from "../remote/stream.js";
import type { Facts } from "../watchdog/gather/facts.js";
import { CLAIM_NOT_BROKEN } from "../watchdog/pass/lock-busy.js";
import type { ProgramReport } from "../watchdog/pass/tick.js";
import { spellEvent } from "../watchdog/rules/activity-rule.js";
import type { DecidePolicy } from "../watchdog/rules/decide.js";
import { heartbeatAge, pauseGraceEnd } from "../watchdog/rules/gaps.js";
import { PassQueue } from "./queue.js";
import { type JournalMark, journalChange, relevantPath } from "./relevance.js";

export interface Libraries {
  chokidar: typeof import("chokidar");
}

/** File events within this long of each other run one pass (DESIGN §12: ~200 ms). */
export const DEBOUNCE_MS = 200;
/** After a pass that started a manager: the next pass, as soon as a file event's would come. */
const START_LOOK_MS = DEBOUNCE_MS;
/** After a `locked` pass (a timer tick is acting) or a busy claim break, look again this soon. */
const LOCKED_RETRY_MS = 1000;

type Identity = { pid: number; start_time: string; machine_id: string };

/** What one pass produced, for the watcher's log and its status file. */
export interface PassOutcome {
  root: string;
  trigger: string;
  at: number;
  report: ProgramReport;
}

export type PassRunner = (program: ProgramContext, trigger: string) => Promise<ProgramReport>;

/**
 * One watched program: its file watcher, its death poll, its schedule and its pass queue.
 * It only asks for passes; the pass itself is the tick's (`PassRunner`).
 */
export class ProgramWatch {
  private program: ProgramContext | null = null;
  private configProblem: string | null = null;
  private watcher: FSWatcher | null = null;
  private debounce: NodeJS.Timeout | null = null;
  private pathsChanged = false;
  private configChanged = false;
  private journalSeen = false;
  private mark: JournalMark | null = null;
  /** The live processes the last pass saw (holder, or a start not yet claimed). */
  private watched: Identity[] = [];
  /**
   * The next slot of the program's interval (on the clock's multiples, as the timer's
   * OnCalendar is): the once-a-second poll runs the scheduled pass when it comes. One
   * scheduler for every interval, 90s and 7m included.
   */
  private nextScheduled = 0;
  private scheduledFor: number | null = null;
  /** An earlier wake-up a pass asked for (a pause's end, a `locked` retry). */
  private wakeAt: number | null = null;
  private polls = 0;
  readonly queue: PassQueue;
  last: PassOutcome | null = null;
  /** The control topic's stream (DESIGN §8): a command read there runs a pass at once. */
  private readonly control: ControlFeed;

  constructor(
    readonly root: string,
    private readonly run: PassRunner,
    private readonly done: (outcome: PassOutcome | null, problem: string | null) => void,
  ) {
    this.queue = new PassQueue((why) => this.pass(why));
    this.control = new ControlFeed(root, () =>
      this.queue.request("a command on the control topic"),
    );
  }

  get name(): string {
    return this.program?.name ?? this.root.split("/").pop() ?? this.root;
  }

  /** Loads the config, starts watching files and runs the first pass. */
  async start(libs: Libraries): Promise<void> {
    const { chokidar } = libs;
    this.load();
    this.mark = journalChange(this.stateDir(), null).mark;
    this.watcher = chokidar.watch(this.root, {
      ignoreInitial: true,
      depth: 2,
      // Prune everything but program.json and .sheepdog/: a program's own folders can be big.
      ignored: (path) => {
        const rel = relative(this.root, path);
        if (rel === "") return false;
        if (rel === ".sheepdog" || rel === "program.json") return false;
        return !rel.startsWith(".sheepdog/") || !relevantPath(rel);
      },
    });
    this.watcher.on("all", (_event, path) => this.onFile(relative(this.root, path)));
    this.watcher.on("error", () => this.queue.request("file watcher error"));
    await new Promise<void>((resolve) => this.watcher?.once("ready", () => resolve()));
    this.queue.request("watch started");
  }

  private stateDir(): string {
    return `${this.root}/.sheepdog`;
  }

  private load(): void {
    try {
      this.program = openProgramAt(this.root, { create: true, lastValid: true });
      this.configProblem = null;
      this.control.follow(this.program);
    } catch (err) {
      this.program = null;
      this.configProblem = (err as Error).message;
    }
    this.schedule();
  }

  /** A changed interval takes effect from its next slot. */
  private schedule(): void {
    const interval = this.program?.policy.interval ?? null;
    if (interval === this.scheduledFor) return;
    this.scheduledFor = interval;
    if (interval && this.nextScheduled !== 0) this.nextScheduled = nextSlot(Date.now(), interval);
  }

  private onFile(rel: string): void {
    if (!relevantPath(rel)) return;
    if (rel === "program.json") this.configChanged = true;
    else if (rel === ".sheepdog/journal.jsonl") this.journalSeen = true;
    else this.pathsChanged = true;
    // Fires DEBOUNCE_MS after the first event of a burst, not after the last: a manager that
    // saves often must not hold a pass back.
    this.debounce ??= setTimeout(() => this.settle(), DEBOUNCE_MS);
  }

  /** A burst of file events is over: run a pass if anything in it can matter. */
  private settle(): void {
    this.debounce = null;
    let why: string | null = null;
    if (this.configChanged) {
      this.load();
      why = "program.json changed";
    } else if (this.pathsChanged) why = "claim or heartbeat changed";
    if (this.journalSeen) {
      const seen = journalChange(this.stateDir(), this.mark);
      this.mark = seen.mark;
      if (seen.relevant) why ??= "journal appended";
    }
    this.configChanged = this.pathsChanged = this.journalSeen = false;
    if (why) this.queue.request(why);
  }

  /** Called every second: a watched process that died, a schedule or wake-up that is due. */
  poll(now: number): void {
    if (this.queue.busy) return;
    this.polls++;
    for (const id of this.watched)
      if (!stillAlive(id, this.polls % FULL_CHECK_EVERY === 0)) {
        this.watched = [];
        this.queue.request(`pid ${id.pid} is gone`);
        return;
      }
    if (this.wakeAt !== null && now >= this.wakeAt) {
      this.wakeAt = null;
      this.queue.request("a wait ended");
      return;
    }
    const interval = this.program?.policy.interval;
    if (interval && now >= this.nextScheduled) this.queue.request("schedule");
  }

  private async pass(trigger: string): Promise<void> {
    // A broken program.json is read again at every pass: the second read, 2 s on, is what
    // makes it "invalid" (DESIGN §18), or finds it fixed.
    if (!this.program || this.program.configInvalid) this.load();
    const program = this.program;
    const at = Date.now();
    if (program) this.nextScheduled = nextSlot(at, program.policy.interval);
    if (!program) {
      this.done(null, this.configProblem);
      return;
    }
    const report = await this.run(program, trigger);
    this.watched = watchedOf(report.facts, report.decision);
    this.wakeAt = wakeOf(report, Date.now(), program.policy);
    if (program.configInvalid && sightPending(program.stateDir, program.configInvalid)) {
      // read it again once it has had CONFIG_SETTLE_MS to settle
      const again = at + CONFIG_SETTLE_MS;
      this.wakeAt = this.wakeAt === null ? again : Math.min(this.wakeAt, again);
    }
    this.last = { root: this.root, trigger, at, report };
    this.done(this.last, null);
  }

  /** Stops watching; resolves when a pass in progress has finished. */
  async close(): Promise<void> {
    if (this.debounce) clearTimeout(this.debounce);
    this.debounce = null;
    await this.watcher?.close();
    await this.control.close();
    await this.queue.close();
  }
}

/** On macOS an exact check spawns `ps`: every poll there is a signal 0, every 5th one exact. */
const FULL_CHECK_EVERY = 5;

/**
 * Whether a watched process still runs. On Linux always the exact check (pid + start time,
 * zombies dead: two reads of /proc). On macOS `kill -0` between exact checks: a pid that is
 * gone is seen at once; a reused pid or a zombie within five seconds.
 */
function stillAlive(id: Identity, full: boolean): boolean {
  if (process.platform !== "darwin" || full) return livenessOf(id) === "alive";
  try {
    process.kill(id.pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** The next slot of a schedule every `interval` ms, on the clock's multiples (as OnCalendar is). */
export function nextSlot(now: number, interval: number): number {
  return (Math.floor(now / interval) + 1) * interval;
}

/** The processes whose death must run a pass at once: the live holder, or a start not claimed yet. */
export function watchedOf(facts: Facts | null, decision: string): Identity[] {
  if (!facts) return [];
  const out: Identity[] = [];
  const c = facts.claim;
  if (c.state === "alive")
    out.push({ pid: c.pid, start_time: c.start_time, machine_id: c.machine_id });
  const start = facts.history.last_start;
  // A start is this machine's own (the watchdog starts managers only here).
  if (decision === "starting" && start?.pid !== undefined && start.start_time)
    out.push({ pid: start.pid, start_time: start.start_time, machine_id: machineId() });
  return out;
}

/**
 * When a pass should run again without any event: a pause's end, soon after `locked`, and for
 * a live holder the moments its rules come due (DESIGN §14): its heartbeat reaching
 * `quiet_after` (the activity is read) and `stale_after` (rule 9), and a nudge's `nudge_wait`
 * ending, so an idle manager is replaced within quiet_after + nudge_wait, not a slot later.
 */
export function wakeOf(
  report: ProgramReport,
  now: number,
  policy?: Pick<DecidePolicy, "cadence" | "quietAfter" | "staleAfter" | "nudgeWait" | "claimGrace">,
): number | null {
  // A lock was busy (the tick lock, or the mutex a claim break takes): the pass did not act.
  if (report.decision === "locked" || report.actions.some((a) => a.startsWith(CLAIM_NOT_BROKEN)))
    return now + LOCKED_RETRY_MS;
  // A pass that started a manager looks again at once: the next one watches the start's pid
  // (`starting`), or finds it dead already (a start that dies at once, DESIGN §16). The start's
  // own journal lines no longer wake a pass (a pass's own events never do).
  if (report.effects?.includes("start") && report.actions.some((a) => a.startsWith("started ")))
    return now + START_LOOK_MS;
  const f = report.facts;
  const until =
    report.decision === "wait_pause" ? f?.paused?.until : f?.seat.limited ? f.seat.until : null;
  const due = [until ? Date.parse(until) : Number.NaN];
  // Inside a pause the age stands still (the pause is credited): its moments would come no
  // nearer, pass after pass. The pause's end wakes it, and then the grace after it.
  const pausing = f?.paused != null || f?.seat.limited === true;
  if (f && policy && f.claim.state === "alive" && !pausing) {
    const hb = heartbeatAge(f, policy);
    if (hb)
      for (const after of [policy.quietAfter, policy.staleAfter]) due.push(now + after - hb.age);
    const grace = pauseGraceEnd(f, policy);
    if (grace) due.push(grace.graceEnds);
    // A nudge this pass sent (act journaled it after gather), or one sent earlier this spell.
    if (report.decision === "nudge") due.push(now + policy.nudgeWait);
    const nudged = spellEvent(f, f.claim, "nudged");
    if (nudged) due.push(Date.parse(nudged.at) + policy.nudgeWait);
  }
  const next = Math.min(...due.filter((t) => Number.isFinite(t) && t > now));
  return Number.isFinite(next) ? next : null;
}
