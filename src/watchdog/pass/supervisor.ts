// The one supervisor of the passes a process runs (tick's, watch's), after OTP's: each pass is a
// child with its own AbortSignal and deadline; what a failure means is said once (its report);
// and the process ends one way, whatever ends it (a signal, an overdue pass): every pass still
// running is journaled `tick_failed` and paged, its locks released when the process is going,
// the output flushed, exit 1. An unsupervised program is never silent (DESIGN §6, §16).
import { basename } from "node:path";
import type { ProgramContext } from "../../config/context.js";
import { passDeadlineMs } from "../../config/load.js";
import { EXIT, SheepdogError } from "../../errors.js";
import { appendEvent, type JournalEvent } from "../../journal/journal.js";
import { UNSAFE_PROGRAM } from "../../state/dir.js";
import { UnsafePath } from "../../state/owned.js";
import { formatDuration } from "../../util/duration.js";
import { envMs } from "../../util/env-ms.js";
import { type ProgramReport, TickFailed } from "./tick.js";
import { BREAK_AFTER_DEADLINE_MS, releaseOwnTickLock } from "./tick-lock.js";

/** A process about to go waits this long for its pages, at most: it is already late. */
export const ABANDON_PAGE_WAIT_MS = 5000;

/** Signals that end a tick or a watcher from outside: a scheduler, a person, a lost terminal. */
export const STOP_SIGNALS = ["SIGTERM", "SIGINT", "SIGHUP"] as const;
export type StopSignal = (typeof STOP_SIGNALS)[number];

/** Why a pass's signal was aborted: its deadline passed, or the process is going. */
export class PassOverdue extends Error {}

/**
 * What an overdue pass means for the process. `give_up` (a tick): that pass alone is journaled
 * and paged at once and acts no more, the others go on, and the run ends within `graceMs`
 * (its lock may be broken a minute past its deadline: this run must be gone by then). `shutdown`
 * (the watcher): the process ends, since a hung watcher must not look alive.
 */
export type OverduePolicy = { kind: "give_up"; graceMs: number } | { kind: "shutdown" };

export interface SupervisorOptions {
  /** `tick` or `watch`: the prefix of what the process says on stderr. */
  command: string;
  overdue: OverduePolicy;
  /** Each pass's deadline; default passDeadlineMs() (config/load.ts), as the tick lock's. */
  deadlineMs?: number;
  /** Called just before the process exits (a watcher's record says it stopped). */
  beforeExit?: () => void;
}

/** How long a run goes on after giving up a pass: half the lock's break-after (tests: shorter). */
export function givenUpGraceMs(env: NodeJS.ProcessEnv = process.env): number {
  return envMs("SHEEPDOG_TICK_GIVEN_UP_GRACE_MS", BREAK_AFTER_DEADLINE_MS / 2, env);
}

/**
 * The report of a pass that failed, or of a program that could not be opened (`name` then
 * unknown: its folder's): said once, for tick and watch alike.
 */
export function failureReport(root: string, err: unknown, name?: string): ProgramReport {
  const failed = err instanceof TickFailed;
  // A folder under $SHEEPDOG_HOME that is not the user's own is skipped, and said so.
  const skipped = err instanceof UnsafePath && err.what === UNSAFE_PROGRAM;
  return {
    program: failed ? err.program.name : (name ?? (basename(root) || root)),
    root,
    decision: failed ? "tick_failed" : skipped ? "skipped" : "error",
    reason: `${skipped ? "skipped: " : ""}${(err as Error)?.message ?? String(err)}`,
    facts: failed ? err.facts : null,
    actions: [],
  };
}

/** The exit code a failure gives a run: a usage error's or a refusal's own, else 1. */
export function exitCodeOf(err: unknown): number {
  return err instanceof SheepdogError ? err.exitCode : EXIT.failed;
}

export class PassSupervisor {
  readonly deadlineMs: number;
  private readonly running = new Map<ProgramContext, AbortController>();
  private ending = false;
  private givenUp = false;

  constructor(private readonly opts: SupervisorOptions) {
    this.deadlineMs = opts.deadlineMs ?? passDeadlineMs();
  }

  /** Whether the process is ending (no further pass starts), or has given a pass up. */
  get stopping(): boolean {
    return this.ending;
  }
  get gaveUp(): boolean {
    return this.givenUp;
  }

