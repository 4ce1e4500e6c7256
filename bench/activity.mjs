// How soon an idle or wedged manager is replaced, and that a busy but quiet one is not (DESIGN
// §14, issue 20): toy managers (bench/activity-manager.cjs) that write what Claude Code 2.1.328
// writes, under one `sheepdog watch --all`, at the default settings scaled from minutes to
// seconds (quiet_after 10m → 10 s, nudge_wait 3m → 3 s, stale_after 45m → 45 s, interval 5m →
// 5 s). Each idle or wedged manager is timed from the moment it went quiet (its turn's end; the
// wedged call's start) to its successor's own claim, and the time is given as a ratio to the
// issue's bound, quiet_after + nudge_wait + one interval. Beside them the four busy-but-quiet
// kinds (a long Bash call, a sub-agent, a background task, an API retry) go quiet for 30 s, and
// come back, for the whole run: any restart of theirs is a false restart.
// Run: node bench/activity.mjs   (about 4 minutes; BENCH_TRIALS=8, BENCH_SCALE=1 s per default
// minute, BENCH_KEEP=1 keeps its folder; exit 1 on a false restart or an unfinished trial)
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { jsonLines, median } from "./lib.mjs";
import { killProgramProcesses, toyEvents } from "./soak-world.mjs";

const CLI = resolve(process.env.SHEEPDOG_CLI ?? "dist/cli.cjs");
const TOY = resolve("bench/activity-manager.cjs");
const trials = Number(process.env.BENCH_TRIALS) || 8;
const scale = Number(process.env.BENCH_SCALE) || 1;
const S = {
  quiet: 10 * scale,
  nudge: 3 * scale,
  stale: 45 * scale,
  interval: 5 * scale,
  busy: 30 * scale,
  wedgeTimeoutMs: 1000 * scale,
};
const BOUND_MS = (S.quiet + S.nudge + S.interval) * 1000;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const socket = `sheepdog-bench-activity-${process.pid}`;

const KINDS = [
  { name: "idle", auto: "idle", timed: true, what: "idle, `command` launcher (no pane)" },
  {
    name: "idle-tmux",
    auto: "idle",
    timed: true,
    launcher: "tmux",
    what: "idle, tmux launcher (nudged first)",
  },
  {
    name: "wedged",
    auto: "wedged",
    timed: true,
    what: `wedged (Bash \`timeout\` ${S.wedgeTimeoutMs / 1000} s, SIGSTOP)`,
  },
  { name: "busy-bash", auto: "busy-bash", what: "a Bash call within its timeout" },
  { name: "busy-subagent", auto: "busy-subagent", what: "a sub-agent writing, main turn ended" },
  { name: "busy-background", auto: "busy-background", what: "a background task it waits on" },
  { name: "busy-retry", auto: "busy-retry", what: "one API request retried, then answered" },
];

const home = realpathSync(mkdtempSync(join(tmpdir(), "sheepdog-bench-activity-")));
const env = {
  ...process.env,
  SHEEPDOG_HOME: home,
  SHEEPDOG_STATE_DIR: join(home, ".state"),
  CLAUDE_CONFIG_DIR: join(home, "seat"),
  SHEEPDOG_TMUX_SOCKET: socket,
};
delete env.SHEEPDOG_PROGRAM;
delete env.TMUX;
delete env.TMUX_PANE;

