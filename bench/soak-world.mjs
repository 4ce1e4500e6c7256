// The soak's world (bench/soak.mjs): programs with real git ledgers, the fake manager, and what
// can be read about them from /proc and the state files. Plain JS: the test helpers are
// TypeScript (test/helpers/invariants.ts); the checks here are the same ones, read the same way.
import { spawnSync } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join, resolve } from "node:path";
import { jsonLines } from "./lib.mjs";

/**
 * The soak runs its own copy of the build (beside a link to node_modules): a `npm run build`
 * in the work tree during a long soak must not make its commands vanish for a moment.
 */
export function privateBuild(home) {
  const from = resolve(process.env.SHEEPDOG_CLI ? join(process.env.SHEEPDOG_CLI, "..") : "dist");
  const app = join(home, "sheepdog-build");
  cpSync(from, join(app, "dist"), { recursive: true });
  cpSync(resolve("package.json"), join(app, "package.json"));
  symlinkSync(resolve("node_modules"), join(app, "node_modules"));
  return join(app, "dist", "cli.cjs");
}
export const FAKE_MANAGER = resolve("test/fixtures/fake-manager.cjs");
/** The toy manager that writes Claude Code's transcripts and hook records (the activity faults). */
export const ACTIVITY_MANAGER = resolve("bench/activity-manager.cjs");
/** What a toy manager can be told to do (bench/activity-manager.cjs), and which are busy. */
export const ACTIVITY_KINDS = [
  "idle",
  "wedged",
  "busy-bash",
  "busy-subagent",
  "busy-background",
  "busy-retry",
];

/** mulberry32, as test/faults-kill.test.ts: a seeded PRNG, so a run can be replayed. */
export function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function gitEnv(home) {
  const globalConfig = join(home, ".gitconfig-soak");
  writeFileSync(globalConfig, "[init]\n\tdefaultBranch = main\n");
  return {
    GIT_CONFIG_GLOBAL: globalConfig,
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_AUTHOR_NAME: "Soak",
    GIT_AUTHOR_EMAIL: "soak@example.test",
    GIT_COMMITTER_NAME: "Soak",
    GIT_COMMITTER_EMAIL: "soak@example.test",
    GIT_TERMINAL_PROMPT: "0",
  };
}

export function git(cwd, args, env) {
  const r = spawnSync("git", args, { cwd, env: { ...process.env, ...env }, encoding: "utf8" });
  return { code: r.status ?? -1, out: (r.stdout ?? "").trim(), err: r.stderr ?? "" };
}

/**
 * One program under $SHEEPDOG_HOME: the fake manager saving every `saveEvery` s, told to hand
 * over or go silent by a file named with its pid, obeying pauses; a ledger with a bare remote.
 * With `policy.activity` ({ quietAfter, nudgeWait, busyFor }): the toy manager instead, told by
 * a file `<kind>-<pid>` in `ctl` to go idle, wedge or be busy but quiet (ACTIVITY_KINDS), and
 * the watchdog's `quiet_after` and `nudge_wait` set.
 */
export function makeProgram(home, name, genv, policy) {
  const root = join(home, name);
  const ctl = join(home, "soak-control", name);
  mkdirSync(ctl, { recursive: true });
  const ledger = join(root, "ledger");
  const remote = join(home, "remotes", `${name}.git`);
  mkdirSync(join(home, "remotes"), { recursive: true });
  git(home, ["init", "-q", "--bare", remote], genv);
  git(home, ["init", "-q", ledger], genv);
  git(ledger, ["remote", "add", "origin", remote], genv);
  writeFileSync(join(ledger, "LEDGER.md"), "# ledger\n");
  const a = policy.activity;
  const command = a
    ? [
        process.execPath,
        ACTIVITY_MANAGER,
        "--save-every",
        String(policy.saveEvery),
        "--ctl",
        ctl,
        "--busy-for",
        String(a.busyFor),
        "--grow-every",
        "1",
        "--retry-every",
        "1",
        "--wedge-timeout",
        "1000",
        "--obey-pause",
        "{prompt}",
      ]
    : [
        process.execPath,
        FAKE_MANAGER,
        "--save-every",
        String(policy.saveEvery),
        "--hand-over-when",
        join(ctl, "hand-over-%p"),
        "--hang-when",
        join(ctl, "silence-%p"),
        "--obey-pause",
        "{prompt}",
      ];
  const config = {
    name,
    manager: { launcher: "command", command, env: { SHEEPDOG_CLI: policy.cli } },
    watchdog: {
      interval: policy.interval,
      stale_after: policy.staleAfter,
      claim_grace: policy.claimGrace,
      ...(a ? { quiet_after: a.quietAfter, nudge_wait: a.nudgeWait } : {}),
      crash_loop: { starts: 100000, within: "1h" },
      no_progress_hand_overs: 100000,
    },
    ledger: { repo: "ledger" },
  };
  writeFileSync(join(root, "program.json"), `${JSON.stringify(config, null, 2)}\n`);
  return {
    name,
    root,
    ctl,
    ledger,
    remote,
    stateDir: join(root, ".sheepdog"),
    shas: new Set(),
    activity: Boolean(a),
  };
}

/** A process's start time (field 22 of /proc/PID/stat) and state, or null when it is gone. */
export function procStat(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return { state: f[0], ppid: Number(f[1]), start_time: String(f[19]) };
  } catch {
    return null;
  }
}