  /**
   * Runs one pass under its deadline. `pass` gets the signal it must check between its steps
   * (act's effects, the lease, last-tick.json): aborted at the deadline, it acts no more.
   * Never throws: a failure is its report.
   */
  async run(
    program: ProgramContext,
    pass: (signal: AbortSignal) => Promise<ProgramReport>,
  ): Promise<ProgramReport> {
    const controller = new AbortController();
    this.running.set(program, controller);
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<null>((done) => {
      timer = setTimeout(() => done(null), this.deadlineMs);
    });
    try {
      const running = pass(controller.signal);
      const report = await Promise.race([running, late]);
      if (report) return report;
      running.catch(() => {}); // it ends, if ever, after this run has said why
      return await this.overdue(program, controller);
    } catch (err) {
      return failureReport(program.root, err, program.name);
    } finally {
      clearTimeout(timer);
      if (this.running.get(program) === controller) this.running.delete(program);
    }
  }

  private async overdue(program: ProgramContext, controller: AbortController) {
    const what = this.opts.command === "tick" ? "the tick" : "the pass";
    const message = `${what} passed its deadline (${formatDuration(this.deadlineMs)})`;
    // At once: the pass must not start another effect meanwhile.
    controller.abort(new PassOverdue(`${program.name}: the pass was given up at its deadline`));
    const policy = this.opts.overdue;
    if (policy.kind === "shutdown") {
      await this.shutdown(`${program.name}: ${message}`, { releaseLocks: true });
      return failureReport(program.root, new TickFailed(program, message, null));
    }
    // Journaled here, once: a signal later must not say it again; its lock stays held.
    this.running.delete(program);
    if (!this.givenUp) {
      this.givenUp = true;
      setTimeout(
        () =>
          void this.shutdown(
            `the tick ended early: ${program.name}'s pass, given up at its deadline, was still running ${policy.graceMs / 1000} s later`,
            { releaseLocks: false },
          ),
        policy.graceMs,
      ).unref();
    }
    await abandonPasses([program], message, { releaseLocks: false });
    return failureReport(program.root, new TickFailed(program, message, null));
  }

  /**
   * The one way the process ends before its passes do: says why on stderr, aborts every pass in
   * progress, journals `tick_failed` for each and tries the pages hook (5 s at most), releases
   * their tick locks when asked (the process is about to go, so a later tick must not find them
   * held), flushes its output and exits 1. Asked again meanwhile (a second signal): exits at once.
   */
  async shutdown(why: string, opts: { releaseLocks: boolean }): Promise<never> {
    if (this.ending) process.exit(EXIT.failed);
    this.ending = true;
    process.stderr.write(`sheepdog ${this.opts.command}: ${why}\n`);
    const programs = [...this.running.keys()];
    for (const c of this.running.values()) c.abort(new PassOverdue(why));
    this.running.clear();
    try {
      this.opts.beforeExit?.();
      await abandonPasses(programs, why, { releaseLocks: opts.releaseLocks });
    } catch {
      // the exit code and the log still say it
    }
    return exitFlushed(EXIT.failed);
  }

  /** Calls `handler` on every stop signal, with how many have come so far. */
  onSignals(handler: (signal: StopSignal, count: number) => void): void {
    let count = 0;
    for (const signal of STOP_SIGNALS) process.on(signal, () => handler(signal, ++count));
  }
}

/** Ends the process once stdout and stderr have taken what was written (a pipe is asynchronous). */
export async function exitFlushed(code: number): Promise<never> {
  await Promise.all(
    [process.stdout, process.stderr].map((s) => new Promise<void>((r) => s.write("", () => r()))),
  );
  process.exit(code);
}

/**
 * Journals `tick_failed {error}` for each program, pages for at most 5 s, then (when asked: the
 * process is about to exit) releases the tick locks this process holds, last, because until it
 * exits its half-done act still runs under them.
 */
async function abandonPasses(
  programs: readonly ProgramContext[],
  message: string,
  opts: { releaseLocks: boolean },
): Promise<void> {
  const paging: Promise<unknown>[] = [];
  for (const program of programs) {
    let failed: JournalEvent;
    try {
      failed = appendEvent(program.stateDir, { type: "tick_failed", error: message });
    } catch {
      continue; // nothing more can be done here; the exit code and the log still say it
    }
    paging.push(
      import("../../page/hooks.js").then(({ afterEvents }) =>
        afterEvents(program, [failed], { tick: true }),
      ),
    );
  }
  await Promise.race([
    Promise.allSettled(paging),
    new Promise((r) => setTimeout(r, ABANDON_PAGE_WAIT_MS).unref()),
  ]);
  if (!opts.releaseLocks) return;
  for (const program of programs) {
    try {
      releaseOwnTickLock(program.stateDir);
    } catch {
      // the next tick breaks a lock whose holder is gone
    }
  }
}
