// How fast a dead or handed-over manager is replaced: `sheepdog watch` against the timer tick.
// Each trial: kill -9 the holder (or run `hand-over` for it) and time until a new manager holds
// the claim (the new claim is the manager's own, made through the CLI). The timer is emulated
// as systemd runs it: `sheepdog tick` at every multiple of its interval (OnCalendar), with the
// kill at a random moment of the interval. Then: idle CPU and RSS of `watch --all` with 20
// healthy programs. Goals (DESIGN §12): kill → claim ≤ 2 s, hand-over → claim ≤ 3 s,
// idle CPU < 1 % of a core, RSS < 80 MB.
// Run: node bench/recovery.mjs   (BENCH_TRIALS=20, BENCH_TIMER_INTERVAL=5s, BENCH_IDLE_S=30)
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { median } from "./lib.mjs";

const CLI = resolve(process.env.SHEEPDOG_CLI ?? "dist/cli.cjs");
const MANAGER = resolve("test/fixtures/fake-manager.cjs");
const trials = Number(process.env.BENCH_TRIALS) || 20;
const timerS = Number.parseInt(process.env.BENCH_TIMER_INTERVAL ?? "5", 10);
const idleS = Number(process.env.BENCH_IDLE_S) || 30;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const homes = [];
const children = [];

function program(name, interval) {
  const home = realpathSync(mkdtempSync(join(tmpdir(), "sheepdog-bench-recovery-")));
  homes.push(home);
  const root = join(home, name);
  mkdirSync(root);
  writeFileSync(
    join(root, "program.json"),
    JSON.stringify({
      name,
      manager: {
        launcher: "command",
        command: [process.execPath, MANAGER, "--save-every", "3600", "{prompt}"],
        env: { SHEEPDOG_CLI: CLI },
      },
      // every kill is an unplanned start: the crash-loop guard must not end the bench
      watchdog: {
        interval,
        stale_after: "1h",
        claim_grace: "1h",
        crash_loop: { starts: 10000, within: "1h" },
      },
    }),
  );
  const env = {
    ...process.env,
    SHEEPDOG_HOME: home,
    SHEEPDOG_STATE_DIR: join(home, ".state"),
    SHEEPDOG_PROGRAM: root,
  };
  return { root, env, stateDir: join(root, ".sheepdog") };
}

function holderOf(stateDir) {
  try {
    return JSON.parse(readFileSync(join(stateDir, "claim", "holder.json"), "utf8"));
  } catch {
    return null;
  }
}

function alive(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return !/^\S+ \(.*\) [ZX] /.test(stat);
  } catch {
    return false;
  }
}

async function newClaim(stateDir, not, ms = 120_000) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    const h = holderOf(stateDir);
    if (h && h.pid !== not && alive(h.pid)) return h;
    await sleep(5);
  }
  throw new Error("no new claim");
}

/** One trial: do `what` to the holder, return ms until another manager holds the claim. */
async function trial(p, what) {
  const h = await newClaim(p.stateDir, undefined);
  await sleep(300 + Math.random() * 200); // settle: the watcher has seen this holder
  const t0 = performance.now();
  if (what === "kill") process.kill(h.pid, "SIGKILL");
  else {
    const r = spawnSync(
      process.execPath,
      [CLI, "hand-over", "--pid", String(h.pid), "--note", "bench"],
      { env: p.env },
    );
    if (r.status !== 0) throw new Error(`hand-over: ${r.stderr}`);
  }
  await newClaim(p.stateDir, h.pid);
  return performance.now() - t0;
}

/** The timer as systemd runs it: a tick at every multiple of the interval. */
function timer(p, intervalMs) {
  let stop = false;
  const loop = async () => {
    while (!stop) {
      await sleep(intervalMs - (Date.now() % intervalMs));
      if (stop) break;
      await new Promise((r) =>
        spawn(process.execPath, [CLI, "tick"], { env: p.env, stdio: "ignore" }).on("close", r),
      );
    }
  };
  void loop();
  return () => {
    stop = true;
  };
}

async function series(label, p, intervalMs) {
  const rows = [];
  for (const what of ["kill", "hand-over"]) {
    const times = [];
    for (let i = 0; i < trials; i++) {
      // the kill lands at a random moment of the timer's interval
      if (intervalMs) await sleep(Math.random() * intervalMs);
      times.push(await trial(p, what));
    }
    rows.push({ label, what, median: median(times), worst: Math.max(...times) });
  }
  return rows;
}

