// Soak (issue 14): several programs under `sheepdog watch --all` AND a timer running
// `sheepdog tick --all` every few seconds, for N minutes, while a seeded PRNG kills managers
// (-9), stops them (SIGSTOP: stuck), silences them (no more saves), makes them hand over, puts
// the seat at a usage limit with a reset a few seconds ahead, and kills the watcher and timer
// ticks mid-pass. Beside them, --activity programs run the toy manager that writes Claude
// Code's transcripts and hook records (bench/activity-manager.cjs) with a short quiet_after,
// told now and then to go idle or wedge (each must be replaced, restart_idle / restart_wedged,
// well before stale_after) or to be busy but quiet for a while: a long Bash call, a sub-agent,
// a background task, an API retry (each must be left alone: a restart of one is a false
// restart, a violation). It checks the invariants all along and reports every violation (exit
// 1 if any) and the recovery times per fault kind. Not part of `npm test`.
//   node bench/soak.mjs [--minutes 10] [--programs 4] [--activity 3] [--seed S] [--tick-every 3]
//                       [--keep]
//   node bench/soak.mjs --hosts 2 [--minutes 10] [--seed S]   (two-host mode: the lease)
//   npm run soak -- --minutes 1
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, openSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { median } from "./lib.mjs";
import {
  ACTIVITY_KINDS,
  AGED_LOCKS,
  claimOf,
  git,
  gitEnv,
  journalOf,
  killExact,
  killProgramProcesses,
  liveManagers,
  makeProgram,
  privateBuild,
  prng,
  readJson,
  tickLockOf,
  toyEvents,
  unpushed,
} from "./soak-world.mjs";

const { values: opt } = parseArgs({
  options: {
    minutes: { type: "string", default: "10" },
    programs: { type: "string", default: "4" },
    activity: { type: "string", default: "3" },
    seed: { type: "string" },
    "tick-every": { type: "string", default: "3" },
    keep: { type: "boolean", default: false },
    hosts: { type: "string" },
  },
});
// The two-host mode (issue 21): one program staged on simulated hosts of their own (mount
// namespaces, root only), their power and network cut at random; it lives with the tests'
// host harness (test/soak/hosts.soak.ts), so it runs under vitest.
if (opt.hosts !== undefined) {
  const r = spawnSync("npx", ["vitest", "run", "--config", "test/soak/vitest.config.ts"], {
    stdio: "inherit",
    env: {
      ...process.env,
      SOAK_HOSTS: opt.hosts,
      SOAK_MINUTES: opt.minutes,
      ...(opt.seed ? { SOAK_SEED: opt.seed } : {}),
    },
  });
  process.exit(r.status ?? 1);
}
const MINUTES = Number(opt.minutes);
const SEED = Number(opt.seed) || Date.now() % 2 ** 31;
const TICK_EVERY_MS = Number(opt["tick-every"]) * 1000;
const random = prng(SEED);
const POLICY = { saveEvery: 1, interval: "5s", staleAfter: "8s", claimGrace: "10s" };
/**
 * The activity programs': quiet_after well under stale_after, so an idle or wedged manager is
 * replaced in about quiet_after + one interval, and a busy one has room to be quiet for
 * `busyFor` seconds (over twice quiet_after) before it saves again.
 */
const ACTIVITY_POLICY = {
  saveEvery: 1,
  interval: "2s",
  staleAfter: "25s",
  claimGrace: "10s",
  activity: { quietAfter: "5s", nudgeWait: "2s", busyFor: 12 },
};
const ACTIVITY_STALE_MS = 25_000;
const BUSY = ACTIVITY_KINDS.filter((k) => k.startsWith("busy-"));
/** The restart an activity fault calls for (the busy ones call for none). */
const EXPECTED = { idle: "restart_idle", wedged: "restart_wedged" };
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
const programs = [
  ...Array.from({ length: Number(opt.programs) }, (_, i) =>
    makeProgram(home, `soak-${i}`, genv, { ...POLICY, cli: CLI }),
  ),
  ...Array.from({ length: Number(opt.activity) }, (_, i) =>
    makeProgram(home, `soak-activity-${i}`, genv, { ...ACTIVITY_POLICY, cli: CLI }),
  ),
];
const roots = programs.map((p) => p.root);

