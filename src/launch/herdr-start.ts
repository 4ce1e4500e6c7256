// `herdr agent start` as real Herdr answers it (v0.8.0, v0.8.2, 0.9.x): a new pane's shell may
// still be busy with its startup files (`agent_pane_busy`), and an agent Herdr sees `blocked`
// fails the start with `agent_not_ready` from 0.8.2 on (on 0.8.0 the start returns with the
// agent `blocked`). `blocked` is a hint: only a dialog on the screen holds the start. Then the
// pid, which AgentInfo does not carry, from `pane process-info`.
import { basename } from "node:path";
import { identityOf } from "../process/identity.js";
import {
  dialogFix,
  isTrustDialog,
  KEY_SETTLE_MS,
  screenTail,
  showsDialog,
  trustKey,
} from "./claude-screen.js";
import { HerdrError, herdrJson, herdrText } from "./herdr-cli.js";
import { type AgentInfo, results } from "./herdr-schema.js";
import { visibleScreen } from "./herdr-screen.js";
import { StartFailed } from "./start-failed.js";
import { trustKeys } from "./start-watch.js";

export interface AgentStart {
  name: string;
  kind: string;
  pane: string;
  args: string[];
  root: string;
  /** `--timeout` of `agent start` and of the wait after a dialog is answered. */
  startMs: number;
  /** How long `agent_pane_busy` is retried while the new shell loads. */
  busyMs: number;
  acceptTrustDialog: boolean;
  env: NodeJS.ProcessEnv;
  /** The pass's: once it is given up, the start presses and sends nothing more. */
  signal?: AbortSignal;
}

/** Fails the start once its pass is given up (checked before each call that acts on the pane). */
export function throwIfGivenUp(s: AgentStart): void {
  if (s.signal?.aborted)
    throw new StartFailed(`herdr: agent ${s.name}'s start was given up with its pass`);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const BUSY_POLL_MS = 500;

function startCall(s: AgentStart) {
  return herdrJson(
    {
      command: `herdr agent start ${s.name}`,
      args: [
        "agent",
        "start",
        s.name,
        "--kind",
        s.kind,
        "--pane",
        s.pane,
        "--timeout",
        String(s.startMs),
        ...(s.args.length > 0 ? ["--", ...s.args] : []),
      ],
      waitMs: s.startMs,
      env: s.env,
    },
    results.agentStarted,
  );
}

/** `agent start`, retried on `agent_pane_busy` for up to `busyMs`; null when held at a dialog. */
async function startWhenShellIsFree(s: AgentStart): Promise<AgentInfo | null> {
  const deadline = Date.now() + s.busyMs;
  for (;;) {
    throwIfGivenUp(s);
    try {
      const started = await startCall(s);
      // Herdr 0.8.0 returns a start whose agent is held at a dialog.
      return started.agent.agent_status === "blocked" ? null : started.agent;
    } catch (err) {
      if (!(err instanceof HerdrError)) throw err;
      if (err.code === "agent_not_ready") return null;
      if (err.code !== "agent_pane_busy" || Date.now() >= deadline) throw err;
    }
    await sleep(BUSY_POLL_MS);
  }
}

/**
 * An agent Herdr calls `blocked`: Claude's folder-trust dialog is answered when the program
 * opted in and the screen is exactly that dialog: the selection is moved to its "Yes" option
 * (2.1.328 selects "No, exit" first), re-read after each key, then confirmed with Enter. Any
 * other dialog fails the start with the screen and the fix. False when the screen shows no
 * dialog at all: Herdr said `blocked` from text alone (herdr #4064), and the agent takes input.
 */
export async function passDialog(s: AgentStart, what: string): Promise<boolean> {
  let screen = await visibleScreen(s.pane, s.env);
  if (!showsDialog(screen)) return false;
  const held = () =>
    new StartFailed(
      `herdr: agent ${s.name} ${what} held at a dialog; ${dialogFix(screen, s.root, "herdr")}`,
      screen ? screenTail(screen) : undefined,
    );
  if (!(s.acceptTrustDialog && isTrustDialog(screen))) throw held();
  // The keys as every start presses them (start-watch.ts trustKeys), through Herdr.
  const pane = {
    read: () => visibleScreen(s.pane, s.env),
    press: async (key: "Enter" | "Down" | "Up") => {
      throwIfGivenUp(s);
      const name = key.toLowerCase();
      await herdrText({
        command: `herdr agent send-keys ${s.name} ${name}`,
        args: ["agent", "send-keys", s.name, name],
        env: s.env,
      });
    },
    ...(s.signal ? { signal: s.signal } : {}),
  };
  const press = trustKeys(KEY_SETTLE_MS, trustKey); // then `agent wait`, below
  const deadline = Date.now() + s.startMs;
  for (;;) {
    throwIfGivenUp(s);
    const key = trustKey(screen);
    // A dialog that takes no key is held there once startMs has passed, as under tmux.
    if (key === null || Date.now() >= deadline) throw held();
    const step = await press(key, pane);
    if (step === "pressed" && key === "enter") break;
    if (step === "wait") await sleep(KEY_SETTLE_MS);
    screen = await visibleScreen(s.pane, s.env);
    if (!isTrustDialog(screen)) return true;
  }
  await herdrJson(
    {
      command: `herdr agent wait ${s.name}`,
      args: [
        "agent",
        "wait",
        s.name,
        "--until",
        "idle",
        "--until",
        "done",
        "--timeout",
        String(s.startMs),
      ],
      waitMs: s.startMs,
      env: s.env,
    },
    results.any,
  );
  return true;
}

/** Starts the agent and gets it past a start-up dialog where allowed (no dialog: it is up). */
export async function startAgent(s: AgentStart): Promise<void> {
  const ready = await startWhenShellIsFree(s);
  if (!ready) await passDialog(s, "started but is");
}

/** The agent's AgentInfo now (its status, its session). */
export async function agentNow(name: string, env: NodeJS.ProcessEnv): Promise<AgentInfo> {
  const r = await herdrJson(
    { command: `herdr agent get ${name}`, args: ["agent", "get", name], env },
    results.agentInfo,
  );
  return r.agent;
}

/**
 * The agent's pid and start time from the pane's foreground job: the process named like the
 * agent kind, else the group leader. Null when Herdr reports none.
 */
export async function agentProcess(
  pane: string,
  kind: string,
  env: NodeJS.ProcessEnv,
): Promise<{ pid: number; start_time: string } | null> {
  const r = await herdrJson(
    {
      command: `herdr pane process-info --pane ${pane}`,
      args: ["pane", "process-info", "--pane", pane],
      env,
    },
    results.paneProcessInfo,
  );
  const info = r.process_info;
  const procs = info.foreground_processes ?? [];
  const named = procs.find((p) => p.name === kind || basename(p.argv0 ?? "") === kind);
  const pid = named?.pid ?? info.foreground_process_group_id ?? procs[0]?.pid;
  if (pid === undefined || pid === null || pid === info.shell_pid) return null;
  const id = identityOf(pid);
  return id ? { pid, start_time: id.start_time } : null;
}