function program(k) {
  const root = join(home, k.name);
  const ctl = join(home, "ctl", k.name);
  mkdirSync(root, { recursive: true });
  mkdirSync(ctl, { recursive: true });
  const argv = [
    process.execPath,
    TOY,
    "--auto",
    k.auto,
    "--ctl",
    ctl,
    "--warm",
    `1,${1 + S.interval}`, // each spell begins at a random moment of the interval
    "--busy-for",
    String(S.busy),
    "--grow-every",
    String(2 * scale),
    "--retry-every",
    String(2 * scale),
    "--wedge-timeout",
    String(S.wedgeTimeoutMs),
    "{prompt}",
  ];
  const launcher = k.launcher ?? "command";
  writeFileSync(
    join(root, "program.json"),
    JSON.stringify({
      name: k.name,
      manager: {
        launcher,
        ...(launcher === "tmux" ? { tmux: { command: argv } } : { command: argv }),
        env: {
          SHEEPDOG_CLI: CLI,
          CLAUDE_CONFIG_DIR: env.CLAUDE_CONFIG_DIR,
          SHEEPDOG_STATE_DIR: env.SHEEPDOG_STATE_DIR,
        },
      },
      watchdog: {
        interval: `${S.interval}s`,
        quiet_after: `${S.quiet}s`,
        nudge_wait: `${S.nudge}s`,
        stale_after: `${S.stale}s`,
        claim_grace: `${10 * scale}s`,
        // every restart is an unplanned start: the crash-loop guard must not end the bench
        crash_loop: { starts: 10000, within: "1h" },
      },
    }),
  );
  return { ...k, root, ctl, stateDir: join(root, ".sheepdog"), read: 0, spells: [], done: [] };
}

