// Soak (issue 14): several programs under `sheepdog watch --all` AND a timer running
// `sheepdog tick --all` every few seconds, for N minutes, while a seeded PRNG kills managers
// (-9), stops them (SIGSTOP: stuck), silences them (no more saves), makes them hand over, puts
// the seat at a usage limit with a reset a few seconds ahead, and kills the watcher and timer
// ticks mid-pass. It checks the invariants all along and reports every violation (exit 1 if
// any) and the recovery times per fault kind. Not part of `npm test`.
//   node bench/soak.mjs [--minutes 10] [--programs 4] [--seed S] [--tick-every 3] [--keep]
//   npm run soak -- --minutes 1
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, openSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { median } from "./lib.mjs";
import {
  AGED_LOCKS,
  claimOf,
  git,
  gitEnv,
  journalOf,
  killExact,
  liveManagers,
  makeProgram,
  privateBuild,
  prng,
  tickLockOf,
  unpushed,
} from "./soak-world.mjs";

const { values: opt } = parseArgs({
  options: {
    minutes: { type: "string", default: "10" },
    programs: { type: "string", default: "4" },
    seed: { type: "string" },
    "tick-every": { type: "string", default: "3" },
    keep: { type: "boolean", default: false },
  },
});
const MINUTES = Number(opt.minutes);
const SEED = Number(opt.seed) || Date.now() % 2 ** 31;
const TICK_EVERY_MS = Number(opt["tick-every"]) * 1000;
const random = prng(SEED);
const POLICY = { saveEvery: 1, interval: "5s", staleAfter: "8s", claimGrace: "10s" };
/** How long a state may last before it is a violation (they are all far past the policy's). */
const GRACE = { twoManagers: 10_000, deadClaim: 45_000, noHolder: 60_000, deadLock: 60_000 };
const AGED_LOCK_MS = 120_000;
const RECOVERY_LIMIT_MS = 90_000;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const pick = (xs) => xs[Math.floor(random() * xs.length)];

const home = realpathSync(mkdtempSync(join(tmpdir(), "sheepdog-soak-")));
const genv = gitEnv(home);
const CLI = privateBuild(home);
const env = {
  ...process.env,
  ...genv,
  SHEEPDOG_HOME: home,
  SHEEPDOG_STATE_DIR: join(home, ".state"),
  CLAUDE_CONFIG_DIR: join(home, "seat"),
};
delete env.SHEEPDOG_PROGRAM;
const programs = Array.from({ length: Number(opt.programs) }, (_, i) =>
  makeProgram(home, `soak-${i}`, genv, { ...POLICY, cli: CLI }),
);
const roots = programs.map((p) => p.root);

const t0 = Date.now();
const tally = { samples: 0, ticks: 0, faults: {}, sheepdogKills: 0, recoveries: {} };
const violations = [];
const violate = (what) => {
  const line = `${((Date.now() - t0) / 1000).toFixed(1)} s: ${what}`;
  violations.push(line);
  process.stdout.write(`VIOLATION ${line}\n`);
};
const count = (kind) => {
  tally.faults[kind] = (tally.faults[kind] ?? 0) + 1;
};
let stopping = false;

// ---- the watcher and the timer ----------------------------------------------------------
const watcherLog = openSync(join(home, "watch.log"), "a");
const watcher = { child: null, killedByUs: false };
function startWatcher() {
  const child = spawn(process.execPath, [CLI, "watch", "--all"], {
    env,
    stdio: ["ignore", watcherLog, watcherLog],
  });
  watcher.child = child;
  watcher.killedByUs = false;
  child.on("exit", (code, signal) => {
    if (watcher.child !== child || watcher.killedByUs || stopping) return;
    violate(`the watcher exited by itself (code ${code}, signal ${signal}); restarted`);
    startWatcher();
  });
}

