import { spawn } from "node:child_process";

/** What one git command did. `code` is null when it was killed (timed out). */
export interface GitResult {
  code: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  /** Set when git itself could not be started (e.g. not installed). */
  spawnError?: string;
}

export interface GitOptions {
  cwd: string;
  /** Killed (with everything it started) after this long. */
  timeoutMs?: number;
  input?: string;
  env?: NodeJS.ProcessEnv;
}

/** Default deadline for one git call: a hung remote must not hang a save for long. */
export function gitTimeoutMs(): number {
  const fromEnv = Number(process.env.SHEEPDOG_GIT_TIMEOUT_MS);
  return Number.isFinite(fromEnv) && fromEnv > 0 ? fromEnv : 30_000;
}

/**
 * Runs real git with an argv array (no shell). It never prompts (no terminal, no askpass), and
 * runs in its own process group so a timeout also ends the ssh or helper it started, which
 * would otherwise keep its pipes open.
 */
export function git(args: string[], opts: GitOptions): Promise<GitResult> {
  const timeoutMs = opts.timeoutMs ?? gitTimeoutMs();
  return new Promise((done) => {
    let child: ReturnType<typeof spawn>;
    try {
      child = spawn("git", args, {
        cwd: opts.cwd,
        env: {
          ...process.env,
          ...opts.env,
          GIT_TERMINAL_PROMPT: "0",
          GIT_ASKPASS: "true",
          SSH_ASKPASS: "true",
          LC_ALL: "C",
        },
        stdio: ["pipe", "pipe", "pipe"],
        detached: true,
      });
    } catch (err) {
      done({ code: null, stdout: "", stderr: "", timedOut: false, spawnError: String(err) });
      return;
    }
    let stdout = "";
    let stderr = "";
    let timedOut = false;
    let finished = false;
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        if (child.pid) process.kill(-child.pid, "SIGKILL");
      } catch {
        // already gone
      }
    }, timeoutMs);
    child.stdout?.on("data", (d) => {
      stdout += d;
    });
    child.stderr?.on("data", (d) => {
      stderr += d;
    });
    const finish = (code: number | null, spawnError?: string) => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      done({
        code: timedOut ? null : code,
        stdout,
        stderr,
        timedOut,
        ...(spawnError ? { spawnError } : {}),
      });
    };
    child.on("error", (err) => finish(null, err.message));
    child.on("close", (code) => finish(code));
    child.stdin?.on("error", () => {});
    child.stdin?.end(opts.input ?? "");
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
