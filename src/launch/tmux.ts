// The tmux launcher (DESIGN §7): a new window in a named session, running the configured argv.
import { AGENT_FACTS, agentKindOf } from "../agent/kinds.js";
import type { ProgramContext } from "../config/context.js";
import { RuntimeFailure, UsageError } from "../errors.js";
import { identityOf } from "../process/identity.js";
import { firstLine, runTool, type ToolResult } from "../process/run-tool.js";
import { seatOf } from "../usage/seat.js";
import { managerTranscriptEnv } from "../usage/transcript.js";
import { envMs } from "../util/env-ms.js";
import { type AgentStart, agentStart } from "./agent-start.js";
import { KEY_SETTLE_MS } from "./claude-screen.js";
import { launchEnv, managerEnv, secretVars } from "./env.js";
import { managerClaimed } from "./herdr-claimed.js";
import { StartFailed } from "./start-failed.js";
import { transientScope } from "./transient.js";
import {
  fillPlaceholders,
  type Launched,
  type Launcher,
  type LaunchRequest,
  startedProcess,
} from "./types.js";

const TMUX_TIMEOUT_MS = 15_000;

/**
 * `-L NAME` when `$SHEEPDOG_TMUX_SOCKET` names a socket: tests (and anyone keeping managers
 * apart from their own tmux) get a server of their own.
 */
function socketArgs(): string[] {
  const socket = process.env.SHEEPDOG_TMUX_SOCKET;
  return socket ? ["-L", socket] : [];
}

function tmux(args: string[], env?: NodeJS.ProcessEnv): Promise<ToolResult> {
  return runTool("tmux", [...socketArgs(), ...args], { timeoutMs: TMUX_TIMEOUT_MS, env });
}

function failure(what: string, r: ToolResult): RuntimeFailure {
  if (r.spawnError) return new RuntimeFailure(`tmux ${what}: cannot run tmux: ${r.spawnError}`);
  if (r.timedOut) return new RuntimeFailure(`tmux ${what}: timed out`);
  return new RuntimeFailure(`tmux ${what}: ${firstLine(r.stderr) || `tmux exited with ${r.code}`}`);
}

/** The session a program's managers go in: `manager.tmux.session`, else the program name. */
export function sessionOf(program: ProgramContext): string {
  const session = program.config.manager.tmux?.session ?? program.name;
  // tmux silently rewrites `.` and `:` in session names, so the exact lookup would miss it.
  if (/[.:]/.test(session))
    throw new UsageError(
      `${program.configPath}: manager.tmux.session: expected a tmux session name without "." or ":", got ${JSON.stringify(session)}`,
    );
  return session;
}

/** The argv the window runs, placeholders filled, each one still a separate argument. */
export function commandOf(req: LaunchRequest): string[] {
  const { program } = req;
  const argv =
    program.config.manager.tmux?.command ?? AGENT_FACTS[agentKindOf(program.config)].launch.tmux;
  const vars = {
    prompt: req.prompt,
    reason: req.reason,
    program: program.name,
    root: program.root,
  };
  const filled = argv.map((a) => fillPlaceholders(a, vars));
  // tmux hands a single argument to `sh -c`; `env --` keeps even a one-word command shell-free.
  return filled.length === 1 ? ["env", "--", ...filled] : filled;
}

/**
 * Makes the session if absent. tmux is run without the page token in its environment (a
 * server it starts keeps that environment for every pane), and the session is told to remove
 * the token variable from every process it starts, for a server that was started elsewhere
 * with it set. A session it makes has a first window of its own (a shell): its id is returned,
 * so the start can close it once the manager's window is there (issue 33: no stray `0: bash`).
 */
