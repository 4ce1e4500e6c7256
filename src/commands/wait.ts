// `sheepdog wait [--every 20m] [--json]` (DESIGN §14): the manager's one background wait. It
// blocks until the first of: `--every` has passed (`time`), its program is paused or stood down
// (`seat`, `stood_down`), its claim is no longer the caller's (`claim_lost`), its host no longer
// holds the program's lease (`lease_lost`, DESIGN §15); then prints one
// JSON line `{"event", "reason", "at"}` and exits 0. It costs nothing while it waits: the
// program's state folder is watched (inotify/FSEvents through fs.watch), not polled; one slow
// re-check a minute covers a file system whose events go missing.
import { existsSync, type FSWatcher, watch } from "node:fs";
import { readClaim, sameProcess } from "../claim/claim.js";
import { openProgram } from "../config/context.js";
import { EXIT } from "../errors.js";
import { followReplay } from "../journal/follow.js";
import type { ReplayedState } from "../journal/replay.js";
import { leaseAnswer, readLocalLease, sinceRenewal } from "../lease/local.js";
import { livenessOf } from "../process/identity.js";
import { findManager } from "../process/manager.js";
import { parseCommandArgs, pidOption } from "../util/args.js";
import { formatDuration } from "../util/duration.js";
import { envMs } from "../util/env-ms.js";
import { faultPoint } from "../util/fault-point.js";

export type WakeEvent = "time" | "seat" | "stood_down" | "claim_lost" | "lease_lost";

export interface Wake {
  event: WakeEvent;
  reason: string;
  at: string;
}

/**
 * The slow re-check, for what changes no file (the manager died) and for file systems that drop
 * change events (network mounts). `SHEEPDOG_WAIT_RECHECK_MS` shortens it for tests.
 */
const RECHECK_MS = envMs("SHEEPDOG_WAIT_RECHECK_MS", 60_000);
/** Events come in bursts (a save writes several files): one look after the burst. */
const SETTLE_MS = 50;

type Me = ReturnType<typeof findManager>;

/** Why the wait ends now, or null to go on waiting. Reads three small things (the journal only where it grew), no transcript. */
export function wakeNow(
  stateDir: string,
  me: Me,
  deadline: number,
  now = Date.now(),
  replayed: () => ReplayedState = followReplay(stateDir),
  leased = false,
): Wake | null {
  const at = new Date(now).toISOString();
  if (leased) {
    // DESIGN §15: this host's watchdog fenced it, or stopped renewing for ttl − margin.
    const lease = leaseAnswer(readLocalLease(stateDir), now);
    if (!lease.held_here)
      return {
        event: "lease_lost",
        reason: `this host does not hold the program's lease${lease.host ? ` (${lease.host} does, epoch ${lease.epoch})` : ""}: save and stop`,
        at,
      };
  }
  const state = replayed();
  if (state.stoodDown)
    return {
      event: "stood_down",
      reason: `the program stood down: ${String(state.stoodDown.reason ?? "")}`.trim(),
      at,
    };
  const paused = state.paused;
  if (paused && typeof paused.until === "string" && now < Date.parse(paused.until))
    return {
      event: "seat",
      reason: `the program is paused until ${paused.until}: ${String(paused.reason ?? "")}`.trim(),
      at,
    };
  const claim = readClaim(stateDir);
  if (!claim.held || !claim.holder)
    return { event: "claim_lost", reason: "the program's claim is not held", at };
  if (!sameProcess(claim.holder, me))
    return {
      event: "claim_lost",
      reason: `the claim is held by pid ${claim.holder.pid}, not by this manager (pid ${me.pid})`,
      at,
    };
  if (livenessOf(me) !== "alive")
    return { event: "claim_lost", reason: `the manager (pid ${me.pid}) is gone`, at };
  if (now >= deadline) return { event: "time", reason: "the --every interval passed", at };
  return null;
}

/** `wait` without --every wakes after 20 minutes at the latest. */
const DEFAULT_EVERY_MS = 20 * 60_000;

export async function run(argv: string[]): Promise<number> {
  const { values } = parseCommandArgs("wait", argv);
  const everyMs = values.every ?? DEFAULT_EVERY_MS;
  const program = openProgram(values.program);
  const me = findManager(pidOption(values.pid));
  const deadline = Date.now() + everyMs;
  const wake = await waitForWake(program.stateDir, me, deadline, !!program.config.lease);
  const out =
    wake.event === "time" ? { ...wake, reason: `${formatDuration(everyMs)} passed` } : wake;
  process.stdout.write(`${JSON.stringify(out)}\n`);
  return EXIT.ok;
}

/** When this host's hold on the lease runs out unless renewed: a wake is due then. */
function leaseRunsOut(stateDir: string, now: number): number | null {
  const local = readLocalLease(stateDir);
  const since = sinceRenewal(local, now);
  return local?.held && since !== null ? now + Math.max(0, local.hold_ms - since) : null;
}

function waitForWake(stateDir: string, me: Me, deadline: number, leased: boolean): Promise<Wake> {
  return new Promise((resolve) => {
    let watcher: FSWatcher | null = null;
    let settle: NodeJS.Timeout | null = null;
    let recheck: NodeJS.Timeout | null = null;
    let done = false;
    const replayed = followReplay(stateDir);
    const timer = setTimeout(() => look(), Math.max(0, deadline - Date.now()));
    let leaseTimer: NodeJS.Timeout | null = null;
    const look = () => {
      if (done) return;
      const now = Date.now();
      const wake = wakeNow(stateDir, me, deadline, now, replayed, leased);
      if (!wake) {
        // A renewal moves the hold's end: the timer follows lease.json at every look.
        const runsOut = leased ? leaseRunsOut(stateDir, now) : null;
        if (leaseTimer) clearTimeout(leaseTimer);
        leaseTimer = runsOut !== null ? setTimeout(look, runsOut - now + 5) : null;
        return;
      }
      done = true;
      watcher?.close();
      for (const t of [timer, settle, recheck, leaseTimer]) if (t) clearTimeout(t);
      resolve(wake);
    };
    if (existsSync(stateDir))
      try {
        watcher = watch(stateDir, () => {
          if (settle) clearTimeout(settle);
          settle = setTimeout(look, SETTLE_MS);
        });
      } catch {
        // no watch (an exotic file system): the re-check below still wakes it
      }
    const again = () => {
      look();
      if (!done) recheck = setTimeout(again, RECHECK_MS);
    };
    recheck = setTimeout(again, RECHECK_MS);
    look();
    // Watching, and nothing to wake for yet: from here only an event, a timer or the re-check
    // can end the wait (the test hook lets a test act only once it is here).
    if (!done) faultPoint("wait.waiting");
  });
}
