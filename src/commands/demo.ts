import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { EXIT, RuntimeFailure } from "../errors.js";
import { readEvents } from "../journal/journal.js";
import { livenessOf, machineId } from "../process/identity.js";
import { stopProcess } from "../process/stop.js";
import { parseCommandArgs } from "../util/args.js";

// `sheepdog demo`: a real watchdog supervising a real toy manager, with time compressed.
// Every tick is a real `sheepdog tick` process; the toy manager is a real process that claims,
// saves and hands over through the real CLI. Thresholds are seconds instead of minutes.

const cliPath = fileURLToPath(new URL("../cli.cjs", import.meta.url));
// Beside dist/ in the package; from the working directory when the CLI was built elsewhere.
const toyPath =
  [
    fileURLToPath(new URL("../../demo/toy-manager.mjs", import.meta.url)),
    join(process.cwd(), "demo", "toy-manager.mjs"),
  ].find((p) => existsSync(p)) ??
  fileURLToPath(new URL("../../demo/toy-manager.mjs", import.meta.url));

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface TickRow {
  decision: string;
  reason: string;
}

type Holder = { pid: number };

/** What every scene uses: the throw-away program, its CLI, and ways to wait on it. */
interface Stage {
  /** The throw-away $SHEEPDOG_HOME, removed at the end unless `--keep`. */
  home: string;
  root: string;
  stateDir: string;
  env: NodeJS.ProcessEnv;
  say: (text: string) => void;
  cli: (...args: string[]) => { status: number | null; stdout: string; stderr: string };
  writeConfig: (tokensPerSave: number) => void;
  tick: () => TickRow;
  tickUntil: (decision: string | string[], maxTicks?: number, gapMs?: number) => Promise<TickRow>;
  holder: () => Holder | null;
  waitFor: <T>(what: string, probe: () => T | null | undefined | false, ms?: number) => Promise<T>;
  events: () => ReturnType<typeof readEvents>;
}

export async function run(argv: string[]): Promise<number> {
  const { values } = parseCommandArgs("demo", argv);
  if (!existsSync(toyPath)) throw new RuntimeFailure(`the toy manager is missing: ${toyPath}`);
  const s = setUpStage(values.quiet === true);
  s.say(`a throw-away program in ${s.root}`);
  s.say(
    "thresholds compressed: stale after 4s, claim grace 5s, crash loop = 3 unplanned starts in 5m",
  );
  let watcher: ChildProcess | null = null;
  let leftOver: number[] = [];
  try {
    await sceneFirstStart(s);
    await sceneQuietSave(s);
    const second = await sceneHandOver(s);
    const third = await sceneKillDead(s, second);
    const fourth = await sceneWedged(s, third);
    await sceneCrashLoop(s, fourth);
    const last = await sceneResume(s);
    watcher = await watchScenes(s, last.pid);
  } catch (err) {
    // A demo that failed keeps its folder: what it shows is why.
    process.stderr.write(
      `demo: the throw-away program is kept in ${s.home} (its journal says what happened)\n`,
    );
    throw err;
  } finally {
    leftOver = await stopEverything(s, watcher);
  }
  if (leftOver.length > 0)
    throw new RuntimeFailure(`demo: managers still running: ${leftOver.join(", ")}`);
  s.say("done: every manager the demo started has stopped");
  printReport(s, values.keep === true);
  // Nothing is left behind unless asked (`--keep`): the folder was the demo's alone.
  if (!values.keep) rmSync(s.home, { recursive: true, force: true });
  return EXIT.ok;
}

/** A fresh SHEEPDOG_HOME with an initialised toy program, and the helpers the scenes share. */
function setUpStage(quiet: boolean): Stage {
  const t0 = Date.now();
  const home = realpathSync(mkdtempSync(join(tmpdir(), "sheepdog-demo-")));
  const root = join(home, "demo");
  const stateDir = join(root, ".sheepdog");
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    SHEEPDOG_HOME: home,
    SHEEPDOG_STATE_DIR: join(home, ".state"),
    SHEEPDOG_CLI: cliPath,
  };
  delete env.SHEEPDOG_PROGRAM;
  const say = (text: string) => {
    if (!quiet)
      process.stdout.write(`[t+${((Date.now() - t0) / 1000).toFixed(1).padStart(5)}s] ${text}\n`);
  };
  const cli = (...args: string[]) =>
    spawnSync(process.execPath, [cliPath, ...args, "--program", root], { env, encoding: "utf8" });
  const init = spawnSync(process.execPath, [cliPath, "init", root, "--name", "demo"], {
    env,
    encoding: "utf8",
  });
  if (init.status !== 0) throw new RuntimeFailure(`sheepdog init failed: ${init.stderr}`);
  const writeConfig = (tokensPerSave: number) => writeDemoConfig(root, tokensPerSave);
  writeConfig(40_000);
  const tick = (): TickRow => {
    const r = cli("tick", "--json");
    if (r.status !== 0) throw new RuntimeFailure(`sheepdog tick exited ${r.status}: ${r.stderr}`);
    const row = JSON.parse(r.stdout).programs[0] as TickRow;
    say(`tick → ${row.decision.padEnd(22)} ${row.reason}`);
    return row;
  };
  const tickUntil = async (decision: string | string[], maxTicks = 20, gapMs = 1000) => {
    const wanted = Array.isArray(decision) ? decision : [decision];
    for (let i = 0; i < maxTicks; i++) {
      const row = tick();
      if (wanted.includes(row.decision)) return row;
      await sleep(gapMs);
    }
    throw new RuntimeFailure(`demo: the watchdog never decided ${decision}`);
  };
  const holder = (): Holder | null => {
    const show = JSON.parse(cli("claim", "show", "--json").stdout);
    return show.held && show.alive ? show.holder : null;
  };
  const events = () => readEvents(stateDir);
  return {
    home,
    root,
    stateDir,
    env,
    say,
    cli,
    writeConfig,
    tick,
    tickUntil,
    holder,
    waitFor,
    events,
  };
}

