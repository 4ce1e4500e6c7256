// The herdr launcher (DESIGN §7), for Herdr 0.8.0 through 0.9.x: a fresh tab in the program's
// own Herdr workspace, an agent started in it (past a busy shell and, where allowed, Claude's
// folder-trust dialog), the one-line prompt sent and confirmed in the agent's transcript (or by
// the manager's claim), and the agent's pid from the pane's process info so it is stopped by
// exact pid like the other launchers' managers.
import { join } from "node:path";
import { AGENT_FACTS, agentKindOf } from "../agent/kinds.js";
import type { ProgramContext } from "../config/context.js";
import { RuntimeFailure } from "../errors.js";
import { which } from "../install/target.js";
import { seatOf } from "../usage/seat.js";
import { managerTranscriptEnv, projectDirOf } from "../usage/transcript.js";
import { envMs } from "../util/env-ms.js";
import { agentStart } from "./agent-start.js";
import { screenTail } from "./claude-screen.js";
import { launchEnv, managerEnv } from "./env.js";
import { managerClaimed } from "./herdr-claimed.js";
import { HerdrError, herdrJson, herdrText } from "./herdr-cli.js";
import {
  type Arrival,
  agentPrompt,
  type PromptTiming,
  promptUntilArrived,
} from "./herdr-prompt.js";
import { results } from "./herdr-schema.js";
import { visibleScreen } from "./herdr-screen.js";
import { type AgentStart, agentNow, agentProcess, startAgent } from "./herdr-start.js";
import { ensureWorkspace } from "./herdr-workspace.js";
import { oneLine, StartFailed } from "./start-failed.js";
import { fillPlaceholders, type Launched, type Launcher, type LaunchRequest } from "./types.js";

export interface HerdrTiming extends PromptTiming {
  /** `--timeout` of `agent start` (Herdr takes 3001…300000 ms). */
  startMs: number;
  /** How long `agent_pane_busy` is retried while a new pane's shell loads. */
  busyMs?: number;
}

export function defaultTiming(): HerdrTiming {
  return {
    startMs: envMs("SHEEPDOG_HERDR_START_MS", 60_000),
    busyMs: 10_000,
    promptMs: 20_000,
    arrivalMs: envMs("SHEEPDOG_HERDR_ARRIVAL_MS", 15_000),
    tries: 3,
  };
}

const MAX_NAME = 32;

/** `manager`, else `manager-2`, `manager-3`…: agent names are unique among live agents. */
export function freeAgentName(base: string, taken: ReadonlySet<string>): string {
  if (!taken.has(base)) return base;
  for (let i = 2; i < 1000; i++) {
    const suffix = `-${i}`;
    const name = `${base.slice(0, MAX_NAME - suffix.length)}${suffix}`;
    if (!taken.has(name)) return name;
  }
  throw new RuntimeFailure(`herdr: no free agent name like ${base}-N among the live agents`);
}

function settingsOf(program: ProgramContext) {
  const h = program.config.manager.herdr;
  const d = AGENT_FACTS[agentKindOf(program.config)].launch.herdr;
  return {
    workspace: h?.workspace ?? program.name,
    agent: h?.agent ?? "manager",
    kind: h?.kind ?? d.kind,
    args: h?.args ?? [...d.args],
    acceptTrustDialog: h?.accept_trust_dialog === true,
  };
}

async function closePane(pane: string, env: NodeJS.ProcessEnv): Promise<void> {
  try {
    await herdrText({ command: `herdr pane close ${pane}`, args: ["pane", "close", pane], env });
  } catch (err) {
    if (err instanceof HerdrError && /not_found/.test(err.code)) return;
    throw err;
  }
}

/**
 * The fix for `protocol_mismatch`, for the side Herdr's message names as the older
 * (`mismatch_response`, src/cli/protocol_guard.rs): a stale `herdr` earlier on PATH is replaced,
 * never the server restarted for it (that ends every pane's processes, herdr #3747); an old
 * server is restarted.
 */
