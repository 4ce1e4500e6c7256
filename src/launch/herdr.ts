// The herdr launcher (DESIGN §7): a fresh tab in the program's Herdr workspace, an agent started
// in it, and the one-line prompt sent and confirmed in the agent's transcript.
import type { ProgramContext } from "../config/context.js";
import { RuntimeFailure } from "../errors.js";
import { identityOf } from "../process/identity.js";
import { seatOf } from "../usage/seat.js";
import { iso } from "../util/time.js";
import { launchEnv, managerEnv } from "./env.js";
import { projectDirOf, waitForArrival } from "./herdr-arrival.js";
import { HerdrError, herdrJson, herdrText } from "./herdr-cli.js";
import { results } from "./herdr-schema.js";
import { fillPlaceholders, type Launched, type Launcher, type LaunchRequest } from "./types.js";

export interface HerdrTiming {
  /** `--timeout` of `agent start` (Herdr takes 3001…300000 ms). */
  startMs: number;
  /** `--timeout` of `agent prompt --wait`. */
  promptMs: number;
  /** How long each try waits for the prompt to show up in the transcript. */
  arrivalMs: number;
  /** Prompts sent before giving up. */
  tries: number;
}

function envMs(name: string, fallback: number): number {
  const n = Number(process.env[name]);
  return Number.isFinite(n) && n > 0 ? n : fallback;
}

export function defaultTiming(): HerdrTiming {
  return {
    startMs: 60_000,
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
  return {
    workspace: h?.workspace ?? program.name,
    agent: h?.agent ?? "manager",
    kind: h?.kind ?? "claude",
    args: h?.args ?? [],
  };
}

async function findOrCreateWorkspace(
  label: string,
  root: string,
  env: NodeJS.ProcessEnv,
): Promise<string> {
  const list = await herdrJson(
    { command: "herdr workspace list", args: ["workspace", "list"], env },
    results.workspaceList,
  );
  const found = list.workspaces.find((w) => w.label === label);
  if (found) return found.workspace_id;
  const made = await herdrJson(
    {
      command: `herdr workspace create --label ${label}`,
      args: ["workspace", "create", "--cwd", root, "--label", label, "--no-focus"],
      env,
    },
    results.workspaceCreated,
  );
  return made.workspace.workspace_id;
}

async function closePane(pane: string, env: NodeJS.ProcessEnv): Promise<void> {
  try {
    await herdrText({ command: `herdr pane close ${pane}`, args: ["pane", "close", pane], env });
  } catch (err) {
    if (err instanceof HerdrError && /not_found/.test(err.code)) return;
    throw err;
  }
}

async function screenTail(name: string, lines: number, env: NodeJS.ProcessEnv): Promise<string> {
  try {
    const text = await herdrText({
      command: `herdr agent read ${name}`,
      args: ["agent", "read", name, "--source", "recent", "--lines", String(lines)],
      env,
    });
    const tail = text.trimEnd().split("\n").slice(-lines).join("\n");
    return tail ? `\nlast screen:\n${tail}` : "";
  } catch {
    return "";
  }
}

/** Sends the prompt until the transcript shows it, at most `tries` times. */
async function promptUntilArrived(
  name: string,
  prompt: string,
  seat: string,
  root: string,
  sinceMs: number,
  t: HerdrTiming,
  env: NodeJS.ProcessEnv,
): Promise<void> {
  const notes: string[] = [];
  for (let attempt = 1; attempt <= t.tries; attempt++) {
    try {
      await herdrJson(
        {
          command: `herdr agent prompt ${name}`,
          args: [
            "agent",
            "prompt",
            name,
            prompt,
            "--wait",
            "--until",
            "working",
            "--timeout",
            String(t.promptMs),
          ],
          waitMs: t.promptMs,
          env,
        },
        results.agentPrompted,
      );
      notes.push(`try ${attempt}: herdr said delivered`);
    } catch (err) {
      // A stalled or timed-out wait is no proof either way: the transcript decides.
      if (!(err instanceof HerdrError && /^(agent_prompt_stalled|timeout)$/.test(err.code)))
        throw err;
      notes.push(`try ${attempt}: ${err.code}`);
    }
    if (await waitForArrival(seat, root, prompt, sinceMs, t.arrivalMs)) return;
  }
  throw new RuntimeFailure(
    `herdr: the prompt never reached agent ${name}: no user entry with it in the transcripts under ${projectDirOf(seat, root)} since ${iso(sinceMs)} after ${t.tries} tries (${notes.join("; ")})`,
  );
}

export async function startHerdr(
  req: LaunchRequest,
  timing: HerdrTiming = defaultTiming(),
): Promise<Launched> {
  const { program } = req;
  const root = program.root;
  const s = settingsOf(program);
  const sinceMs = Date.now();
  // Herdr's server hands its environment to every pane: never the page token.
  const env = launchEnv(program);

  const workspace = await findOrCreateWorkspace(s.workspace, root, env);
  const envArgs = Object.entries(managerEnv(program)).flatMap(([k, v]) => ["--env", `${k}=${v}`]);
  const tab = await herdrJson(
    {
      command: `herdr tab create --workspace ${workspace}`,
      args: [
        "tab",
        "create",
        "--workspace",
        workspace,
        "--cwd",
        root,
        "--label",
        "manager",
        ...envArgs,
        "--no-focus",
      ],
      env,
    },
    results.tabCreated,
  );
  const pane = tab.root_pane.pane_id;
  const tabId = tab.tab.tab_id;

  // From here on a failure closes the pane it made: a half-started manager must not linger.
  let name = s.agent;
  try {
    const live = await herdrJson(
      { command: "herdr agent list", args: ["agent", "list"], env },
      results.agentList,
    );
    name = freeAgentName(s.agent, new Set(live.agents.flatMap((a) => (a.name ? [a.name] : []))));
    const vars = { prompt: req.prompt, reason: req.reason, program: program.name, root };
    const args = s.args.map((a) => fillPlaceholders(a, vars));
    const started = await herdrJson(
      {
        command: `herdr agent start ${name}`,
        args: [
          "agent",
          "start",
          name,
          "--kind",
          s.kind,
          "--pane",
          pane,
          "--timeout",
          String(timing.startMs),
          ...(args.length > 0 ? ["--", ...args] : []),
        ],
        waitMs: timing.startMs,
        env,
      },
      results.agentStarted,
    );
    await promptUntilArrived(name, req.prompt, seatOf(program.config), root, sinceMs, timing, env);
    const pid = started.agent.pid ?? undefined;
    const identity = pid !== undefined ? identityOf(pid) : null;
    return {
      launcher: "herdr",
      pane: started.agent.pane_id,
      window: tabId,
      agent: name,
      ...(pid !== undefined && identity ? { pid, start_time: identity.start_time } : {}),
    };
  } catch (err) {
    const screen = err instanceof RuntimeFailure ? await screenTail(name, 8, env) : "";
    await closePane(pane, env).catch(() => {});
    if (err instanceof RuntimeFailure && screen)
      throw new RuntimeFailure(`${err.message} (pane ${pane} closed)${screen}`);
    throw err;
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

async function screen(program: ProgramContext, launched: Launched): Promise<string | null> {
  const env = launchEnv(program);
  if (!launched.agent || !(await ownPane(launched, env))) return null;
  try {
    return await herdrText({
      command: `herdr agent read ${launched.agent}`,
      args: ["agent", "read", launched.agent, "--source", "recent", "--lines", "60"],
      env,
    });
  } catch (err) {
    if (err instanceof HerdrError) return null;
    throw err;
  }
}

export const launcher: Launcher = { start: (req) => startHerdr(req), close, screen };