const t0 = Date.now();
const tally = {
  samples: 0,
  ticks: 0,
  faults: {},
  sheepdogKills: 0,
  recoveries: {},
  activity: {},
  falseRestarts: 0,
};
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
/** Every activity fault by the pid it was injected into: pid → the pending entry. */
const faulted = new Map();
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
  if (p.activity) return injectActivity(p, h);
  const kind = pick(["kill", "kill", "stop", "silence", "hand-over", "hand-over"]);
  MANAGER_FAULTS[kind](h, p);
  pending.set(p.root, { kind, t0: Date.now(), oldPid: h.pid });
  count(kind);
}

/** The toy manager is told to go `kind` at its next save; its own log says when it did. */
function injectActivity(p, h) {
  // the kind told least often so far (the PRNG breaks ties): every kind comes up in a short run
  const fewest = Math.min(...ACTIVITY_KINDS.map((k) => activityTally(k).injected));
  const kind = pick(ACTIVITY_KINDS.filter((k) => activityTally(k).injected === fewest));
  writeFileSync(join(p.ctl, `${kind}-${h.pid}`), "");
  const f = { kind, base: kind, t0: Date.now(), oldPid: h.pid, activity: true };
  pending.set(p.root, f);
  faulted.set(h.pid, f);
  count(kind);
  activityTally(kind).injected++;
}

function activityTally(kind) {
  tally.activity[kind] ??= {
    injected: 0,
    replaced: [],
    trials: [],
    back: [],
    other: 0,
    decisions: {},
  };
  return tally.activity[kind];
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
  const dead = lasting(`lock:${p.root}`, now, lock === "dead holder" || lock === "unreadable");
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
  if (f.activity) return checkActivity(p, f, now);
  const h = healthyHolder(p);
  if (h && h.pid !== f.oldPid) {
    recovered(f.kind, now - f.t0);
    pending.delete(p.root);
  } else if (now - f.t0 > RECOVERY_LIMIT_MS && !inLimit(now)) {
    violate(`${p.name}: no new manager ${RECOVERY_LIMIT_MS} ms after ${f.kind} of pid ${f.oldPid}`);
    pending.delete(p.root);
  }
}

const ms = (iso) => Date.parse(iso);
/** The toy's own `went` and `resumed` for this pid and kind (its spell's true start and end). */
function spellOf(p, pid, kind) {
  const events = toyEvents(p.ctl).filter((e) => e.pid === pid && e.kind === kind);
  return {
    went: events.find((e) => e.phase === "went") ?? null,
    back: events.find((e) => e.phase === "resumed") ?? null,
  };
}

/**
 * An idle or wedged manager is over when another holds the claim (timed from its spell's start
 * to that claim); a busy one when it saved again, itself. Whether a restart was the right one
 * is checkRestarts' (from the journal).
 */
function checkActivity(p, f, now) {
  const a = activityTally(f.base);
  const h = healthyHolder(p);
  const { went, back } = spellOf(p, f.oldPid, f.base);
  if (BUSY.includes(f.base) && back && h?.pid === f.oldPid) {
    a.back.push(ms(back.at) - (went ? ms(went.at) : f.t0));
    pending.delete(p.root);
    return;
  }
  if (h && h.pid !== f.oldPid) {
    // a busy one replaced: a pause told it to stop, or a restart (checkRestarts judges which)
    if (BUSY.includes(f.base)) a.other++;
    else {
      const holder = readJson(join(p.stateDir, "claim", "holder.json"));
      const claimed = holder?.pid === h.pid && holder.claimed_at ? ms(holder.claimed_at) : now;
      const from = went ? ms(went.at) : f.t0;
      a.replaced.push(claimed - from);
      // when the pass that restarted it acted (its restart_* event), for the report
      const restart = journalOf(p.stateDir).events.find(
        (e) => /^restart_/.test(e.type) && e.pid === f.oldPid,
      );
      const s = (x) => ((x - from) / 1000).toFixed(1);
      a.trials.push(
        `${restart ? `${restart.type} ${s(ms(restart.at))} → ` : ""}claim ${s(claimed)}${f.kind.endsWith(LIMITED) ? LIMITED : ""}`,
      );
    }
    pending.delete(p.root);
    return;
  }
  if (now - f.t0 > RECOVERY_LIMIT_MS && !inLimit(now)) {
    violate(
      `${p.name}: pid ${f.oldPid} told to go ${f.base} ${RECOVERY_LIMIT_MS} ms ago: ${BUSY.includes(f.base) ? "it neither came back nor was replaced" : "no new manager"}`,
    );
    pending.delete(p.root);
  }
}