function writeDemoConfig(root: string, tokensPerSave: number): void {
  const config = {
    name: "demo",
    manager: {
      launcher: "command",
      prompt:
        "Read {root}/MANAGER-PROMPT.md and follow it. You were started by sheepdog: {reason}.",
      env: { TOY_SAVE_EVERY_MS: "400", TOY_TOKENS_PER_SAVE: String(tokensPerSave) },
      command: [process.execPath, toyPath, "{prompt}"],
    },
    watchdog: {
      interval: "5s",
      stale_after: "4s",
      claim_grace: "5s",
      merge_max: "1m",
      crash_loop: { starts: 3, within: "5m" },
      no_progress_hand_overs: 3,
    },
    hand_over_tokens: 200000,
    usage: { pause_at_percent: 100, pause_fallback: "1h" },
  };
  writeFileSync(join(root, "program.json"), `${JSON.stringify(config, null, 2)}\n`, {
    mode: 0o600,
  });
}

async function waitFor<T>(
  what: string,
  probe: () => T | null | undefined | false,
  ms = 15_000,
): Promise<T> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    const v = probe();
    if (v) return v;
    await sleep(150);
  }
  throw new RuntimeFailure(`demo: timed out waiting for ${what}`);
}

/** Waits for a manager other than `old` to hold the claim, and says so. */
async function replacementOf(s: Stage, old: number | null, what = "the replacement to claim") {
  const next = await s.waitFor(what, (): Holder | null => {
    const h = s.holder();
    return h && h.pid !== old ? h : null;
  });
  s.say(`manager pid ${next.pid} claimed the program`);
  return next;
}

async function sceneFirstStart(s: Stage): Promise<void> {
  s.say("— 1. first start");
  await s.tickUntil("start", 1);
  await replacementOf(s, null, "the first manager to claim");
}

async function sceneQuietSave(s: Stage): Promise<void> {
  s.say("— 2. the manager saves; the watchdog leaves it alone");
  await sleep(700);
  s.tick();
}

async function sceneHandOver(s: Stage): Promise<Holder> {
  s.say("— 3. its context fills: it hands over, and a fresh manager starts (planned)");
  const since = Date.now() - 60_000;
  await s.waitFor(
    "a hand-over",
    () => s.events().some((e) => e.type === "hand_over" && Date.parse(e.at) >= since),
    20_000,
  );
  s.writeConfig(1_000); // later managers grow slowly, so the next scenes are not hand-overs
  await s.tickUntil("start_after_hand_over", 3);
  return replacementOf(s, null, "the new manager to claim");
}

async function sceneKillDead(s: Stage, victim: Holder): Promise<Holder> {
  s.say(`— 4. kill -9 ${victim.pid}: the next tick finds the holder dead and restarts`);
  process.kill(victim.pid, "SIGKILL");
  await sleep(300);
  await s.tickUntil("restart_dead", 3);
  return replacementOf(s, victim.pid);
}

async function sceneWedged(s: Stage, victim: Holder): Promise<Holder> {
  s.say(`— 5. kill -STOP ${victim.pid}: alive but wedged, it stops saving`);
  process.kill(victim.pid, "SIGSTOP");
  await s.tickUntil("restart_stuck", 20, 1000);
  const evidence = await s.waitFor("the evidence folder", () => {
    const stopped = s.events().findLast((e) => e.type === "manager_stopped");
    return stopped ? String(stopped.evidence ?? "(none)") : null;
  });
  s.say(`stopped pid ${victim.pid} by its exact identity; evidence kept in ${evidence}`);
  return replacementOf(s, victim.pid);
}

async function sceneCrashLoop(s: Stage, first: Holder): Promise<void> {
  s.say(
    "— 6. managers keep dying: with 3 unplanned starts in the window already, the next death stands it down",
  );
  let current = first;
  for (let death = 1; death <= 5; death++) {
    s.say(`kill -9 ${current.pid}`);
    process.kill(current.pid, "SIGKILL");
    await sleep(300);
    if (s.tick().decision === "stand_down") break;
    current = await replacementOf(s, current.pid);
  }
  s.tick();
  s.say("the watchdog holds: it starts nothing until a person runs `sheepdog resume`");
}

