// Every external tool sheepdog runs (git, tmux, herdr, launchctl, systemctl) goes through this
// one wrapper over execa: an argv array (never a shell), a deadline that sends TERM and then
// KILL to the tool's whole process group, output capped, and one error format. execa is loaded
// only here, when a process is about to be spawned, so the hot commands never pay for it.

/** What one run of an external tool did. */
export interface ToolResult {
  /** Exit status; null when it was killed (timed out) or could not be started. */
  code: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  /** Set when the tool could not be started at all (e.g. not installed). */
  spawnError?: string;
  /** The command as a person would type it, for messages. */
  command?: string;
  /** The signal that ended it, when one did. */
  signal?: string;
  /** Its stdout or stderr passed the cap and was cut there. */
  truncated?: boolean;
}

export interface ToolOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Written to its stdin (otherwise stdin is closed at once). */
  input?: string;
  /** Sent SIGTERM (with its process group) after this long, SIGKILL `killGraceMs` later. */
  timeoutMs: number;
  killGraceMs?: number;
  /** Each of stdout and stderr is kept up to this many bytes (default 4 MiB). */
  maxOutputBytes?: number;
}

const KILL_GRACE_MS = 2_000;
const MAX_OUTPUT_BYTES = 4 * 1024 * 1024;

/** An argv as one shell-quoted line (for messages only: nothing is run through a shell). */
export function commandLine(argv: readonly string[]): string {
  return argv
    .map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`))
    .join(" ");
}

function signalGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (!pid) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // already gone
  }
}

/**
 * Runs a tool with an argv array, never through a shell, so user text (prompts, paths with
 * spaces or quotes) reaches it intact. It runs in its own process group so a timeout ends
 * whatever it started and still holds our pipes (an ssh under git, say). Never rejects.
 */
export async function runTool(
  file: string,
  args: string[],
  opts: ToolOptions,
): Promise<ToolResult> {
  const command = commandLine([file, ...args]);
  let execa: typeof import("execa").execa;
  try {
    ({ execa } = await import("execa"));
  } catch (err) {
    return {
      code: null,
      stdout: "",
      stderr: "",
      timedOut: false,
      spawnError: String(err),
      command,
    };
  }
  const child = execa(file, args, {
    cwd: opts.cwd,
    env: opts.env ?? process.env,
    extendEnv: false,
    input: opts.input ?? "",
    detached: true,
    reject: false,
    stripFinalNewline: false,
    maxBuffer: opts.maxOutputBytes ?? MAX_OUTPUT_BYTES,
  });
  let timedOut = false;
  let killer: NodeJS.Timeout | undefined;
  const timer = setTimeout(() => {
    timedOut = true;
    signalGroup(child.pid, "SIGTERM");
    killer = setTimeout(() => signalGroup(child.pid, "SIGKILL"), opts.killGraceMs ?? KILL_GRACE_MS);
  }, opts.timeoutMs);
  const r = await child;
  clearTimeout(timer);
  clearTimeout(killer);
  const spawnError = r.exitCode === undefined && !r.signal && !timedOut ? r.originalMessage : "";
  return {
    code: timedOut || r.exitCode === undefined ? null : r.exitCode,
    stdout: String(r.stdout ?? ""),
    stderr: String(r.stderr ?? ""),
    timedOut,
    command,
    ...(spawnError ? { spawnError } : {}),
    ...(r.signal ? { signal: r.signal } : {}),
    ...(r.isMaxBuffer ? { truncated: true } : {}),
  };
}

/** The last few non-empty lines of a tool's stderr, for an error message. */
export function stderrTail(text: string, lines = 3): string {
  const tail = text
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean)
    .slice(-lines)
    .join(" / ");
  return tail.length > 400 ? `…${tail.slice(-400)}` : tail;
}

/**
 * The one way a failed run is described: the command, how it ended, the tail of its stderr —
 * e.g. `launchctl bootstrap gui/501 x.plist: exit 5: Bootstrap failed: 5: Input/output error`.
 */
export function toolFailure(r: ToolResult, command = r.command ?? "tool"): string {
  if (r.spawnError) return `${command}: cannot run it: ${r.spawnError}`;
  const how = r.timedOut
    ? "timed out"
    : r.code !== null
      ? `exit ${r.code}`
      : `killed by ${r.signal ?? "a signal"}`;
  const tail = stderrTail(r.stderr) || stderrTail(r.stdout);
  return `${command}: ${how}${tail ? `: ${tail}` : ""}`;
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
