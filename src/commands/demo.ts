import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, realpathSync, writeFileSync } from "node:fs";
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

const cliPath = fileURLToPath(
  new URL(import.meta.url.includes("/commands/") ? "../cli.js" : "./cli.js", import.meta.url),
);
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

export async function run(argv: string[]): Promise<number> {
  const { values } = parseCommandArgs(
    "demo",
    argv,
    { keep: { type: "boolean" }, quiet: { type: "boolean" } },
    false,
  );
  if (!existsSync(toyPath)) throw new RuntimeFailure(`the toy manager is missing: ${toyPath}`);
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
    if (!values.quiet)
      process.stdout.write(`[t+${((Date.now() - t0) / 1000).toFixed(1).padStart(5)}s] ${text}\n`);
  };
  const cli = (...args: string[]) =>
    spawnSync(process.execPath, [cliPath, ...args, "--program", root], { env, encoding: "utf8" });

  const writeConfig = (tokensPerSave: number) => {
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
    writeFileSync(join(root, "program.json"), `${JSON.stringify(config, null, 2)}\n`);
  };

  const init = spawnSync(process.execPath, [cliPath, "init", root, "--name", "demo"], {
    env,
    encoding: "utf8",
  });
  if (init.status !== 0) throw new RuntimeFailure(`sheepdog init failed: ${init.stderr}`);
  writeConfig(40_000);

  const tick = (): TickRow => {
    const r = cli("tick", "--json");
    if (r.status !== 0) throw new RuntimeFailure(`sheepdog tick exited ${r.status}: ${r.stderr}`);
    const row = JSON.parse(r.stdout).programs[0] as TickRow;
    say(`tick → ${row.decision.padEnd(22)} ${row.reason}`);
    return row;
  };
  const holder = (): { pid: number } | null => {
    const r = cli("claim", "show", "--json");
    const show = JSON.parse(r.stdout);
    return show.held && show.alive ? show.holder : null;
  };
  const waitFor = async <T>(
    what: string,
    probe: () => T | null | undefined | false,
    ms = 15_000,
  ): Promise<T> => {
    const end = Date.now() + ms;
    while (Date.now() < end) {
      const v = probe();
      if (v) return v;
      await sleep(150);
    }
    throw new RuntimeFailure(`demo: timed out waiting for ${what}`);
  };
  const events = () => readEvents(stateDir);
  const journalHas = (type: string, after: number) => () =>
    events().some((e) => e.type === type && Date.parse(e.at) >= after);
  const tickUntil = async (
    decision: string | string[],
    maxTicks = 20,
    gapMs = 1000,
  ): Promise<TickRow> => {
    const wanted = Array.isArray(decision) ? decision : [decision];
    for (let i = 0; i < maxTicks; i++) {
      const row = tick();
      if (wanted.includes(row.decision)) return row;
      await sleep(gapMs);
    }
    throw new RuntimeFailure(`demo: the watchdog never decided ${decision}`);
  };
  const started = (): { pid: number; start_time: string }[] =>
    events()
      .filter((e) => e.type === "manager_started")
      .flatMap((e) =>
        typeof e.pid === "number" && typeof e.start_time === "string"
          ? [{ pid: e.pid, start_time: e.start_time }]
          : [],
      );

  let leftOver: number[] = [];
  let watcher: ChildProcess | null = null;
  say(`a throw-away program in ${root}`);
  say(
    "thresholds compressed: stale after 4s, claim grace 5s, crash loop = 3 unplanned starts in 5m",
  );
  try {
    say("— 1. first start");
    await tickUntil("start", 1);
    const first = await waitFor("the first manager to claim", holder);
    say(`manager pid ${first.pid} claimed the program`);

    say("— 2. the manager saves; the watchdog leaves it alone");
    await sleep(700);
    tick();

    say("— 3. its context fills: it hands over, and a fresh manager starts (planned)");
    const handOverSince = Date.now() - 60_000;
    await waitFor("a hand-over", journalHas("hand_over", handOverSince), 20_000);
    writeConfig(1_000); // later managers grow slowly, so the next scenes are not hand-overs
    await tickUntil("start_after_hand_over", 3);
    const second = await waitFor("the new manager to claim", holder);
    say(`manager pid ${second.pid} claimed the program`);

    say(`— 4. kill -9 ${second.pid}: the next tick finds the holder dead and restarts`);
    process.kill(second.pid, "SIGKILL");
    await sleep(300);
    await tickUntil("restart_dead", 3);
    const third = await waitFor("the replacement to claim", (): { pid: number } | null => {
      const h = holder();
      return h && h.pid !== second.pid ? h : null;
    });
    say(`manager pid ${third.pid} claimed the program`);

    say(`— 5. kill -STOP ${third.pid}: alive but wedged, it stops saving`);
    process.kill(third.pid, "SIGSTOP");
    const stuck = await tickUntil("restart_stuck", 20, 1000);
    void stuck;
    const evidence = await waitFor("the evidence folder", () => {
      const stopped = events().findLast((e) => e.type === "manager_stopped");
      return stopped ? String(stopped.evidence ?? "(none)") : null;
    });
    say(`stopped pid ${third.pid} by its exact identity; evidence kept in ${evidence}`);
    let current = await waitFor("the replacement to claim", (): { pid: number } | null => {
      const h = holder();
      return h && h.pid !== third.pid ? h : null;
    });
    say(`manager pid ${current.pid} claimed the program`);

    say(
      "— 6. managers keep dying: with 3 unplanned starts in the window already, the next death stands it down",
    );
    for (let death = 1; death <= 5; death++) {
      say(`kill -9 ${current.pid}`);
      const dead = current.pid;
      process.kill(dead, "SIGKILL");
      await sleep(300);
      const row = tick();
      if (row.decision === "stand_down") break;
      current = await waitFor("the replacement to claim", (): { pid: number } | null => {
        const h = holder();
        return h && h.pid !== dead ? h : null;
      });
      say(`manager pid ${current.pid} claimed the program`);
    }
    tick();
    say("the watchdog holds: it starts nothing until a person runs `sheepdog resume`");

    say("— 7. a person runs sheepdog resume");
    const resume = cli("resume");
    say(resume.stdout.trim() || `resume exited ${resume.status}`);
    // The last manager's claim is still there (dead): the start breaks it. Planned: after `cleared`.
    await tickUntil(["start", "restart_dead"], 2);
    const last = await waitFor("the manager to claim", holder);
    say(`manager pid ${last.pid} claimed the program; back to normal`);
    await sleep(600);
    tick();

    watcher = await watchScenes(last.pid, { cli, holder, waitFor, say, env, root });
  } finally {
    if (watcher && watcher.exitCode === null && watcher.signalCode === null)
      watcher.kill("SIGKILL");
    // Leave nothing behind: stop every manager the demo's ticks started, by exact identity.
    const machine = machineId();
    const ids = started();
    await Promise.all(ids.map((id) => stopProcess({ ...id, machine_id: machine }, 3000)));
    leftOver = ids
      .filter((id) => livenessOf({ ...id, machine_id: machine }) === "alive")
      .map((i) => i.pid);
  }
  if (leftOver.length > 0)
    throw new RuntimeFailure(`demo: managers still running: ${leftOver.join(", ")}`);
  say("done: every manager the demo started has stopped");
  // The picture of what just happened, as a person would read it in the morning.
  const report = cli("report", "--since", "1h");
  if (report.status !== 0)
    throw new RuntimeFailure(`sheepdog report exited ${report.status}: ${report.stderr}`);
  process.stdout.write(
    `\nThe journal: ${join(stateDir, "journal.jsonl")}\nRead it: node ${cliPath} journal --program ${root}\nThe report: ${report.stdout.trim()}\n`,
  );
  return EXIT.ok;
}