export function protocolFix(message: string, env: NodeJS.ProcessEnv): string {
  const client = which("herdr", env.PATH) ?? "herdr";
  const older = /client protocol (\d+) is older than server protocol (\d+)/.exec(message);
  if (older)
    return `; the herdr on PATH (${client}, protocol ${older[1]}) is older than Herdr's running server (protocol ${older[2]}), as when a stale copy comes earlier on PATH: upgrade or replace that herdr (\`which -a herdr\` lists every one); leave the server running, its panes are fine`;
  const newer = /client protocol (\d+) is newer than server protocol (\d+)/.exec(message);
  if (newer)
    return `; Herdr's running server (protocol ${newer[2]}) is older than the herdr on PATH (${client}, protocol ${newer[1]}), as after \`herdr update\`: quit Herdr and start it again (\`herdr server stop\`, then \`herdr\`) so the server runs the new version; stopping it ends the processes in its panes`;
  return `; Herdr's client (${client}) and its running server speak different protocols: compare \`herdr --version\` with \`herdr status\`, then replace the herdr on PATH if it is the older, or quit Herdr and start it again if the server is`;
}

/** What to run when Herdr itself is the problem: a stopped server, a half-done update. */
function herdrFix(err: unknown, env: NodeJS.ProcessEnv): string {
  if (!(err instanceof HerdrError)) return "";
  if (err.code === "server_not_running")
    return "; Herdr's server is not running: start it (run `herdr` in a terminal, or the command Herdr names above)";
  if (err.code === "protocol_mismatch") return protocolFix(err.herdrMessage, env);
  return "";
}

/** Any failure after the tab exists, as a StartFailed that carries the screen and the workspace. */
async function failedStart(err: unknown, pane: string | undefined, env: NodeJS.ProcessEnv) {
  if (err instanceof StartFailed && err.screen !== undefined) return err;
  const screen = pane ? await visibleScreen(pane, env) : null;
  const reason = err instanceof StartFailed ? err.reason : (err as Error).message;
  return new StartFailed(
    `${oneLine(reason)}${herdrFix(err, env)}`,
    screen ? screenTail(screen) : undefined,
  );
}

/** A fresh tab for the manager in the program's workspace, with the manager's environment. */
async function newTab(program: ProgramContext, workspace: string, env: NodeJS.ProcessEnv) {
  const envArgs = Object.entries(managerEnv(program)).flatMap(([k, v]) => ["--env", `${k}=${v}`]);
  return herdrJson(
    {
      command: `herdr tab create --workspace ${workspace}`,
      args: [
        "tab",
        "create",
        "--workspace",
        workspace,
        "--cwd",
        program.root,
        "--label",
        "manager",
        ...envArgs,
        "--no-focus",
      ],
      env,
    },
    results.tabCreated,
  );
}

/** The transcript Herdr's Claude integration names (`agent_session`), when it names one. */
async function sessionTranscript(name: string, at: Arrival, root: string, env: NodeJS.ProcessEnv) {
  const session = (await agentNow(name, env).catch(() => null))?.agent_session;
  if (!session) return undefined;
  if (session.kind === "path") return session.value;
  if (session.kind === "id" && /^[A-Za-z0-9-]+$/.test(session.value))
    return join(projectDirOf(at.seat, root, at.env), `${session.value}.jsonl`);
  return undefined;
}

/**
 * A start whose manager claimed is a success whatever else failed after its agent started (the
 * arrival check, Herdr's answers): its pane is never closed. What it launched, or null.
 */
async function claimedAnyway(
  launched: Launched & { pane: string; agent: string },
  kind: string,
  at: Arrival,
  root: string,
  env: NodeJS.ProcessEnv,
): Promise<Launched | null> {
  const proc = await agentProcess(launched.pane, kind, env).catch(() => null);
  if (!managerClaimed(at, proc)) return null;
  const transcript = await sessionTranscript(launched.agent, at, root, env);
  return { ...launched, ...(proc ?? {}), ...(transcript ? { transcript } : {}) };
}