const ticks = new Set();
async function timerLoop() {
  while (!stopping) {
    await sleep(TICK_EVERY_MS - ((Date.now() - t0) % TICK_EVERY_MS));
    if (stopping) break;
    const child = spawn(process.execPath, [CLI, "tick", "--all"], {
      env,
      stdio: ["ignore", "ignore", "pipe"],
    });
    ticks.add(child);
    tally.ticks++;
    let err = "";
    child.stderr.on("data", (d) => {
      err += d;
    });
    // One tick in ten is killed mid-pass, as launchd may.
    const killAt = random() < 0.1 ? 50 + random() * 700 : null;
    const timer =
      killAt === null
        ? null
        : setTimeout(() => {
            if (child.exitCode === null && child.kill("SIGKILL")) {
              tally.sheepdogKills++;
              count("tick killed");
            }
          }, killAt);
    await new Promise((r) => child.on("close", r));
    clearTimeout(timer);
    ticks.delete(child);
    if (err.includes("    at ")) violate(`a tick printed a stack trace: ${err.slice(0, 300)}`);
  }
}

// ---- faults ------------------------------------------------------------------------------
/** The faults waiting for their recovery: root → { kind, t0, oldPid }. */
const pending = new Map();
let limit = null; // { at, resetAt }
const limitWindows = [];

const inLimit = (now) => limitWindows.some((w) => now >= w.at && now <= w.resetAt + GRACE.noHolder);

function healthyHolder(p) {
  const c = claimOf(p.stateDir);
  return c?.alive ? c : null;
}

const LIMITED = " (a limit came meanwhile)";

const MANAGER_FAULTS = {
  kill: (h) => process.kill(h.pid, "SIGKILL"),
  stop: (h) => process.kill(h.pid, "SIGSTOP"),
  silence: (h, p) => writeFileSync(join(p.ctl, `silence-${h.pid}`), ""),
  "hand-over": (h, p) => writeFileSync(join(p.ctl, `hand-over-${h.pid}`), ""),
};

function injectLimit() {
  const resetAt = Date.now() + 4000 + Math.floor(random() * 8000);
  const input = JSON.stringify({
    rate_limits: { five_hour: { used_percentage: 100, resets_at: Math.ceil(resetAt / 1000) } },
    session_id: "soak-statusline",
    model: { display_name: "Opus" },
  });
  const r = spawnSync(process.execPath, [CLI, "statusline"], { env, input, encoding: "utf8" });
  if (r.status !== 0 || r.stdout.split("\n").filter(Boolean).length !== 1)
    violate(`statusline exit ${r.status}: ${r.stdout} ${r.stderr}`);
  limit = { at: Date.now(), resetAt: Math.ceil(resetAt / 1000) * 1000 };
  // A fault still waiting now waits for the reset too: its time is counted apart.
  for (const f of pending.values()) f.kind = f.kind.endsWith(LIMITED) ? f.kind : f.kind + LIMITED;
  limitWindows.push(limit);
  count("limit");
}

async function killWatcher() {
  const child = watcher.child;
  await sleep(random() * 1000); // at a random moment, often mid-pass
  watcher.killedByUs = true;
  if (child.exitCode === null && child.kill("SIGKILL")) {
    tally.sheepdogKills++;
    count("watcher killed");
  }
  await new Promise((r) => (child.exitCode !== null ? r() : child.on("exit", r)));
  startWatcher(); // as systemd's Restart= or launchd's KeepAlive would
}

async function injectOne() {
  if (limit) return; // one thing at a time during a pause: its recovery is timed alone
  const roll = random();
  if (roll < 0.07) return injectLimit();
  if (roll < 0.14) return killWatcher();
  const ready = programs.filter((p) => !pending.has(p.root) && healthyHolder(p));
  if (ready.length === 0) return;
  const p = pick(ready);
  const h = healthyHolder(p);
  const kind = pick(["kill", "kill", "stop", "silence", "hand-over", "hand-over"]);
  MANAGER_FAULTS[kind](h, p);
  pending.set(p.root, { kind, t0: Date.now(), oldPid: h.pid });
  count(kind);
}

async function injectorLoop() {
  await sleep(8000); // the first managers start and claim
  while (!stopping && Date.now() - t0 < MINUTES * 60_000) {
    await injectOne();
    await sleep(1500 + random() * 3500);
  }
}

function recovered(kind, ms) {
  tally.recoveries[kind] ??= [];
  tally.recoveries[kind].push(ms);
}

// ---- invariants --------------------------------------------------------------------------
const since = new Map();
/** How long `key` has been true (0 the first time, reset when it is false). */
function lasting(key, now, cond) {
  if (!cond) {
    since.delete(key);
    return 0;
  }
  if (!since.has(key)) since.set(key, now);
  return now - since.get(key);
}
const reported = new Set();
function once(key, what) {
  if (reported.has(key)) return;
  reported.add(key);
  violate(what);
}

