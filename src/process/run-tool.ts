import { spawn } from "node:child_process";

/** What one run of an external tool (git, tmux, herdr) did. */
export interface ToolResult {
  /** Exit status; null when it was killed (timed out) or could not be started. */
  code: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  /** Set when the tool could not be started at all (e.g. not installed). */
  spawnError?: string;
}

export interface ToolOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Written to its stdin (otherwise stdin is closed at once). */
  input?: string;
  /** Killed (with its process group) after this long. */
  timeoutMs: number;
}

/**
 * Runs a tool with an argv array, never through a shell, so user text (prompts, paths with
 * spaces or quotes) reaches it intact. It runs in its own process group so a timeout ends
 * whatever it started and still holds our pipes.
 */
export function runTool(file: string, args: string[], opts: ToolOptions): Promise<ToolResult> {
  return new Promise((done) => {
    let child: ReturnType<typeof spawn>;
    try {
      child = spawn(file, args, {
        cwd: opts.cwd,
        env: opts.env ?? process.env,
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
    }, opts.timeoutMs);
    child.stdout?.setEncoding("utf8");
    child.stderr?.setEncoding("utf8");
    child.stdout?.on("data", (d: string) => {
      stdout += d;
    });
    child.stderr?.on("data", (d: string) => {
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
    child.stdin?.on("error", () => {}); // a tool that exits without reading its input
    child.stdin?.end(opts.input ?? "");
  });
}

/** The first non-empty line of a tool's stderr, for an error message. */
export function firstLine(text: string): string {
  return (
    text
      .split("\n")
      .map((l) => l.trim())
      .find(Boolean) ?? ""
  );
}