async function ensureSession(
  program: ProgramContext,
  session: string,
): Promise<{ unit?: string; firstWindow?: string }> {
  let unit: string | undefined;
  let firstWindow: string | undefined;
  const env = launchEnv(program);
  const has = await tmux(["has-session", "-t", `=${session}`], env);
  if (has.spawnError || has.timedOut) throw failure("has-session", has);
  if (has.code !== 0) {
    // A server this starts outlives the tick: under systemd, in a scope of its own.
    const scope = await transientScope(program.name, "tmux", env);
    const args = [
      ...socketArgs(),
      "new-session",
      "-d",
      "-P",
      "-F",
      "#{window_id}",
      "-s",
      session,
      "-c",
      program.root,
    ];
    const made = scope
      ? await runTool(scope.prefix[0] as string, [...scope.prefix.slice(1), "tmux", ...args], {
          timeoutMs: TMUX_TIMEOUT_MS,
          env,
        })
      : await tmux(args.slice(socketArgs().length), env);
    if (made.code !== 0) {
      // Another start may have made it meanwhile: that is as good.
      const again = await tmux(["has-session", "-t", `=${session}`], env);
      if (again.code !== 0) throw failure(`new-session -s ${session}`, made);
    } else {
      unit = scope?.unit;
      const id = /@\d+/.exec(made.stdout)?.[0];
      if (id) firstWindow = id;
    }
  }
  for (const name of secretVars(program)) {
    const r = await tmux(["set-environment", "-t", `=${session}`, "-r", name], env);
    if (r.code !== 0) throw failure(`set-environment -t ${session} -r ${name}`, r);
  }
  return { ...(unit ? { unit } : {}), ...(firstWindow ? { firstWindow } : {}) };
}

async function start(req: LaunchRequest): Promise<Launched> {
  const { program } = req;
  const session = sessionOf(program);
  const argv = commandOf(req);
  const sinceMs = req.launchBegan;
  const { unit, firstWindow } = await ensureSession(program, session);
  const env = managerEnv(program);
  const envArgs = Object.entries(env).flatMap(([k, v]) => ["-e", `${k}=${v}`]);
  // tmux gives a new window the PATH of the client that asked for it, whatever `-e` says.
  const base = launchEnv(program);
  const clientEnv = env.PATH !== undefined ? { ...base, PATH: env.PATH } : base;
  const r = await tmux(
    [
      "new-window",
      "-d",
      "-P",
      "-F",
      "#{pane_id} #{window_id} #{pane_pid}",
      ...envArgs,
      "-c",
      program.root,
      "-t",
      `=${session}:`,
      "--",
      ...argv,
    ],
    clientEnv,
  );
  if (r.code !== 0) throw failure(`new-window in session ${session}`, r);
  // The session's first window, made with it, has done its part: the manager's window holds it.
  if (firstWindow) await tmux(["kill-window", "-t", firstWindow]).catch(() => {});
  const m = /^(%\d+) (@\d+) (\d+)\s*$/.exec(r.stdout);
  if (!m)
    throw new RuntimeFailure(
      `tmux new-window: expected "%PANE @WINDOW PID", got ${JSON.stringify(r.stdout.trim())}`,
    );
  const [, pane, window, pidText] = m as unknown as [string, string, string, string];
  const pid = Number(pidText);
  const launched: Launched = {
    launcher: "tmux",
    pane,
    window: `${session}:${window}`,
    pid,
    ...startedProcess(pid),
    ...(unit ? { unit } : {}),
  };
  const agent = agentStart(program.config);
  if (agent.runsIn(argv)) await pastDialogs(req, launched, sinceMs, agent);
  return launched;
}

/**
 * The agent in the new window: watched until its prompt arrives (DESIGN §7). A start held at
 * a dialog, or whose prompt never arrives, has its window closed and fails with the screen,
 * unless its manager claimed meanwhile: then it is a success whatever the screen said.
 */
