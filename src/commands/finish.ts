import { readClaim, releaseClaimIf, sameProcess } from "../claim/claim.js";
import { openProgram } from "../config/context.js";
import { EXIT, RefusedError, RuntimeFailure, UsageError } from "../errors.js";
import { appendEvent, type JournalEvent } from "../journal/journal.js";
import { afterEvents } from "../page/hooks.js";
import type { ProcessIdentity } from "../process/identity.js";
import { findManager } from "../process/manager.js";
import { parseCommandArgs, pidOption } from "../util/args.js";

/**
 * `sheepdog finish --note TEXT`: the manager's "the backlog is done". Journals `finished`
 * and releases the claim if the caller holds it; the watchdog starts nothing more until
 * `sheepdog reopen`. While a live manager holds the claim only that manager may finish
 * (DESIGN §16): a stray worker or a person's typo must not end supervision. `--force` is a
 * person's override, journaled as such; the holder is left running (stop it yourself).
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
  const claim = readClaim(program.stateDir);
  const liveHolder =
    claim.held && claim.holder && (claim.liveness === "alive" || claim.liveness === "foreign")
      ? claim.holder
      : null;
  const self = me;
  const byHolder = liveHolder !== null && self !== null && sameProcess(liveHolder, self);
  const forced = liveHolder !== null && !byHolder;
  if (forced && values.force !== true)
    throw new RefusedError(
      `sheepdog finish: ${program.name} is claimed by pid ${liveHolder.pid} on ${liveHolder.hostname}, which is alive; only the holder finishes (a person who means it: sheepdog finish --force --note TEXT --program ${program.name})`,
    );
  const events: JournalEvent[] = [];
  events.push(
    appendEvent(program.stateDir, {
      type: "finished",
      note: values.note,
      ...(me ? { pid: me.pid } : {}),
      ...(forced ? { forced: true, holder_pid: liveHolder.pid } : {}),
    }),
  );
  let released = false;
  if (me) {
    const self = me;
    try {
      const out = releaseClaimIf(
        program.stateDir,
        (c) => c.held && c.holder !== null && sameProcess(c.holder, self),
        () => ({ type: "released", pid: self.pid, start_time: self.start_time, note: "finished" }),
      );
      if (out.released) events.push(out.event);
      released = out.released;
    } catch (err) {
      // The finish is journaled and holds: say so, not only that something failed (a full
      // disk once made this exit 1 with a bare ENOSPC, and the program was finished anyway).
      await afterEvents(program, events);
      throw new RuntimeFailure(
        `${program.name}: finished (journaled: the watchdog starts nothing more until sheepdog reopen), but the claim could not be released: ${(err as Error).message}; release it with sheepdog claim release --pid ${self.pid} once that is mended`,
      );
    }
  }
  await afterEvents(program, events);
  if (values.json) {
    const out = {
      program: program.name,
      finished: true,
      note: values.note,
      released_pid: released && me ? me.pid : null,
      forced,
    };
    process.stdout.write(`${JSON.stringify(out)}\n`);
    return EXIT.ok;
  }
  const still = forced
    ? `; pid ${liveHolder?.pid} still holds the claim and runs: stop it if it should not`
    : "";
  process.stdout.write(
    `${program.name}: finished${forced ? " (forced)" : ""}${released ? `; claim released by pid ${me?.pid}` : ""}${still}; the watchdog starts nothing more until sheepdog reopen\n`,
  );
  return EXIT.ok;
}
