import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, realpathSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

/** The built CLI the tests run: `$SHEEPDOG_CLI`, else dist/cli.cjs (built by `npm test`). */
/** The keys of `save --json` (and `hand-over --json`), in order: DESIGN §4, exactly. */
export const SAVE_KEYS = [
  "program",
  "saved_at",
  "pushed",
  "context_tokens",
  "hand_over",
  "hand_over_at",
  "transcript",
  "pause",
  "stood_down",
  "notices",
];

export const CLI = resolve(process.env.SHEEPDOG_CLI ?? "dist/cli.cjs");

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `sheepdog ARGS` as a real process and waits for it. */
export function sheepdog(
  args: string[],
  opts: { cwd?: string; env?: NodeJS.ProcessEnv; input?: string } = {},
): RunResult {
  const r = spawnSync(process.execPath, [CLI, ...args], {
    cwd: opts.cwd,
    env: { ...process.env, ...opts.env },
    input: opts.input ?? "",
    encoding: "utf8",
    timeout: 120_000,
    maxBuffer: 64 * 1024 * 1024,
  });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

/** A `sheepdog` process running in the background, what it printed so far, and its end. */
export interface RunningCli {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Whether it has ended (its streams closed). */
  ended(): boolean;
  /** Its exit code (-1 when a signal ended it) and all it printed. */
  done: Promise<RunResult>;
}

/** Starts `sheepdog ARGS` and collects its output: the one way the tests run it in the background. */
export function spawnCli(
  args: string[],
  opts: { cwd?: string; env?: NodeJS.ProcessEnv; input?: string } = {},
): RunningCli {
  const child = spawn(process.execPath, [CLI, ...args], {
    cwd: opts.cwd,
    env: { ...process.env, ...opts.env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  let ended = false;
  child.stdout?.on("data", (d) => {
    stdout += d;
  });
  child.stderr?.on("data", (d) => {
    stderr += d;
  });
  const done = new Promise<RunResult>((resolve) =>
    child.on("close", (code) => {
      ended = true;
      resolve({ code: code ?? -1, stdout, stderr });
    }),
  );
  child.stdin?.end(opts.input ?? "");
  return { child, stdout: () => stdout, stderr: () => stderr, ended: () => ended, done };
}

/** Async form, for running many at once. */
export function sheepdogAsync(
  args: string[],
  opts: { cwd?: string; env?: NodeJS.ProcessEnv; input?: string } = {},
): Promise<RunResult> {
  return spawnCli(args, opts).done;
}

/** A fresh temp directory (realpath: macOS /tmp is a symlink). */
export function tempDir(prefix = "sheepdog-test-"): string {
  return realpathSync(mkdtempSync(join(tmpdir(), prefix)));
}

/**
 * A program under a fresh $SHEEPDOG_HOME. `config` is merged over a minimal valid one.
 * Returns the env to pass to every sheepdog call of the test.
 */
export function tempProgram(name = "demo", config: Record<string, unknown> = {}) {
  const home = tempDir();
  const root = join(home, name);
  spawnSync("mkdir", ["-p", root]);
  writeFileSync(join(root, "program.json"), `${JSON.stringify({ name, ...config }, null, 2)}\n`);
  const env = {
    SHEEPDOG_HOME: home,
    SHEEPDOG_STATE_DIR: join(home, ".state"),
    SHEEPDOG_PROGRAM: root,
  };
  return { home, root, env, stateDir: join(root, ".sheepdog") };
}

/** A live, long-running process to stand in for a manager; kill it when done. (`sleep`, not a
 * node process: it starts in a millisecond, and only its pid and start time matter.) */
export function sleeper(seconds = 300): ChildProcess {
  return spawn("sleep", [String(seconds)], { stdio: "ignore" });
}

/**
 * python3 for the tests' helpers (zombie makers, plistlib, stand-ins): the system's own when
 * there is one. A version manager's shim (pyenv) on PATH costs ten times python's own start-up,
 * and the helpers run it often.
 */
export const PYTHON3 =
  ["/usr/bin", ...(process.env.PATH ?? "").split(":")]
    .map((dir) => join(dir, "python3"))
    .find((p) => p.startsWith("/") && existsSync(p)) ?? "python3";
