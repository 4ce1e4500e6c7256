import { readFileSync } from "node:fs";
import { join } from "node:path";
import { openProgramAt, type ProgramContext } from "../../src/config/context.js";
import { appendEvent, type JournalEvent, readEvents } from "../../src/journal/journal.js";
import { tempProgram } from "./cli.js";

/** A program with a `page` section, its state directory created, loaded as the CLI would. */
export function pagedProgram(page: Record<string, unknown>, name = "catalog") {
  const p = tempProgram(name, { page });
  // Pages name the program as `--program NAME` only when NAME resolves under $SHEEPDOG_HOME.
  process.env.SHEEPDOG_HOME = p.home;
  // Host state (the key for the phone's buttons, what each ntfy server knows) stays in the test's.
  process.env.SHEEPDOG_STATE_DIR = p.env.SHEEPDOG_STATE_DIR;
  const ctx: ProgramContext = openProgramAt(p.root, { create: true });
  return { ...p, ctx };
}

/** Journals an event at `now` (as a tick would) and returns it, for passing to afterEvents. */
export function journal(
  ctx: ProgramContext,
  event: { type: string; [field: string]: unknown },
  now = Date.now(),
): JournalEvent {
  return appendEvent(ctx.stateDir, event, now);
}

export function eventsOf(ctx: ProgramContext, type?: string): JournalEvent[] {
  const all = readEvents(ctx.stateDir);
  return type ? all.filter((e) => e.type === type) : all;
}

/** The raw journal text (to prove a secret is nowhere in it). */
export function journalText(ctx: ProgramContext): string {
  try {
    return readFileSync(join(ctx.stateDir, "journal.jsonl"), "utf8");
  } catch {
    return "";
  }
}
