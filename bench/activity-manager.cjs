#!/usr/bin/env node
// A toy manager for the activity bench and the soak (DESIGN §14, issue 20): it claims and saves
// through the CLI like test/fixtures/fake-manager.cjs, and writes what Claude Code 2.1.328
// writes while it does (bench/claude-shapes.cjs: its transcript where Claude Code keeps it, the
// statusline input that maps its pid to that transcript, the Stop and Notification hook
// records), so the watchdog's activity verdict reads it as it would read a real session. At a
// word it goes quiet in one of these ways (and stops saving):
//   idle             the turn ends ("Done.", its Stop lists nothing) and nothing will wake it
//   wedged           a Bash call with a small `timeout` is open and the process stops itself
//                    (SIGSTOP; in a tmux pane, which continues a stopped process, it just sits)
//   busy-bash        a long Bash call within its timeout, its child running, then its result
//   busy-subagent    an async Agent call: the main turn ends, the sub-agent's transcript grows
//   busy-background  a run_in_background Bash: the turn ends, the Stop lists the running task,
//                    its shell is a live child; then its <task-notification> turn
//   busy-retry       one request tried again and again (`api-request` entries), then answered
// The busy ones last --busy-for seconds and then save again; idle and wedged never come back.
// Flags:
//   --save-every S        seconds between saves (default 1)
//   --ctl DIR             a file DIR/<kind>-<pid> makes it go <kind> at its next save (removed
//                         then); every spell is logged to DIR/events.jsonl as {pid, kind,
//                         phase: went|resumed, at}
//   --auto KIND           go KIND by itself after --warm A,B seconds (random) of saving; a busy
//                         KIND comes back and goes again, forever
//   --warm A,B            (default 1,5)
//   --busy-for S          a busy spell's length (default 15)
//   --grow-every S        the sub-agent writes an entry this often (default 1)
//   --retry-every S       a retried request is tried this often (default 1)
//   --wedge-timeout MS    the wedged call's `timeout` input (default 1000)
//   --obey-pause          exit 0 when a save answers with a pause
"use strict";
const { execFileSync, spawn } = require("node:child_process");
const { appendFileSync, existsSync, realpathSync, rmSync } = require("node:fs");
const { homedir } = require("node:os");
const { join } = require("node:path");
const { Session } = require("./claude-shapes.cjs");

const KINDS = ["idle", "wedged", "busy-bash", "busy-subagent", "busy-background", "busy-retry"];
const args = process.argv.slice(2);
const flag = (name) => args.includes(name);
const value = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : fallback;
};
const cli = process.env.SHEEPDOG_CLI;
const root = process.env.SHEEPDOG_PROGRAM;
const pid = process.pid;
const every = Number(value("--save-every", "1"));
const ctl = value("--ctl", null);
const auto = value("--auto", null);
const [warmMin, warmMax] = value("--warm", "1,5").split(",").map(Number);
const busyMs = Number(value("--busy-for", "15")) * 1000;
const growMs = Number(value("--grow-every", "1")) * 1000;
const retryMs = Number(value("--retry-every", "1")) * 1000;
const wedgeTimeout = Number(value("--wedge-timeout", "1000"));
const inTmux = Boolean(process.env.TMUX_PANE);
const seat = process.env.CLAUDE_CONFIG_DIR || join(homedir(), ".claude");

