// A tick or watcher that must end before its passes finish (a deadline, a signal): the one
// way it says so. An unsupervised program is never silent (DESIGN §6, §16).
import type { ProgramContext } from "../config/context.js";
import { appendEvent, type JournalEvent } from "../journal/journal.js";
import { releaseOwnTickLock } from "./tick-lock.js";

/** A process about to go waits this long for its pages, at most: it is already late. */
export const ABANDON_PAGE_WAIT_MS = 5000;

/**
 * Journals `tick_failed {error}` for each program in progress, pages for at most 5 s, then
 * (when asked: the process is about to exit) releases the tick locks this process holds, last,
 * because until it exits its half-done act still runs under them.
 */
export async function abandonPasses(
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
      import("../page/hooks.js").then(({ afterEvents }) =>
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

/**
 * Passes a tick gave up at their deadline while they still run (a hung git, a launcher that
 * never answers): the other programs' passes go on, and a given-up pass that wakes acts no more,
 * since its facts are old by then and its tick_failed is already journaled.
 */
const overdue = new WeakSet<ProgramContext>();

export class PassOverdue extends Error {}

export function giveUpPass(program: ProgramContext): void {
  overdue.add(program);
}

export function givenUp(program: ProgramContext): boolean {
  return overdue.has(program);
}

/** Throws PassOverdue once the pass of `program` was given up. */
export function stillDue(program: ProgramContext): void {
  if (overdue.has(program))
    throw new PassOverdue(`${program.name}: the pass was given up at its deadline`);
}