/**
 * Every restart of an activity program's live manager, from its journal: an idle one must be
 * `restart_idle`, a wedged one `restart_wedged` (a `restart_stuck` means the verdict missed it
 * and stale_after caught it); a busy-but-quiet one, or one told nothing, must not be restarted
 * before stale_after at all (a false restart). A pause's planned stop is not judged here.
 */
const judged = new Set();
function checkRestarts() {
  for (const p of programs) {
    if (!p.activity) continue;
    for (const e of journalOf(p.stateDir).events) {
      if (e.type !== "manager_stopped" || !/^restart_(idle|wedged|stuck)$/.test(e.decision ?? ""))
        continue;
      const key = `${p.root}:${e.at}:${e.pid}`;
      if (judged.has(key) || e.planned) continue;
      judged.add(key);
      const f = faulted.get(e.pid);
      if (f) {
        const d = activityTally(f.base).decisions;
        d[e.decision] = (d[e.decision] ?? 0) + 1;
      }
      const want = f ? EXPECTED[f.base] : undefined;
      if (want) {
        if (e.decision !== want && !f.kind.endsWith(LIMITED))
          violate(
            `${p.name}: pid ${e.pid} went ${f.base} and was stopped by ${e.decision}, not ${want}: ${e.reason}`,
          );
        continue;
      }
      const went = f ? spellOf(p, e.pid, f.base).went : null;
      const quiet = went ? ms(e.at) - ms(went.at) : null;
      const what = f
        ? `${f.base}, ${quiet === null ? "before its spell" : `${quiet} ms into its quiet spell`}`
        : "told nothing";
      if (quiet !== null && quiet >= ACTIVITY_STALE_MS)
        violate(
          `${p.name}: pid ${e.pid} (${what}) did not save again within stale_after: ${e.reason}`,
        );
      else {
        tally.falseRestarts++;
        violate(`${p.name}: false restart: ${e.decision} of pid ${e.pid} (${what}): ${e.reason}`);
      }
    }
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
  checkRestarts();
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
  // what the managers left: the toy managers' tool shells, a save in flight
  tally.shells = killProgramProcesses(roots, new Set(seen.keys()));
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
  const kinds = [
    ...new Set([...Object.keys(tally.faults), ...Object.keys(tally.recoveries)]),
  ].filter((k) => !ACTIVITY_KINDS.includes(k));
  for (const kind of kinds) {
    const n = tally.faults[kind] ?? "";
    const r = tally.recoveries[kind] ?? [];
    const m = r.length ? fmt(median(r)) : "–";
    const worst = r.length ? fmt(Math.max(...r)) : "–";
    console.log(`| ${kind} | ${n} | ${r.length} | ${m} | ${worst} |`);
  }
  if (programs.some((p) => p.activity)) {
    const { quietAfter, nudgeWait, busyFor } = ACTIVITY_POLICY.activity;
    console.log(
      `activity programs: quiet_after ${quietAfter}, nudge_wait ${nudgeWait}, stale_after ${ACTIVITY_POLICY.staleAfter}, interval ${ACTIVITY_POLICY.interval}; busy spells ${busyFor} s`,
    );
    console.log(
      "| activity fault | injected | replaced | came back by itself | ended otherwise | spell → new claim (median / worst) | stops |\n|---|---|---|---|---|---|---|",
    );
    for (const kind of ACTIVITY_KINDS) {
      const a = tally.activity[kind];
      if (!a) continue;
      const r = a.replaced;
      const times = r.length ? `${fmt(median(r))} / ${fmt(Math.max(...r))}` : "–";
      const stops = Object.entries(a.decisions)
        .map(([d, n]) => `${d} ${n}`)
        .join(", ");
      console.log(
        `| ${kind} | ${a.injected} | ${r.length} | ${a.back.length} | ${a.other} | ${times} | ${stops || "–"} |`,
      );
    }
    for (const kind of Object.keys(EXPECTED)) {
      const trials = tally.activity[kind]?.trials ?? [];
      if (trials.length) console.log(`  ${kind} (s from its spell's start): ${trials.join("; ")}`);
    }
    console.log(
      `false restarts (a busy-but-quiet or untold manager restarted): ${tally.falseRestarts}`,
    );
  }
  console.log(
    `managers still running at the end (ended exactly): ${left}${tally.shells ? `; their tool shells and CLI runs: ${tally.shells}` : ""}`,
  );
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
