// Start-up cost of the hot manager-side commands, as ratios to bare `node -e 0` in the same run.
// Usage: node bench/startup.mjs [runs]   (CLI from $SHEEPDOG_CLI, default bin/sheepdog.cjs, what a user runs)
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { measure, report } from "./lib.mjs";

const cli = resolve(process.env.SHEEPDOG_CLI ?? "bin/sheepdog.cjs");
const runs = Number(process.argv[2] ?? 21);
const goal = 2;

const home = realpathSync(mkdtempSync(join(tmpdir(), "sheepdog-bench-")));
const root = join(home, "bench");
mkdirSync(root);
writeFileSync(join(root, "program.json"), `${JSON.stringify({ name: "bench" })}\n`);
// A live stand-in for the manager, so `save --pid` stamps a real process.
const sleeper = spawn(process.execPath, ["-e", "setTimeout(() => {}, 600000)"], {
  stdio: "ignore",
});
// An empty seat: save looks for a transcript and finds none, the same way on every machine.
const env = {
  SHEEPDOG_HOME: home,
  SHEEPDOG_STATE_DIR: join(home, ".state"),
  CLAUDE_CONFIG_DIR: join(home, ".seat"),
};

// Payloads shaped as Claude Code 2.1.328 sends them (test/fixtures/claude-2.1.328/).
const session = { session_id: "ba3e59ff-65af-4025-96fa-773d4a0a44c4", cwd: root };
const STOP = JSON.stringify({
  ...session,
  hook_event_name: "Stop",
  stop_hook_active: false,
  last_assistant_message: "Done.",
  background_tasks: [],
  session_crons: [],
});
// Codex 0.171.0's Stop (test/fixtures/codex-0.171.0/hook-stop.json): its rollout is recorded
// for the Codex process too, by a bundle of its own (dist/hot/hook-codex-stop.cjs).
const codexSession = "01a23c16-78ce-7fd2-b992-3ec32ae887c4";
const CODEX_STOP = JSON.stringify({
  session_id: codexSession,
  turn_id: "01a23c16-7996-7852-b27d-ab0d94a0d7ff",
  transcript_path: join(
    home,
    ".codex",
    "sessions",
    "2026",
    "12",
    "03",
    `rollout-2026-12-03T13-27-15-${codexSession}.jsonl`,
  ),
  cwd: root,
  hook_event_name: "Stop",
  model: "gpt-6.2-sol",
  permission_mode: "bypassPermissions",
  stop_hook_active: false,
  last_assistant_message: "Done.",
});
const NOTIFICATION = JSON.stringify({
  ...session,
  hook_event_name: "Notification",
  message: "Claude is waiting for your input",
  notification_type: "idle_prompt",
});

try {
  const node = process.execPath;
  const results = measure(
    [
      { name: "node -e 0", argv: [node, "-e", "0"] },
      {
        name: "sheepdog claim show --json",
        argv: [node, cli, "claim", "show", "--json", "--program", root],
        env,
      },
      {
        name: "sheepdog save --pid",
        argv: [node, cli, "save", "--pid", String(sleeper.pid), "--program", root],
        env,
      },
      // Claude Code runs these at the end of every turn and at every notification.
      { name: "sheepdog hook stop", argv: [node, cli, "hook", "stop"], env, input: STOP },
      {
        name: "sheepdog hook stop (Codex's)",
        argv: [node, cli, "hook", "stop"],
        env,
        input: CODEX_STOP,
      },
      {
        name: "sheepdog hook notification",
        argv: [node, cli, "hook", "notification"],
        env,
        input: NOTIFICATION,
      },
    ],
    { runs, warmup: 3 },
  );
  report(`start-up (${runs} runs each, medians; CLI ${cli})`, results, "node -e 0");
  const base = results[0].median;
  let missed = false;
  for (const r of results.slice(1)) {
    const ratio = r.median / base;
    if (ratio > goal) missed = true;
    console.log(`  ${r.name}: ${ratio.toFixed(2)}x bare node (goal <= ${goal}x)`);
  }
  process.exitCode = missed ? 1 : 0;
} finally {
  sleeper.kill();
  rmSync(home, { recursive: true, force: true });
}