async function pastDialogs(
  req: LaunchRequest,
  launched: Launched,
  sinceMs: number,
  agent: AgentStart,
) {
  const { program } = req;
  const pane = launched.pane as string;
  const claim = { stateDir: program.stateDir, sinceMs };
  const proc =
    launched.pid !== undefined && launched.start_time !== undefined
      ? { pid: launched.pid, start_time: launched.start_time }
      : null;
  const seat = seatOf(program.config);
  const transcriptEnv = managerTranscriptEnv(program.config.manager.env);
  const claimed = () => managerClaimed(claim, proc);
  try {
    await agent.watchStart({
      read: async () => {
        // A pane kept after its process ended (remain-on-exit) still shows its last screen.
        const dead = await tmux(["display-message", "-p", "-t", pane, "#{pane_dead}"]);
        if (dead.code !== 0 || dead.stdout.trim() === "1") return null;
        const s = await tmux(["capture-pane", "-p", "-t", pane]);
        return s.code === 0 ? s.stdout : null;
      },
      press: async (key) => {
        const s = await tmux(["send-keys", "-t", pane, key]);
        if (s.code !== 0) throw failure(`send-keys -t ${pane} ${key}`, s);
      },
      arrived: () =>
        agent.promptArrived(
          seat,
          { root: program.root, env: transcriptEnv },
          req.prompt,
          sinceMs,
        ) || claimed(),
      acceptTrustDialog: program.config.manager.tmux?.accept_trust_dialog === true,
      root: program.root,
      startMs: envMs("SHEEPDOG_TMUX_START_MS", 60_000),
      arrivalMs: envMs("SHEEPDOG_TMUX_ARRIVAL_MS", 30_000),
      signal: req.signal,
    });
  } catch (err) {
    if (claimed()) return;
    // A half-started manager must not linger: the window this start made is closed.
    await close(program, launched).catch(() => {});
    throw err instanceof StartFailed ? err : new StartFailed((err as Error).message);
  }
}

/**
 * Whether the pane is still the one this start made. Pane ids restart with a new tmux server,
 * so a recorded `%3` may now be someone else's pane: its process must be the recorded one.
 */
async function ownPane(launched: Launched): Promise<string | null> {
  const pane = launched.pane;
  if (!pane || !/^%\d+$/.test(pane)) return null;
  const r = await tmux(["display-message", "-p", "-t", pane, "#{pane_pid}"]);
  if (r.code !== 0) return null; // gone, or no server at all
  const pid = Number(r.stdout.trim());
  if (launched.pid !== undefined && pid !== launched.pid) return null;
  if (launched.start_time !== undefined) {
    const now = identityOf(pid);
    if (now && now.start_time !== launched.start_time) return null;
  }
  return pane;
}

async function close(_program: ProgramContext, launched: Launched): Promise<void> {
  const pane = await ownPane(launched);
  if (!pane) return;
  const r = await tmux(["kill-pane", "-t", pane]);
  // Gone already: its pane, its session (tmux 3.3 then says "no current target") or its server.
  if (
    r.code === 0 ||
    /can't find|no current target|no server running|error connecting/i.test(r.stderr)
  )
    return;
  throw failure(`kill-pane -t ${pane}`, r);
}

async function screen(_program: ProgramContext, launched: Launched): Promise<string | null> {
  const pane = await ownPane(launched);
  if (!pane) return null;
  const r = await tmux(["capture-pane", "-p", "-t", pane]);
  return r.code === 0 ? r.stdout : null;
}

/**
 * The nudge (and the resume line after a usage pause): the text typed literally, Enter once it
 * shows in the agent's input box (Enter sent with the text can land before the composer has
 * it; Codex 0.171.0 takes an Enter in the typed burst as a newline), by the pane the start made.
 */
async function nudge(_program: ProgramContext, launched: Launched, text: string) {
  const pane = await ownPane(launched);
  if (!pane) return null;
  const typed = await tmux(["send-keys", "-t", pane, "-l", text]);
  if (typed.code !== 0) throw failure(`send-keys -t ${pane} -l`, typed);
  const probe = text.slice(0, 40);
  const flat = (s: string) => s.replace(/\s+/g, " ");
  const end = Date.now() + 5000;
  for (;;) {
    const s = await tmux(["capture-pane", "-p", "-t", pane]);
    if (s.code === 0 && flat(s.stdout).includes(flat(probe))) break;
    if (Date.now() > end) break; // Enter anyway: the screen may wrap or hide what was typed
    await new Promise((r) => setTimeout(r, 100));
  }
  await new Promise((r) => setTimeout(r, KEY_SETTLE_MS));
  const enter = await tmux(["send-keys", "-t", pane, "Enter"]);
  if (enter.code !== 0) throw failure(`send-keys -t ${pane} Enter`, enter);
  return `tmux send-keys to ${pane}`;
}

export const launcher: Launcher = { start, close, screen, nudge };