/**
 * Alive: the same process (pid and start time) and not a zombie. A start time as sheepdog
 * records it (`linux:<boot id>:<ticks>`) or as /proc has it (`<ticks>`).
 */
export function isAlive(pid, startTime) {
  const s = procStat(pid);
  const ticks = String(startTime).split(":").pop();
  return s !== null && s.state !== "Z" && s.state !== "X" && s.start_time === ticks;
}

/**
 * Live fake (and toy) managers of each program root, from /proc (cmdline and environment, never the name
 * alone). A manager's child between fork and exec still shows its parent's argv: skipped.
 */
export function liveManagers(roots) {
  const byRoot = new Map(roots.map((r) => [r, []]));
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const cmdline = readFileSync(`/proc/${name}/cmdline`, "utf8");
      if (!cmdline.includes(FAKE_MANAGER) && !cmdline.includes(ACTIVITY_MANAGER)) continue;
      const env = readFileSync(`/proc/${name}/environ`, "utf8").split("\0");
      const root = env.find((e) => e.startsWith("SHEEPDOG_PROGRAM="))?.slice(17);
      const s = procStat(Number(name));
      if (!root || !byRoot.has(root) || !s || s.state === "Z" || s.state === "X") continue;
      byRoot.get(root).push({ pid: Number(name), ppid: s.ppid, start_time: s.start_time });
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  for (const [root, found] of byRoot) {
    const pids = new Set(found.map((m) => m.pid));
    byRoot.set(
      root,
      found.filter((m) => !pids.has(m.ppid)),
    );
  }
  return byRoot;
}

export function readJson(path) {
  try {
    return JSON.parse(readFileSync(path, "utf8"));
  } catch {
    return null;
  }
}

/** The claim's holder and whether it lives; null when nobody holds it. */
export function claimOf(stateDir) {
  if (!existsSync(join(stateDir, "claim"))) return null;
  const h = readJson(join(stateDir, "claim", "holder.json"));
  if (!h) return { pid: null, alive: false, unreadable: true };
  return { pid: h.pid, start_time: h.start_time, alive: isAlive(h.pid, h.start_time) };
}

/** journal.jsonl: the events, the lines that are not whole events, and lines glued together. */
export function journalOf(stateDir) {
  let text = "";
  try {
    text = readFileSync(join(stateDir, "journal.jsonl"), "utf8");
  } catch {
    return { events: [], torn: [], glued: [] };
  }
  const events = [];
  const torn = [];
  for (const line of text.split("\n")) {
    if (!line.trim()) continue;
    try {
      const v = JSON.parse(line);
      if (v && typeof v.type === "string" && typeof v.at === "string") events.push(v);
      else torn.push(line);
    } catch {
      torn.push(line);
    }
  }
  return { events, torn, glued: torn.filter((l) => l.includes('}{"at"')) };
}

/**
 * The short mutexes beside the locks: each appears whole with its holder (src/lock/dir-lock.ts) and
 * is broken once its holder is dead, so one that stands long is a fault: how long each has stood.
 */
export const AGED_LOCKS = ["claim.break.lock", "tick.lock.break", "journal.rotate.lock"];

/**
 * The tick lock: absent, held by a live tick, or left by a dead one; "unreadable" (no holder in
 * it) is made only by hand or an older sheepdog now, and the next tick breaks it at once.
 */
export function tickLockOf(stateDir) {
  if (!existsSync(join(stateDir, "tick.lock"))) return "absent";
  const h = readJson(join(stateDir, "tick.lock", "holder.json"));
  if (!h) return "unreadable";
  return isAlive(h.pid, h.start_time) ? "live" : "dead holder";
}

/** Ledger commits recorded so far that are not on the remote's ledger branch. */
export function unpushed(p, genv) {
  const tip = git(p.remote, ["rev-parse", "-q", "--verify", "refs/heads/ledger"], genv).out;
  const lost = [];
  for (const sha of p.shas)
    if (!tip || git(p.remote, ["merge-base", "--is-ancestor", sha, tip], genv).code !== 0)
      lost.push(sha);
  return lost;
}

/** Stops exactly this process (pid and start time re-checked), continuing it if stopped. */
export function killExact(pid, startTime) {
  if (!isAlive(pid, startTime)) return false;
  try {
    process.kill(pid, "SIGKILL");
    process.kill(pid, "SIGCONT");
  } catch {
    // gone meanwhile
  }
  return true;
}

/**
 * Every live process whose `SHEEPDOG_PROGRAM` is one of `roots` (the managers, and the tool
 * shells they started, which inherit it), read from /proc, never by name: SIGKILLed and
 * continued if stopped (`skip`: pids already dealt with). Returns how many there were.
 */
export function killProgramProcesses(roots, skip = new Set()) {
  const wanted = new Set(roots.map((r) => `SHEEPDOG_PROGRAM=${r}`));
  let n = 0;
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid || skip.has(Number(name))) continue;
    try {
      const env = readFileSync(`/proc/${name}/environ`, "utf8").split("\0");
      if (!env.some((e) => wanted.has(e))) continue;
      const s = procStat(Number(name));
      if (!s || s.state === "Z" || s.state === "X") continue;
      process.kill(Number(name), "SIGKILL");
      process.kill(Number(name), "SIGCONT");
      n++;
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return n;
}

/** The toy managers' own log of their spells (`<ctl>/events.jsonl`): {pid, kind, phase, at}. */
export function toyEvents(ctl) {
  return jsonLines(join(ctl, "events.jsonl"));
}
