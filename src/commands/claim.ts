import {
  breakStaleClaim,
  type ClaimState,
  claimAge,
  type ReleaseResult,
  readClaim,
  releaseClaimIf,
  sameProcess,
  tryAcquire,
} from "../claim/claim.js";
import { openProgram } from "../config/context.js";
import { EXIT, RefusedError, UsageError } from "../errors.js";
import { leaseAnswer, readLocalLease } from "../lease/local.js";
import { LockBusy } from "../lock/dir-lock.js";
import { findManager } from "../process/manager.js";
import { ensureStateDir } from "../state/dir.js";
import { parseCommandArgs, pidOption } from "../util/args.js";
import { formatDuration } from "../util/duration.js";
import { shownLine } from "../util/sanitize.js";

function describeHolder(state: ReturnType<typeof readClaim>): string {
  if (!state.held) return "not held";
  if (!state.holder) return `held, but ${state.problem} (counts as dead)`;
  const h = state.holder;
  const age = formatDuration(claimAge(h));
  const what = {
    alive: "alive",
    dead: "dead",
    reused: "dead: its pid now belongs to another process",
    foreign: "on another machine: not judged here",
  }[state.liveness];
  // holder.json is a file an agent can write: its hostname is one line, whatever it holds.
  return shownLine(`held by pid ${h.pid} on ${h.hostname}, claimed ${age} ago (${what})`);
}

type ClaimValues = {
  program?: string;
  "break-stale"?: boolean;
  force?: boolean;
  note?: string;
  json?: boolean;
};

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs("claim", argv);
  const [action, ...extra] = positionals;
  if (!action || !["acquire", "release", "show"].includes(action) || extra.length > 0) {
    throw new UsageError("sheepdog claim: expected acquire, release or show");
  }
  const pid = pidOption(values.pid);
  if (action === "show") return show(values);
  if (action === "acquire") return acquire(values, pid);
  return release(values, pid);
}

function show(values: ClaimValues): number {
  const program = openProgram(values.program);
  const state = readClaim(program.stateDir);
  if (values.json) {
    const out = state.held
      ? {
          held: true,
          holder: state.holder,
          alive: state.liveness === "foreign" ? null : state.liveness === "alive",
          foreign: state.liveness === "foreign",
          ...(state.liveness !== "foreign" && state.liveness !== "alive"
            ? { why: state.holder ? state.liveness : "unreadable" }
            : {}),
        }
      : { held: false, holder: null, alive: null, foreign: false };
    process.stdout.write(`${JSON.stringify(out)}\n`);
  } else {
    process.stdout.write(`${program.name}: ${describeHolder(state)}\n`);
  }
  return EXIT.ok;
}

function acquire(values: ClaimValues, pid: number | undefined): number {
  // Config, state-dir safety and the manager are all checked before any state is created.
  const checked = openProgram(values.program);
  const me = findManager(pid);
  const program = { ...checked, stateDir: ensureStateDir(checked.root) };
  const epoch = leaseEpochHere(program);
  let result = tryAcquire(program.stateDir, me, Date.now(), epoch);
  if (!result.ok && values["break-stale"]) {
    const seen = result.state;
    if (seen.held && seen.liveness !== "alive" && seen.liveness !== "foreign") {
      const why = seen.holder
        ? `holder pid ${seen.holder.pid} is ${seen.liveness}`
        : `holder unreadable: ${seen.problem}`;
      // Whoever broke it (we or a concurrent breaker), the claim may now be free: try once.
      const broke = breakStaleClaim(program.stateDir, seen, `claim acquire --break-stale: ${why}`);
      if (broke instanceof LockBusy)
        throw new RefusedError(`${program.name}: ${broke.describe()}: try again`);
      result = tryAcquire(program.stateDir, me, Date.now(), epoch);
    }
  }
  if (!result.ok) return refuseAcquire(values, program.name, result.state, me);
  if (values.json)
    process.stdout.write(`${JSON.stringify({ acquired: true, holder: result.holder })}\n`);
  else process.stdout.write(`${program.name}: claimed by pid ${me.pid}\n`);
  return EXIT.ok;
}