function killStarted(stateDir) {
  for (const line of readFileSync(join(stateDir, "journal.jsonl"), "utf8").split("\n")) {
    try {
      const e = JSON.parse(line);
      if (e.type === "manager_started" && e.pid && alive(e.pid)) process.kill(e.pid, "SIGKILL");
    } catch {}
  }
}

function cpuTicks(pid) {
  const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return Number(f[11]) + Number(f[12]); // utime + stime (fields 14, 15)
}
const rssMb = (pid) =>
  Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))[1]) / 1024;

async function idle() {
  const home = realpathSync(mkdtempSync(join(tmpdir(), "sheepdog-bench-idle-")));
  homes.push(home);
  const env = { ...process.env, SHEEPDOG_HOME: home, SHEEPDOG_STATE_DIR: join(home, ".state") };
  const holder = spawn(process.execPath, ["-e", "setTimeout(() => {}, 3600e3)"], {
    stdio: "ignore",
  });
  children.push(holder);
  for (let i = 0; i < 20; i++) {
    const root = join(home, `p${String(i).padStart(2, "0")}`);
    mkdirSync(root);
    writeFileSync(
      join(root, "program.json"),
      JSON.stringify({ name: `p${i}`, manager: { command: ["true"] } }),
    );
    spawnSync(
      process.execPath,
      [CLI, "claim", "acquire", "--pid", String(holder.pid), "--program", root],
      { env },
    );
    spawnSync(process.execPath, [CLI, "save", "--pid", String(holder.pid), "--program", root], {
      env,
    });
  }
  const w = spawn(process.execPath, [CLI, "watch", "--all"], { env, stdio: "ignore" });
  children.push(w);
  await sleep(15_000); // the first passes of all 20 are done, start-up garbage collected
  const t0 = cpuTicks(w.pid);
  await sleep(idleS * 1000);
  const cpu = ((cpuTicks(w.pid) - t0) / 100 / idleS) * 100; // CLK_TCK 100
  const rss = rssMb(w.pid);
  w.kill("SIGTERM");
  return { cpu, rss };
}

const fmt = (ms) => (ms >= 10_000 ? `${(ms / 1000).toFixed(1)} s` : `${(ms / 1000).toFixed(2)} s`);
try {
  const rows = [];
  {
    const p = program("watched", "1h");
    const w = spawn(process.execPath, [CLI, "watch", "--program", p.root], {
      env: p.env,
      stdio: "ignore",
    });
    children.push(w);
    rows.push(...(await series("watch", p, 0)));
    w.kill("SIGTERM");
    await new Promise((r) => w.on("close", r));
    killStarted(p.stateDir);
  }
  {
    const p = program("timed", `${timerS}s`);
    const stop = timer(p, timerS * 1000);
    rows.push(...(await series(`timer tick (every ${timerS} s)`, p, timerS * 1000)));
    stop();
    await sleep(1000);
    killStarted(p.stateDir);
  }
  const { cpu, rss } = await idle();
  console.log(
    `\nrecovery: ${trials} trials each, time from kill -9 / hand-over to the new manager's claim`,
  );
  console.log(
    "| mode | kill -9 → new claim (median / worst) | hand-over → new claim (median / worst) |",
  );
  console.log("|---|---|---|");
  for (const label of [...new Set(rows.map((r) => r.label))]) {
    const k = rows.find((r) => r.label === label && r.what === "kill");
    const h = rows.find((r) => r.label === label && r.what === "hand-over");
    console.log(
      `| ${label} | ${fmt(k.median)} / ${fmt(k.worst)} | ${fmt(h.median)} / ${fmt(h.worst)} |`,
    );
  }
  console.log(
    `\nidle watch --all with 20 healthy programs over ${idleS} s: CPU ${cpu.toFixed(2)} % of a core, RSS ${rss.toFixed(1)} MB`,
  );
  console.log("goals: kill ≤ 2 s, hand-over ≤ 3 s, idle CPU < 1 %, RSS < 80 MB");
} finally {
  for (const c of children) if (c.exitCode === null) c.kill("SIGKILL");
  for (const h of homes) rmSync(h, { recursive: true, force: true });
}