async function sceneResume(s: Stage): Promise<Holder> {
  s.say("— 7. a person runs sheepdog resume");
  const resume = s.cli("resume");
  s.say(resume.stdout.trim() || `resume exited ${resume.status}`);
  // The last manager's claim is still there (dead): the start breaks it. Planned: after `cleared`.
  await s.tickUntil(["start", "restart_dead"], 2);
  const last = await s.waitFor("the manager to claim", s.holder);
  s.say(`manager pid ${last.pid} claimed the program; back to normal`);
  await sleep(600);
  s.tick();
  return last;
}

/**
 * Leave nothing behind: stop the watcher and every manager the demo's ticks started, by exact
 * identity. Returns the pids still alive.
 */
async function stopEverything(s: Stage, watcher: ChildProcess | null): Promise<number[]> {
  if (watcher && watcher.exitCode === null && watcher.signalCode === null) watcher.kill("SIGKILL");
  const machine = machineId();
  const ids = s
    .events()
    .filter((e) => e.type === "manager_started")
    .flatMap((e) =>
      typeof e.pid === "number" && typeof e.start_time === "string"
        ? [{ pid: e.pid, start_time: e.start_time }]
        : [],
    );
  await Promise.all(ids.map((id) => stopProcess({ ...id, machine_id: machine }, 3000)));
  return ids
    .filter((id) => livenessOf({ ...id, machine_id: machine }) === "alive")
    .map((i) => i.pid);
}

/**
 * The picture of what just happened, as a person would read it in the morning: with `--keep`,
 * where the journal and the report are; without, the night's one line (the folder goes).
 */
function printReport(s: Stage, keep: boolean): void {
  const report = s.cli("report", "--since", "1h");
  if (report.status !== 0)
    throw new RuntimeFailure(`sheepdog report exited ${report.status}: ${report.stderr}`);
  if (keep) {
    process.stdout.write(
      `\nThe journal: ${join(s.stateDir, "journal.jsonl")}\nRead it: node ${cliPath} journal --program ${s.root}\nThe report: ${report.stdout.trim()}\n`,
    );
    return;
  }
  const verdict = s.cli("report", "--since", "1h", "--json");
  const line = (() => {
    try {
      return String(JSON.parse(verdict.stdout).programs[0].verdict);
    } catch {
      return "";
    }
  })();
  process.stdout.write(
    `\nThe night in one line: ${line}\nThe throw-away program is removed; sheepdog demo --keep keeps its journal and report to read.\n`,
  );
}

/**
 * Scene 8: the same kill and hand-over under `sheepdog watch` (DESIGN §12): no tick is run by
 * hand; the watcher notices the death or the hand-over itself and replaces the manager in about
 * a second. Returns the watcher process (already stopped with SIGTERM when all went well).
 */
async function watchScenes(s: Stage, current: number): Promise<ChildProcess> {
  s.say("— 8. watch mode: sheepdog watch runs the same pass the moment something changes");
  const watcher = spawn(process.execPath, [cliPath, "watch", "--program", s.root], {
    env: s.env,
    stdio: ["ignore", "pipe", "inherit"],
  });
  let out = "";
  watcher.stdout?.on("data", (d) => {
    out += d;
  });
  await s.waitFor("the watcher to start", () => out.includes("watch started"));
  await sleep(500);
  const replaced = async (old: number, since: number) => {
    const next = await s.waitFor("the replacement to claim", (): Holder | null => {
      const h = s.holder();
      return h && h.pid !== old ? h : null;
    });
    return { next, s: ((Date.now() - since) / 1000).toFixed(1) };
  };
  s.say(`kill -9 ${current} (no tick is run by hand from here on)`);
  let since = Date.now();
  process.kill(current, "SIGKILL");
  const afterKill = await replaced(current, since);
  s.say(
    `watch: replaced in ${afterKill.s}s: manager pid ${afterKill.next.pid} claimed the program`,
  );
  await sleep(800);
  s.say(`manager pid ${afterKill.next.pid} hands over`);
  since = Date.now();
  const h = s.cli("hand-over", "--pid", String(afterKill.next.pid), "--note", "demo: context full");
  if (h.status !== 0) throw new RuntimeFailure(`demo: hand-over exited ${h.status}: ${h.stderr}`);
  const afterHandOver = await replaced(afterKill.next.pid, since);
  s.say(
    `watch: successor started in ${afterHandOver.s}s: manager pid ${afterHandOver.next.pid} claimed the program`,
  );
  // The watcher prints a pass once it is over, which can be just after its manager claimed.
  await s.waitFor("the watcher's lines for both passes", () =>
    [" restart_dead ", " start_after_hand_over "].every((d) => out.includes(d)),
  );
  for (const l of out.split("\n").filter((x) => / (restart_dead|start_after_hand_over) /.test(x)))
    s.say(`watch log: ${l.replace(/^\S+\s+/, "")}`);
  watcher.kill("SIGTERM");
  const code = await new Promise<number | null>((r) => watcher.once("close", (c) => r(c)));
  s.say(`SIGTERM: the watcher stopped cleanly (exit ${code})`);
  return watcher;
}
