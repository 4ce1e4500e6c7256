import { runTool, type ToolResult } from "../process/run-tool.js";
import { envMs } from "../util/env-ms.js";

/** What one git command did. `code` is null when it was killed (timed out). */
export type GitResult = ToolResult;

export interface GitOptions {
  cwd: string;
  /** Killed (with everything it started) after this long. */
  timeoutMs?: number;
  input?: string;
  env?: NodeJS.ProcessEnv;
}

/** Default deadline for one git call: a hung remote must not hang a save for long. */
export function gitTimeoutMs(): number {
  return envMs("SHEEPDOG_GIT_TIMEOUT_MS", 30_000);
}

/**
 * Runs real git with an argv array (no shell). It never prompts (no terminal, no askpass), and
 * runs in its own process group so a timeout also ends the ssh or helper it started, which
 * would otherwise keep its pipes open.
 */
export function git(args: string[], opts: GitOptions): Promise<GitResult> {
  return runTool("git", args, {
    cwd: opts.cwd,
    env: {
      ...process.env,
      ...opts.env,
      GIT_TERMINAL_PROMPT: "0",
      GIT_ASKPASS: "true",
      SSH_ASKPASS: "true",
      LC_ALL: "C",
    },
    timeoutMs: opts.timeoutMs ?? gitTimeoutMs(),
    ...(opts.input !== undefined ? { input: opts.input } : {}),
  });
}

/** The most telling line of a failed git call, for a notice or an error message. */
export function gitFailure(r: GitResult, what: string): string {
  if (r.spawnError) return `${what}: cannot run git: ${r.spawnError}`;
  if (r.timedOut) return `${what}: git timed out`;
  const lines = r.stderr
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l && !/^hint:/.test(l) && !/^To /.test(l));
  const telling =
    lines.find((l) => /^(fatal|error):/.test(l)) ??
    lines.find((l) => l.startsWith("!")) ??
    lines[0];
  return `${what}: ${telling ?? `git exited with ${r.code}`}`;
}