export async function startHerdr(
  req: LaunchRequest,
  timing: HerdrTiming = defaultTiming(),
): Promise<Launched> {
  const { program } = req;
  const root = program.root;
  const s = settingsOf(program);
  const sinceMs = req.launchBegan;
  // Herdr's server hands its environment to every pane: never the page token.
  const env = launchEnv(program);
  // A terminal takes text as keystrokes: the reason and prompt arrive as one line.
  const reason = oneLine(req.reason);
  const prompt = oneLine(req.prompt);
  // The transcript folder is named as the manager names it: its manager.env may rename it.
  const seat = seatOf(program.config);
  const transcriptEnv = managerTranscriptEnv(program.config.manager.env);
  const agent = agentStart(program.config);
  const at: Arrival = {
    seat,
    sinceMs,
    env: transcriptEnv,
    stateDir: program.stateDir,
    arrived: (text: string, since: number) =>
      agent.promptArrived(seat, { root, env: transcriptEnv }, text, since),
  };

  let workspace: string | undefined;
  let pane: string | undefined;
  /** Set once the agent runs: from then on a claim makes the start a success. */
  let started: (Launched & { pane: string; agent: string }) | null = null;
  try {
    workspace = await ensureWorkspace(program.stateDir, s.workspace, root, env);
    const tab = await newTab(program, workspace, env);
    pane = tab.root_pane.pane_id;
    const live = await herdrJson(
      { command: "herdr agent list", args: ["agent", "list"], env },
      results.agentList,
    );
    const name = freeAgentName(
      s.agent,
      new Set(live.agents.flatMap((a) => (a.name ? [a.name] : []))),
    );
    const vars = { prompt, reason, program: program.name, root };
    const start: AgentStart = {
      name,
      kind: s.kind,
      pane,
      args: s.args.map((a) => fillPlaceholders(a, vars)),
      root,
      startMs: timing.startMs,
      busyMs: timing.busyMs ?? 10_000,
      acceptTrustDialog: s.acceptTrustDialog,
      env,
      ...(req.signal ? { signal: req.signal } : {}),
    };
    await startAgent(start);
    started = { launcher: "herdr", pane, window: tab.tab.tab_id, agent: name, workspace };
    await promptUntilArrived(start, prompt, at, timing);
    const proc = await agentProcess(pane, s.kind, env);
    const transcript = await sessionTranscript(name, at, root, env);
    return { ...started, ...(proc ?? {}), ...(transcript ? { transcript } : {}) };
  } catch (err) {
    if (started) {
      const claimed = await claimedAnyway(started, s.kind, at, root, env);
      if (claimed) return claimed;
    }
    // A half-started manager must not linger: the pane this start made is closed.
    const failed = await failedStart(err, pane, env);
    if (pane) await closePane(pane, env).catch(() => {});
    if (workspace) failed.workspace = workspace;
    throw failed;
  }
}

/**
 * Whether the recorded pane is still the one this start made (Herdr may have restarted and
 * handed the id to another pane): it must be in the recorded tab.
 */
async function ownPane(launched: Launched, env: NodeJS.ProcessEnv): Promise<string | null> {
  const pane = launched.pane;
  if (!pane) return null;
  try {
    const info = await herdrJson(
      { command: `herdr pane get ${pane}`, args: ["pane", "get", pane], env },
      results.paneInfo,
    );
    if (launched.window !== undefined && info.pane.tab_id !== launched.window) return null;
    return pane;
  } catch (err) {
    if (err instanceof HerdrError && /not_found/.test(err.code)) return null;
    throw err;
  }
}

async function close(program: ProgramContext, launched: Launched): Promise<void> {
  const env = launchEnv(program);
  const pane = await ownPane(launched, env);
  if (pane) await closePane(pane, env);
}

/** The pane's visible screen (evidence): what a busy agent shows, by pane, never by name. */
async function screen(program: ProgramContext, launched: Launched): Promise<string | null> {
  const env = launchEnv(program);
  const pane = await ownPane(launched, env);
  return pane ? visibleScreen(pane, env) : null;
}

/**
 * The nudge: `herdr agent prompt` to the agent the start made, once its pane is checked to be
 * that start's. A stall or a timeout proves nothing either way (see herdr-prompt.ts), so only
 * Herdr's refusals fail it; the restart after nudge_wait does not depend on it.
 */
async function nudge(program: ProgramContext, launched: Launched, text: string) {
  const env = launchEnv(program);
  const pane = await ownPane(launched, env);
  if (!pane || !launched.agent) return null;
  const said = await agentPrompt(launched.agent, text, 20_000, env);
  if (said === "blocked")
    throw new RuntimeFailure(`herdr agent prompt ${launched.agent}: agent_blocked`);
  const note = said === "herdr said delivered" ? "" : `; herdr said ${said}`;
  return `herdr agent prompt ${launched.agent} (pane ${pane}${note})`;
}

export const launcher: Launcher = { start: (req) => startHerdr(req), close, screen, nudge };