/** Every managers ever seen (pid, start time): all are ended, exactly, at the end. */
const seen = new Map();

function sample() {
  const now = Date.now();
  tally.samples++;
  const live = liveManagers(roots);
  for (const p of programs) {
    const managers = live.get(p.root);
    for (const m of managers) seen.set(m.pid, m.start_time);
    const key = managers
      .map((m) => m.pid)
      .sort()
      .join(",");
    const two = lasting(`two:${p.root}:${key}`, now, managers.length > 1);
    if (two > GRACE.twoManagers)
      once(
        `two:${p.root}:${key}`,
        `${p.name}: ${managers.length} live managers (pids ${key}) for ${two} ms`,
      );
    checkClaim(p, now);
    checkLocks(p, now);
    checkRecovery(p, now);
  }
  if (limit && now > limit.resetAt && programs.every((p) => healthyHolder(p))) {
    recovered("limit", now - limit.resetAt);
    limit = null;
  } else if (limit && now > limit.resetAt + RECOVERY_LIMIT_MS) {
    violate(`the seat's reset passed ${RECOVERY_LIMIT_MS} ms ago and not every program runs`);
    limit = null;
  }
}

function checkClaim(p, now) {
  const c = claimOf(p.stateDir);
  const exempt = inLimit(now);
  const dead = lasting(`dead:${p.root}`, now, !exempt && c !== null && !c.alive);
  if (dead > GRACE.deadClaim)
    once(
      `dead:${p.root}:${c.pid}`,
      `${p.name}: the claim is held by dead pid ${c.pid} for ${dead} ms`,
    );
  const none = lasting(`none:${p.root}`, now, !exempt && c === null);
  if (none > GRACE.noHolder)
    once(`none:${p.root}:${since.get(`none:${p.root}`)}`, `${p.name}: no claim for ${none} ms`);
}

function checkLocks(p, now) {
  const lock = tickLockOf(p.stateDir);
  const dead = lasting(`lock:${p.root}`, now, lock === "dead holder" || lock === "being made");
  if (dead > GRACE.deadLock)
    once(
      `lock:${p.root}:${since.get(`lock:${p.root}`)}`,
      `${p.name}: tick.lock (${lock}) for ${dead} ms`,
    );
  for (const name of AGED_LOCKS) {
    const aged = lasting(`${name}:${p.root}`, now, existsSync(join(p.stateDir, name)));
    if (aged > AGED_LOCK_MS) once(`${name}:${p.root}`, `${p.name}: ${name} stands for ${aged} ms`);
  }
}

function checkRecovery(p, now) {
  const f = pending.get(p.root);
  if (!f) return;
  const h = healthyHolder(p);
  if (h && h.pid !== f.oldPid) {
    recovered(f.kind, now - f.t0);
    pending.delete(p.root);
  } else if (now - f.t0 > RECOVERY_LIMIT_MS && !inLimit(now)) {
    violate(`${p.name}: no new manager ${RECOVERY_LIMIT_MS} ms after ${f.kind} of pid ${f.oldPid}`);
    pending.delete(p.root);
  }
}

/** Journals read whole; torn lines no more than sheepdog processes killed; ledger commits kept. */
function checkJournalsAndLedgers() {
  for (const p of programs) {
    const j = journalOf(p.stateDir);
    for (const g of j.glued)
      once(`glued:${g}`, `${p.name}: two events glued on one line: ${g.slice(0, 200)}`);
    if (j.torn.length > tally.sheepdogKills)
      once(
        `torn:${p.root}:${j.torn.length}`,
        `${p.name}: ${j.torn.length} torn journal lines after ${tally.sheepdogKills} kills`,
      );
    writeFileSync(join(p.ledger, `item-${Math.floor(random() * 1e9)}.md`), "done\n");
    const head = git(p.ledger, ["rev-parse", "-q", "--verify", "HEAD"], genv);
    if (head.code === 0 && head.out) p.shas.add(head.out);
  }
}

