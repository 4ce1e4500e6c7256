import { releaseClaimIf, sameProcess } from "../claim/claim.js";
import { openProgram } from "../config/context.js";
import { EXIT, UsageError } from "../errors.js";
import { appendEvent, type JournalEvent } from "../journal/journal.js";
import { afterEvents } from "../page/hooks.js";
import type { ProcessIdentity } from "../process/identity.js";
import { findManager } from "../process/manager.js";
import { parseCommandArgs, pidOption } from "../util/args.js";

/**
 * `sheepdog finish --note TEXT`: the manager's "the backlog is done". Journals `finished`
 * and releases the claim if the caller holds it; the watchdog starts nothing more until
 * `sheepdog reopen`.
 */
export async function run(argv: string[]): Promise<number> {
  const { values } = parseCommandArgs("finish", argv);
  if (!values.note?.trim())
    throw new UsageError("sheepdog finish: --note TEXT is required (what is done)");
  const pid = pidOption(values.pid);
  const program = openProgram(values.program, { create: true });
  let me: ProcessIdentity | null = null;
  try {
    me = findManager(pid);
  } catch (err) {
    if (pid !== undefined) throw err; // --pid named a process that is not there
    // A person finishing from a shell: no manager among the ancestors, nothing to release.
  }
  const events: JournalEvent[] = [];
  events.push(
    appendEvent(program.stateDir, {
      type: "finished",
      note: values.note,
      ...(me ? { pid: me.pid } : {}),
    }),
  );
  let released = false;
  if (me) {
    const self = me;
    const out = releaseClaimIf(
      program.stateDir,
      (c) => c.held && c.holder !== null && sameProcess(c.holder, self),
      () => ({ type: "released", pid: self.pid, start_time: self.start_time, note: "finished" }),
    );
    if (out.released) events.push(out.event);
    released = out.released;
  }
  await afterEvents(program, events);
  if (values.json) {
    const out = {
      program: program.name,
      finished: true,
      note: values.note,
      released_pid: released && me ? me.pid : null,
    };
    process.stdout.write(`${JSON.stringify(out)}\n`);
    return EXIT.ok;
  }
  process.stdout.write(
    `${program.name}: finished${released ? `; claim released by pid ${me?.pid}` : ""}; the watchdog starts nothing more until sheepdog reopen\n`,
  );
  return EXIT.ok;
}