/**
 * A program with a lease (DESIGN §15) is claimed only on the host that holds it, and the claim
 * records its epoch: a manager started by hand on a standby would be a second one.
 */
function leaseEpochHere(program: {
  name: string;
  stateDir: string;
  config: { lease?: unknown };
}): number | undefined {
  if (!program.config.lease) return undefined;
  const answer = leaseAnswer(readLocalLease(program.stateDir));
  if (answer.held_here && answer.epoch !== null) return answer.epoch;
  const who = answer.host
    ? `it is held by ${answer.host} (epoch ${answer.epoch})`
    : "this host's watchdog has not taken it yet";
  throw new RefusedError(
    `${program.name}: the lease is not held by this host (${who}): a manager here would be a second one; the watchdog of the host that holds it starts its manager (see sheepdog status --fleet)`,
  );
}

/** The claim is taken: fine if by this very manager, otherwise refused with a hint. */
function refuseAcquire(
  values: ClaimValues,
  name: string,
  state: ClaimState,
  me: ReturnType<typeof findManager>,
): number {
  if (state.held && state.holder && sameProcess(state.holder, me)) {
    // Already ours: acquiring twice is not an error.
    if (values.json)
      process.stdout.write(
        `${JSON.stringify({ acquired: true, holder: state.holder, already: true })}\n`,
      );
    else process.stdout.write(`${name}: already held by this manager (pid ${me.pid})\n`);
    return EXIT.ok;
  }
  let hint = "";
  if (state.held && state.liveness !== "alive" && state.liveness !== "foreign") {
    hint = "; to take it: sheepdog claim acquire --break-stale";
  } else if (state.held && state.liveness === "foreign") {
    hint = "; a claim from another machine is never broken here";
  }
  throw new RefusedError(`${name}: claim ${describeHolder(state)}${hint}`);
}

function release(values: ClaimValues, pid: number | undefined): number {
  const program = openProgram(values.program);
  const state = readClaim(program.stateDir);
  if (values.force) return releaseByForce(program.name, program.stateDir, state, values.note);
  if (values.note !== undefined) throw new UsageError("--note goes with --force");
  if (!state.held)
    throw new RefusedError(`${program.name}: the claim is not held; nothing to release`);
  const me = findManager(pid);
  if (!state.holder || !sameProcess(state.holder, me)) {
    throw new RefusedError(
      `${program.name}: pid ${me.pid} is not the holder (${describeHolder(state)}); a person may use --force --note TEXT`,
    );
  }
  const out = releaseClaimIf(
    program.stateDir,
    (now) => now.held && now.holder !== null && sameProcess(now.holder, me),
    () => ({ type: "released", pid: me.pid, start_time: me.start_time }),
  );
  if (!out.released) throw new RefusedError(`${program.name}: ${changedWhile(out)}`);
  process.stdout.write(`${program.name}: released by pid ${me.pid}\n`);
  return EXIT.ok;
}

function releaseByForce(
  name: string,
  stateDir: string,
  state: ClaimState,
  note: string | undefined,
): number {
  if (!note?.trim()) throw new UsageError("claim release --force needs --note TEXT saying why");
  if (!state.held) {
    process.stdout.write(`${name}: not held\n`);
    return EXIT.ok;
  }
  // By force, but still only the claim the person saw: never one taken since.
  const seen = JSON.stringify(state);
  const out = releaseClaimIf(
    stateDir,
    (now) => JSON.stringify(now) === seen,
    () => ({
      type: "released",
      forced: true,
      note,
      ...(state.holder ? { pid: state.holder.pid, start_time: state.holder.start_time } : {}),
    }),
  );
  if (!out.released) throw new RefusedError(`${name}: ${changedWhile(out)}`);
  process.stdout.write(`${name}: claim removed by force (${describeHolder(state)})\n`);
  return EXIT.ok;
}

/** Why a release found the claim not as it was read (a break, or a break and a new holder). */
function changedWhile(out: Extract<ReleaseResult, { released: false }>): string {
  if (out.state === null) return `${out.busy.describe()}: try again`;
  const state = out.state;
  return `the claim changed while releasing it (${state.held ? describeHolder(state) : "now not held"}); nothing removed`;
}
