// A tmux world for the tick's end-to-end tests: a server of the test's own (its socket in a
// folder of its own, `$SHEEPDOG_TMUX_SOCKET` + `$TMUX_TMPDIR`), and a program whose tmux
// launcher runs the fake manager. Shared by tick-tmux and held-start.
import { spawnSync } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "vitest";
import { CLI, tempDir, tempProgram } from "./cli.js";
import { FAKE_MANAGER, killStarted, ofType } from "./watchdog.js";

export interface Server {
  socket: string;
  tmpdir: string;
  env: { SHEEPDOG_TMUX_SOCKET: string; TMUX_TMPDIR: string };
  tmux(...args: string[]): { code: number | null; out: string; err: string };
}

const cleanups: (() => void)[] = [];

/** Managers first (by exact pid + start time), then the servers and their folders: each test
 * file that uses this world calls it in its own `afterEach`. */
export function cleanUpTmux(): void {
  for (const c of cleanups.splice(0).reverse()) c();
}

/**
 * A tmux server of the test's own, its socket in a folder of its own. Panes stay after their
 * process exits (`remain-on-exit`): otherwise tmux would close a manager's pane by itself once
 * the manager is stopped, and a test could not tell whether the tick closed it.
 */
export function server(): Server {
  const tmpdir = tempDir("sd-tmux-");
  const socket = `sd-tick-${process.pid}-${cleanups.length}`;
  const env = { SHEEPDOG_TMUX_SOCKET: socket, TMUX_TMPDIR: tmpdir };
  const tmux = (...args: string[]) => {
    const r = spawnSync("tmux", ["-L", socket, ...args], {
      encoding: "utf8",
      env: { ...process.env, TMUX_TMPDIR: tmpdir },
    });
    return { code: r.status, out: r.stdout, err: r.stderr };
  };
  const made = tmux("new-session", "-d", "-s", "keep");
  expect(made.code, made.err).toBe(0);
  const set = tmux("set-window-option", "-g", "remain-on-exit", "on");
  expect(set.code, set.err).toBe(0);
  // Sessions the launcher makes are as wide as a real terminal: Claude's screens unwrapped.
  const size = tmux("set-option", "-g", "default-size", "200x50");
  expect(size.code, size.err).toBe(0);
  cleanups.push(() => {
    tmux("kill-server");
    rmSync(tmpdir, { recursive: true, force: true });
  });
  return { socket, tmpdir, env, tmux };
}

/** The ids of every pane on the server, dead (remain-on-exit) or alive. */
export function panes(s: Server): string[] {
  const r = s.tmux("list-panes", "-a", "-F", "#{pane_id}");
  return r.code === 0 ? r.out.trim().split("\n").filter(Boolean) : [];
}

export function windows(s: Server): string[] {
  const r = s.tmux("list-windows", "-a", "-F", "#{session_name}:#{window_id}");
  return r.code === 0 ? r.out.trim().split("\n").filter(Boolean) : [];
}

/**
 * A program whose tmux launcher runs the fake manager with `flags`, its seat (the Claude config
 * folder) a temp folder of its own. Returns the env every sheepdog call of the test needs.
 */
export function tmuxProgram(
  s: Server,
  flags: string[] | ((seat: string) => string[]),
  watchdog: Record<string, unknown> = {},
  /** More top-level keys of program.json (`page`, …). */
  more: Record<string, unknown> = {},
  /** More keys of its manager section (`agent`, …). */
  manager: Record<string, unknown> = {},
) {
  const p = tempProgram("demo");
  const seat = tempDir("sd-seat-");
  const argv = typeof flags === "function" ? flags(seat) : flags;
  const config = {
    name: "demo",
    manager: {
      launcher: "tmux",
      // The pane's environment is the tmux server's: the program's own variables come by -e.
      env: {
        SHEEPDOG_CLI: CLI,
        // The seat is the agent's config folder: Codex's CODEX_HOME, Claude's config dir.
        ...(manager.agent === "codex" ? { CODEX_HOME: seat } : { CLAUDE_CONFIG_DIR: seat }),
        ...p.env,
      },
      tmux: { command: [process.execPath, FAKE_MANAGER, ...argv, "{prompt}"] },
      ...manager,
    },
    watchdog: { interval: "1h", stale_after: "1h", claim_grace: "1h", ...watchdog },
    ...more,
  };
  writeFileSync(join(p.root, "program.json"), `${JSON.stringify(config, null, 2)}\n`);
  cleanups.push(() => killStarted(p.stateDir));
  return { ...p, seat, env: { ...p.env, ...s.env } };
}

export interface TmuxStart {
  pid: number;
  start_time: string;
  pane: string;
  window: string;
  launcher: string;
  planned: boolean;
  reason: string;
}
export const starts = (stateDir: string) =>
  ofType(stateDir, "manager_started") as unknown as TmuxStart[];
export const lastStart = (stateDir: string) => starts(stateDir).at(-1) as TmuxStart;

/** What the pane shows now. */
export function screenOf(s: Server, pane: string): string {
  return s.tmux("capture-pane", "-p", "-t", pane).out;
}
