import type { ChildProcess } from "node:child_process";
import { spawnCli } from "./cli.js";
import { waitFor } from "./watchdog.js";

/** One `watch --json` pass object as printed. */
export interface WatchPass {
  at: string;
  trigger: string;
  programs: { program: string; decision: string; reason: string; actions: string[] }[];
}

export interface RunningWatch {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Every pass printed so far (with --json). */
  passes(): WatchPass[];
  /** Resolves with the exit code (or -1 when killed by a signal). */
  exited: Promise<number>;
  /** SIGTERM, then waits for the exit. */
  stop(): Promise<number>;
}

/** `sheepdog watch ARGS` in the background. `cleanups` gets a SIGKILL of exactly this child. */
export function startWatch(
  env: NodeJS.ProcessEnv,
  args: string[],
  cleanups: (() => void)[],
): RunningWatch {
  const run = spawnCli(["watch", ...args], { env });
  const child = run.child;
  cleanups.push(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  });
  const exited = run.done.then((r) => r.code);
  const passes = () =>
    run
      .stdout()
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l) as WatchPass);
  return {
    child,
    stdout: run.stdout,
    stderr: run.stderr,
    passes,
    exited,
    async stop() {
      child.kill("SIGTERM");
      return exited;
    },
  };
}

/** Waits until the watcher has run its first pass of every program it started with. */
export async function watchReady(w: RunningWatch, programs = 1): Promise<void> {
  await waitFor(
    "the watcher's first passes",
    () => new Set(w.passes().flatMap((p) => p.programs.map((x) => x.program))).size >= programs,
    60_000,
  );
}