const log = (m) => process.stdout.write(`activity-manager ${pid}: ${m}\n`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const cliRun = (argv, input) =>
  execFileSync(process.execPath, [cli, ...argv], {
    encoding: "utf8",
    input: input ?? "",
    stdio: ["pipe", "pipe", "pipe"],
  });
const sd = (...a) => cliRun([...a, "--program", root]);
/** A hook as Claude Code runs it: the payload on stdin, output ignored. */
const hook = (kind, payload) => cliRun(["hook", kind], JSON.stringify(payload));
const event = (kind, phase, at) => {
  if (ctl)
    appendFileSync(
      join(ctl, "events.jsonl"),
      `${JSON.stringify({ pid, kind, phase, at: at ?? new Date().toISOString() })}\n`,
    );
  log(`${kind}: ${phase}`);
};
/** Alive and doing nothing, for good. */
const hold = () => {
  setInterval(() => {}, 3_600_000);
  return new Promise(() => {});
};
/** A child shell, as the Bash tool runs one; resolves when it ends. */
function shell(command) {
  const child = spawn("bash", ["-c", command], { stdio: "ignore" });
  return new Promise((r) => child.on("exit", r));
}
const pausedBy = (answer) => {
  try {
    return Boolean(JSON.parse(answer).pause);
  } catch {
    return false;
  }
};

let session;

const BEHAVIOURS = {
  async idle() {
    const at = session.endTurn("Done.");
    hook("stop", session.hookPayload("stop"));
    event("idle", "went", at);
    await sleep(1000); // Claude Code's idle_prompt notification (60 s by default, scaled)
    hook("notification", session.hookPayload("notification"));
    return hold();
  },
  async wedged() {
    const use = session.bash({
      command: 'node -e "setTimeout(() => {}, 3600000)"',
      description: "run the build",
      timeout: wedgeTimeout,
    });
    session.apiRequest();
    void shell("sleep 3600; true"); // the hung command's shell, dies with the manager's group
    event("wedged", "went", use.at);
    if (!inTmux) process.kill(pid, "SIGSTOP");
    return hold();
  },
  async "busy-bash"() {
    const s = Math.round(busyMs / 1000);
    const use = session.bash({
      command: `node -e "setTimeout(() => {}, ${busyMs})"`,
      description: "run the tests",
      timeout: 600_000,
    });
    session.apiRequest();
    event("busy-bash", "went", use.at);
    await shell(`node -e "setTimeout(() => {}, ${busyMs})"; true`);
    session.toolResult(use.id, `tests passed after ${s} s`);
    session.apiRequest();
  },
  async "busy-subagent"() {
    const { agentId, useId } = session.agent("check the backlog", "read the backlog, run checks");
    const at = session.endTurn("The agent is working on it.");
    hook("stop", session.hookPayload("stop"));
    event("busy-subagent", "went", at);
    const sub = session.subagent(agentId, "read the backlog, run checks");
    const end = Date.now() + busyMs;
    while (Date.now() < end) {
      await sleep(Math.min(growMs, Math.max(0, end - Date.now())));
      sub.step();
    }
    session.taskNotification(agentId, useId, 'Agent "check the backlog" completed');
  },
  async "busy-background"() {
    const s = Math.round(busyMs / 1000);
    const command = `sleep ${s}`;
    const done = shell(`${command}; true`); // bash stays: the live child shell
    const { task, useId } = session.background(command, "wait in the background");
    const at = session.endTurn("Waiting for it.");
    hook("stop", session.stopBackground(task, command, "wait in the background"));
    event("busy-background", "went", at);
    await done;
    session.taskNotification(
      task,
      useId,
      `Background command "${command}" completed (exit code 0)`,
    );
    session.endTurn("It ended.");
    hook("stop", session.hookPayload("stop"));
  },
  async "busy-retry"() {
    // The request after the last save's result is tried again and again, then answered.
    event("busy-retry", "went");
    const end = Date.now() + busyMs;
    while (Date.now() < end) {
      await sleep(Math.min(retryMs, Math.max(0, end - Date.now())));
      session.apiRequest();
    }
  },
};

/** The kind to go now: a control file for this pid, or the --auto schedule. */
function nextKind(state) {
  if (ctl)
    for (const kind of KINDS) {
      const f = join(ctl, `${kind}-${pid}`);
      if (existsSync(f)) {
        rmSync(f, { force: true });
        return kind;
      }
    }
  if (auto && Date.now() >= state.autoAt) return auto;
  return null;
}

async function main() {
  if (auto && !BEHAVIOURS[auto]) throw new Error(`--auto ${auto}: not one of ${KINDS.join(", ")}`);
  try {
    sd("claim", "acquire", "--pid", String(pid));
  } catch (err) {
    log(`claim refused: ${err.stderr}`);
    process.exit(3);
  }
  log("claimed");
  let cwd = process.cwd();
  try {
    cwd = realpathSync(cwd);
  } catch {}
  session = new Session({ seat, cwd });
  session.begin(args.at(-1) ?? "go on");
  cliRun(["statusline"], JSON.stringify(session.statusline())); // maps this pid to the transcript
  const warm = () => Date.now() + (warmMin + Math.random() * (warmMax - warmMin)) * 1000;
  const state = { autoAt: warm(), back: null };
  for (let n = 1; ; n++) {
    const use = session.bash({ command: `sheepdog save --progress p-${n}`, description: "save" });
    const saved = sd("save", "--pid", String(pid), "--progress", `progress-${pid}-${n}`);
    session.toolResult(use.id, saved.trim());
    session.apiRequest();
    if (flag("--obey-pause") && pausedBy(saved)) {
      log("told to pause: stopping");
      process.exit(0);
    }
    if (state.back) {
      event(state.back, "resumed");
      state.back = null;
    }
    const kind = nextKind(state);
    if (kind) {
      await BEHAVIOURS[kind]();
      state.back = kind; // a busy one came back: the next save ends its spell
      state.autoAt = warm();
      continue;
    }
    await sleep(every * 1000);
  }
}

main().catch((err) => {
  log(`failed: ${err.stack ?? err}`);
  process.exit(1);
});