interface SceneTools {
  cli: (...args: string[]) => { status: number | null; stdout: string; stderr: string };
  holder: () => { pid: number } | null;
  waitFor: <T>(what: string, probe: () => T | null | undefined | false, ms?: number) => Promise<T>;
  say: (text: string) => void;
  env: NodeJS.ProcessEnv;
  root: string;
}

/**
 * Scene 8: the same kill and hand-over under `sheepdog watch` (DESIGN §12): no tick is run by
 * hand; the watcher notices the death or the hand-over itself and replaces the manager in about
 * a second. Returns the watcher process (already stopped with SIGTERM when all went well).
 */
async function watchScenes(current: number, t: SceneTools): Promise<ChildProcess> {
  t.say("— 8. watch mode: sheepdog watch runs the same pass the moment something changes");
  const watcher = spawn(process.execPath, [cliPath, "watch", "--program", t.root], {
    env: t.env,
    stdio: ["ignore", "pipe", "inherit"],
  });
  let out = "";
  watcher.stdout?.on("data", (d) => {
    out += d;
  });
  await t.waitFor("the watcher to start", () => out.includes("watch started"));
  await sleep(500);
  const replaced = async (old: number, since: number) => {
    const next = await t.waitFor("the replacement to claim", (): { pid: number } | null => {
      const h = t.holder();
      return h && h.pid !== old ? h : null;
    });
    return { next, s: ((Date.now() - since) / 1000).toFixed(1) };
  };
  t.say(`kill -9 ${current} (no tick is run by hand from here on)`);
  let since = Date.now();
  process.kill(current, "SIGKILL");
  const afterKill = await replaced(current, since);
  t.say(
    `watch: replaced in ${afterKill.s}s: manager pid ${afterKill.next.pid} claimed the program`,
  );
  await sleep(800);
  t.say(`manager pid ${afterKill.next.pid} hands over`);
  since = Date.now();
  const h = t.cli("hand-over", "--pid", String(afterKill.next.pid), "--note", "demo: context full");
  if (h.status !== 0) throw new RuntimeFailure(`demo: hand-over exited ${h.status}: ${h.stderr}`);
  const afterHandOver = await replaced(afterKill.next.pid, since);
  t.say(
    `watch: successor started in ${afterHandOver.s}s: manager pid ${afterHandOver.next.pid} claimed the program`,
  );
  for (const l of out.split("\n").filter((x) => / (restart_dead|start_after_hand_over) /.test(x)))
    t.say(`watch log: ${l.replace(/^\S+\s+/, "")}`);
  watcher.kill("SIGTERM");
  const code = await new Promise<number | null>((r) => watcher.once("close", (c) => r(c)));
  t.say(`SIGTERM: the watcher stopped cleanly (exit ${code})`);
  return watcher;
}