/** No manager starts while the seat is paused (between a `paused` event and its end). */
function checkNoStartInPause() {
  for (const p of programs) {
    const events = journalOf(p.stateDir).events;
    const pauses = events.filter((e) => e.type === "paused" && e.until);
    for (const e of events) {
      if (e.type !== "manager_started") continue;
      const at = Date.parse(e.at);
      const during = pauses.find(
        (x) => at > Date.parse(x.at) + 1000 && at < Date.parse(x.until) - 500,
      );
      if (during)
        violate(
          `${p.name}: pid ${e.pid} started at ${e.at}, inside the pause of ${during.at} until ${during.until}`,
        );
    }
  }
}

// ---- run ---------------------------------------------------------------------------------
async function settle() {
  stopping = true;
  const end = Date.now();
  // The timer is stopped: the watcher alone must bring every program back, and every fault
  // still waiting (a silenced manager holds a live claim) must get its recovery or violation.
  const settled = () => pending.size === 0 && !limit && programs.every((p) => healthyHolder(p));
  while (Date.now() < end + RECOVERY_LIMIT_MS && !settled()) await sleep(500);
  for (const p of programs)
    if (!healthyHolder(p))
      violate(`${p.name}: no live manager ${RECOVERY_LIMIT_MS} ms after the faults stopped`);
  checkJournalsAndLedgers();
  const pushEnd = Date.now() + 30_000;
  while (Date.now() < pushEnd && programs.some((p) => unpushed(p, genv).length > 0))
    await sleep(500);
  for (const p of programs) {
    const lost = unpushed(p, genv);
    if (lost.length > 0) violate(`${p.name}: ledger commits not on the remote: ${lost.join(", ")}`);
  }
  checkNoStartInPause();
}

async function cleanup() {
  stopping = true;
  const w = watcher.child;
  if (w && w.exitCode === null) {
    w.kill("SIGTERM");
    const gone = new Promise((r) => w.on("exit", r));
    await Promise.race([gone, sleep(10_000)]);
    if (w.exitCode === null && w.signalCode === null) w.kill("SIGKILL");
  }
  for (const t of ticks) t.kill("SIGKILL");
  for (const [, managers] of liveManagers(roots))
    for (const m of managers) seen.set(m.pid, m.start_time);
  let left = 0;
  for (const [pid, start] of seen) if (killExact(pid, start)) left++;
  if (!opt.keep) rmSync(home, { recursive: true, force: true });
  return left;
}

const fmt = (ms) => `${(ms / 1000).toFixed(1)} s`;
function report(left) {
  const secs = Math.round((Date.now() - t0) / 1000);
  const faults = Object.values(tally.faults).reduce((a, b) => a + b, 0);
  console.log(
    `\nsoak: seed ${SEED}, ${programs.length} programs, ${secs} s, ${tally.samples} invariant rounds (every 0.5 s), ${tally.ticks} timer ticks`,
  );
  console.log(
    `faults injected: ${faults} (${Object.entries(tally.faults)
      .map(([k, n]) => `${k} ${n}`)
      .join(", ")})`,
  );
  console.log("| fault | injected | recovered | median | worst |\n|---|---|---|---|---|");
  const kinds = [...new Set([...Object.keys(tally.faults), ...Object.keys(tally.recoveries)])];
  for (const kind of kinds) {
    const n = tally.faults[kind] ?? "";
    const r = tally.recoveries[kind] ?? [];
    const m = r.length ? fmt(median(r)) : "–";
    const worst = r.length ? fmt(Math.max(...r)) : "–";
    console.log(`| ${kind} | ${n} | ${r.length} | ${m} | ${worst} |`);
  }
  console.log(`managers still running at the end (ended exactly): ${left}`);
  console.log(`violations: ${violations.length}`);
  for (const v of violations) console.log(`  ${v}`);
  if (opt.keep) console.log(`kept: ${home}`);
}

process.on("SIGINT", () => {
  stopping = true;
});

startWatcher();
const loops = [timerLoop(), injectorLoop()];
const sampler = setInterval(sample, 500);
const journals = setInterval(checkJournalsAndLedgers, 2000);
let left = 0;
try {
  await loops[1];
  clearInterval(journals);
  await settle();
} finally {
  clearInterval(sampler);
  clearInterval(journals);
  await loops[0];
  left = await cleanup();
  report(left);
}
process.exit(violations.length > 0 ? 1 : 0);