function readJson(path) {
  try {
    return JSON.parse(readFileSync(path, "utf8"));
  } catch {
    return null;
  }
}
function alive(pid) {
  try {
    return !/^\S+ \(.*\) [ZX] /.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}
const journal = (p) => jsonLines(join(p.stateDir, "journal.jsonl"));
const ms = (iso) => Date.parse(iso);

/** New spells from the toys' own log; a timed one is done once another manager claims. */
function poll(p) {
  const events = toyEvents(p.ctl);
  for (const e of events.slice(p.read)) {
    if (e.phase === "went") p.spells.push({ pid: e.pid, at: e.at, verdicts: {} });
    else {
      const s = p.spells.findLast((x) => x.pid === e.pid);
      if (s) s.resumed = e.at;
    }
  }
  p.read = events.length;
  const spell = p.spells.at(-1);
  if (!spell || spell.claimedBy) return;
  // The verdict of each pass that judged this spell (a pass rewrites last-tick.json).
  const tick = readJson(join(p.stateDir, "last-tick.json"));
  const a = tick?.facts?.activity;
  if (a && tick.facts.claim?.pid === spell.pid && ms(tick.at) >= ms(spell.at) && !spell.resumed) {
    spell.ticks ??= new Set();
    if (!spell.ticks.has(tick.at)) {
      spell.ticks.add(tick.at);
      spell.verdicts[a.verdict] = (spell.verdicts[a.verdict] ?? 0) + 1;
    }
  }
  const h = readJson(join(p.stateDir, "claim", "holder.json"));
  if (p.timed && h && h.pid !== spell.pid && alive(h.pid)) {
    spell.claimedBy = h.pid;
    const j = journal(p);
    const after = (type) => {
      const e = j.find((x) => x.type === type && x.pid === spell.pid);
      return e ? ms(e.at) - ms(spell.at) : null;
    };
    const stopped = j.find((e) => e.type === "manager_stopped" && e.pid === spell.pid);
    p.done.push({
      nudged: after("nudged"),
      decided: after("restart_idle") ?? after("restart_wedged"),
      stop: after("manager_stopped"),
      claim: ms(h.claimed_at) - ms(spell.at),
      decision: stopped?.decision ?? "?",
    });
  }
}

const programs = KINDS.map(program);
const watcher = spawn(process.execPath, [CLI, "watch", "--all"], {
  env,
  stdio: ["ignore", "ignore", "pipe"],
});
let watchErr = "";
watcher.stderr.on("data", (d) => {
  watchErr += d;
});
const t0 = Date.now();
const deadline = t0 + trials * (BOUND_MS + 12_000 * scale) * 2 + 60_000;
try {
  const timed = programs.filter((p) => p.timed);
  while (Date.now() < deadline && timed.some((p) => p.done.length < trials)) {
    for (const p of programs) poll(p);
    await sleep(100);
  }
  for (const p of programs) poll(p);
} finally {
  watcher.kill("SIGTERM");
  await Promise.race([new Promise((r) => watcher.on("close", r)), sleep(15_000)]);
  killProgramProcesses(programs.map((p) => p.root)); // the managers and their tool shells
  spawnSync("tmux", ["-L", socket, "kill-server"], { stdio: "ignore" });
  const tmuxDir = join(process.env.TMUX_TMPDIR || "/tmp", `tmux-${process.getuid()}`);
  rmSync(join(tmuxDir, socket), { force: true }); // the server may leave its socket behind
}

const sec = (x) => (x === null || x === undefined ? "–" : `${(x / 1000).toFixed(1)} s`);
const ratio = (x) => `${(x / BOUND_MS).toFixed(2)}`;
const elapsed = Math.round((Date.now() - t0) / 1000);
console.log(
  `\nactivity: ${elapsed} s under one \`watch --all\`; quiet_after ${S.quiet} s, nudge_wait ${S.nudge} s, stale_after ${S.stale} s, interval ${S.interval} s (the defaults at ${scale} s a minute); bound = quiet_after + nudge_wait + one interval = ${BOUND_MS / 1000} s`,
);
console.log(
  "from the spell's start (the turn's end; the wedged call's start) to each journal event, median / worst: `nudged` (written once the line is typed), the restart's own event (written as the pass acts), `manager_stopped`, and the successor's claim",
);
console.log(
  "| manager | trials | decision | nudged | restart decided | stopped | new claim | new claim ÷ bound |",
);
console.log("|---|---|---|---|---|---|---|---|");
const mw = (xs) => {
  const v = xs.filter((x) => x !== null && x !== undefined);
  return v.length ? `${sec(median(v))} / ${sec(Math.max(...v))}` : "–";
};
for (const p of programs.filter((x) => x.timed)) {
  const d = p.done;
  const claims = d.map((x) => x.claim);
  const decisions = [...new Set(d.map((x) => x.decision))].join(", ");
  console.log(
    `| ${p.what} | ${d.length} | ${decisions || "–"} | ${mw(d.map((x) => x.nudged))} | ${mw(d.map((x) => x.decided))} | ${mw(d.map((x) => x.stop))} | ${mw(claims)} | ${claims.length ? `${ratio(median(claims))} / ${ratio(Math.max(...claims))}` : "–"} |`,
  );
}
console.log("each trial (s: nudged → restart decided → new claim):");
for (const p of programs.filter((x) => x.timed)) {
  const one = (x) =>
    [x.nudged, x.decided, x.claim]
      .filter((v) => v !== null && v !== undefined)
      .map((v) => (v / 1000).toFixed(1))
      .join(" → ");
  console.log(`  ${p.name}: ${p.done.map(one).join(", ")}`);
}
console.log(`\nbusy but quiet for ${S.busy} s a spell (stale_after ${S.stale} s):`);
console.log(
  "| manager | spells | came back | verdicts seen in its spells (sampled from last-tick.json) | false restarts |",
);
console.log("|---|---|---|---|---|");
let falseRestarts = 0;
for (const p of programs.filter((x) => !x.timed)) {
  const restarts = journal(p).filter(
    (e) => e.type === "manager_stopped" && /^restart_/.test(e.decision ?? ""),
  );
  falseRestarts += restarts.length;
  const verdicts = {};
  for (const s of p.spells)
    for (const [v, n] of Object.entries(s.verdicts)) verdicts[v] = (verdicts[v] ?? 0) + n;
  const seen = Object.entries(verdicts)
    .map(([v, n]) => `${v} ×${n}`)
    .join(", ");
  console.log(
    `| ${p.what} | ${p.spells.length} | ${p.spells.filter((s) => s.resumed).length} | ${seen || "–"} | ${restarts.length}${restarts.length ? ` (${restarts.map((e) => `${e.decision} of pid ${e.pid}: ${e.reason}`).join("; ")})` : ""} |`,
  );
}
console.log(`false restarts: ${falseRestarts}`);
const short = programs.filter((p) => p.timed && p.done.length < trials);
if (short.length) {
  console.log(`not every trial finished: ${short.map((p) => `${p.name} ${p.done.length}`)}`);
  process.exitCode = 1;
}
if (falseRestarts > 0) process.exitCode = 1;
if (/\n\s+at /.test(watchErr)) console.log(`the watcher printed a stack trace:\n${watchErr}`);
if (!process.env.BENCH_KEEP) rmSync(home, { recursive: true, force: true });
else console.log(`kept: ${home}`);
