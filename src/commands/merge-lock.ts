import { openProgram, type ProgramContext } from "../config/context.js";
import { EXIT, RefusedError, UsageError } from "../errors.js";
import { appendEvent } from "../journal/journal.js";
import {
  acquireMergeLock,
  describeMergeLock,
  type MergeLockConfig,
  type MergeLockState,
  readMergeLock,
  releaseMergeLock,
} from "../merge-lock/lock.js";
import { findManager } from "../process/manager.js";
import { parseCommandArgs, pidOption } from "../util/args.js";
import { faultPoint } from "../util/fault-point.js";

function stateJson(state: MergeLockState, cfg: { ref: string; remote?: string | undefined }) {
  const where = { ref: cfg.ref, remote: cfg.remote ?? null };
  if (!state.held) return { held: false, ...where, holder: null, alive: null, liveness: null };
  return {
    held: true,
    ...where,
    holder: state.holder,
    alive: state.liveness === "foreign" ? null : state.liveness === "alive",
    liveness: state.liveness,
    age_ms: state.age_ms,
    sha: state.sha ?? null,
  };
}

/** What each subcommand needs: the program, its merge-lock config, and how to answer. */
interface LockCall {
  program: ProgramContext;
  cfg: MergeLockConfig;
  opts: { root: string };
  out: (json: unknown, text: string) => void;
}

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs("merge-lock", argv);
  const [action, ...extra] = positionals;
  if (!action || !["acquire", "release", "show"].includes(action) || extra.length > 0)
    throw new UsageError("sheepdog merge-lock: expected acquire, release or show");
  if (values.item !== undefined && action !== "acquire")
    throw new UsageError("sheepdog merge-lock: --item goes with acquire");
  if (values.stale && action !== "release")
    throw new UsageError("sheepdog merge-lock: --stale goes with release");
  if (values.item !== undefined && !values.item.trim())
    throw new UsageError("sheepdog merge-lock: --item needs a non-empty ID");
  const pid = pidOption(values.pid);

  const program = openProgram(values.program, { create: action !== "show" });
  const cfg = program.config.merge_lock;
  if (!cfg)
    throw new UsageError(
      `${program.configPath}: field merge_lock is missing; expected {"repo": PATH, "remote"?: NAME, "ref"?: REF}`,
    );
  const out = (json: unknown, text: string) =>
    process.stdout.write(values.json ? `${JSON.stringify(json)}\n` : `${text}\n`);
  const call: LockCall = { program, cfg, opts: { root: program.root }, out };
  if (action === "show") return show(call);
  if (action === "acquire") return acquire(call, pid, values.item ?? null);
  return release(call, pid, values.stale === true);
}

async function show({ program, cfg, opts, out }: LockCall): Promise<number> {
  const state = await readMergeLock(cfg, opts);
  out(stateJson(state, cfg), `${program.name}: merge lock ${cfg.ref} ${describeMergeLock(state)}`);
  return EXIT.ok;
}

async function acquire(
  { program, cfg, opts, out }: LockCall,
  pid: number | undefined,
  item: string | null,
): Promise<number> {
  const me = findManager(pid);
  const result = await acquireMergeLock(cfg, me, item, opts);
  if (!result.ok) {
    const hint =
      result.state.held && (result.state.liveness === "dead" || result.state.liveness === "reused")
        ? "; to remove it: sheepdog merge-lock release --stale"
        : "";
    throw new RefusedError(`${program.name}: merge lock ${describeMergeLock(result.state)}${hint}`);
  }
  faultPoint("merge-lock.acquired");
  if (!result.already)
    appendEvent(program.stateDir, {
      type: "merge_lock_acquired",
      pid: me.pid,
      item: result.holder.item,
      ref: cfg.ref,
    });
  out(
    {
      acquired: true,
      already: result.already,
      holder: result.holder,
      sha: result.sha,
      ref: cfg.ref,
    },
    `${program.name}: merge lock ${result.already ? "already held" : "acquired"} by pid ${me.pid}${
      result.holder.item ? ` for item ${result.holder.item}` : ""
    }`,
  );
  return EXIT.ok;
}

async function release(
  { program, cfg, opts, out }: LockCall,
  pid: number | undefined,
  stale: boolean,
): Promise<number> {
  const who = stale ? ({ stale: true } as const) : { me: findManager(pid) };
  const released = await releaseMergeLock(cfg, who, opts);
  faultPoint("merge-lock.released");
  appendEvent(program.stateDir, {
    type: "merge_lock_released",
    ...(released.holder ? { pid: released.holder.pid, item: released.holder.item } : {}),
    ref: cfg.ref,
    ...(stale ? { stale: true, holder_state: released.liveness } : {}),
  });
  out(
    { released: true, stale, holder: released.holder, ref: cfg.ref },
    `${program.name}: merge lock released (was ${describeMergeLock(released)})`,
  );
  return EXIT.ok;
}
