// The Codex CLI as the manager's agent (DESIGN §19), tested on 0.171.0: its seat is the
// CODEX_HOME in effect, its transcript the manager's rollout, and every reading comes from the
// rollout's end (src/agent/codex/rollout.ts). It has no statusline: the usage readings in the
// rollout's `rate_limits` are recorded for the seat by save and the tick.
import { statSync } from "node:fs";
import { join, resolve } from "node:path";
import { linesBackward } from "../../usage/backward.js";
import type { NewReading } from "../../usage/readings.js";
import type { Refusal } from "../../usage/transcript.js";
import { plausibleReset } from "../../usage/window-bounds.js";
import { expandHome } from "../../util/fs.js";
import { homeDir } from "../../util/lazy.js";
import { iso } from "../../util/time.js";
import type { Agent } from "../agent.js";
import { AGENT_FACTS } from "../kinds.js";
import { findRollout, rolloutSession } from "./locate.js";
import { type RolloutState, readRollout } from "./rollout.js";

/** The seat of a Codex manager: `usage.seat`, else its `CODEX_HOME`, else `~/.codex`. */
export function codexSeat(
  config: { manager: { env: Record<string, string> }; usage: { seat?: string } },
  env: NodeJS.ProcessEnv = process.env,
): string {
  const chosen =
    config.usage.seat ??
    config.manager.env.CODEX_HOME ??
    env.CODEX_HOME ??
    join(homeDir(env), ".codex");
  return resolve(expandHome(chosen));
}

/** One read of a rollout serves every question a pass asks of it, while the file is unchanged. */
let last: { key: string; state: RolloutState } | null = null;

function stateOf(path: string): RolloutState {
  let key = path;
  try {
    const st = statSync(path);
    key = `${path}\u0000${st.size}\u0000${st.mtimeMs}`;
  } catch {
    // gone: read as empty below
  }
  if (last?.key === key) return last.state;
  let state: RolloutState;
  try {
    state = readRollout(linesBackward(path));
  } catch {
    state = {
      context_tokens: null,
      context_at: null,
      model_context_window: null,
      readings: null,
      refusal: null,
      activity: { state: "unknown", at: null },
    };
  }
  last = { key, state };
  return state;
}

/** The rollout's newest rate_limits as seat readings (a window with no reset is none). */
export function readingsOf(state: RolloutState, session: string | null): NewReading[] {
  const r = state.readings;
  if (!r) return [];
  const readAt = r.at ? Date.parse(r.at) : Date.now();
  return r.windows.flatMap((w) => {
    if (w.resets_at === null) return [];
    const ms = w.resets_at * 1000;
    if (!plausibleReset(w.window, ms, readAt, { pastIsFine: true })) return [];
    return [
      {
        window: w.window,
        used_percentage: Math.min(100, Math.max(0, w.used_percentage)),
        resets_at: iso(ms),
        source: "rollout" as const,
        ...(session ? { session } : {}),
      },
    ];
  });
}

export const codex: Agent = {
  ...AGENT_FACTS.codex,
  kind: "codex",
  seat: codexSeat,
  findTranscript: findRollout,
  context(transcript) {
    if (!transcript) return { tokens: null, window: null };
    const s = stateOf(transcript);
    return { tokens: s.context_tokens, window: s.model_context_window };
  },
  refusal(transcript): Refusal | null {
    const r = stateOf(transcript).refusal;
    if (!r) return null;
    return {
      text: r.text,
      resets_at: r.resets_at,
      at: r.at,
      window: r.window,
      ...(r.untrusted_reset ? { untrusted_reset: r.untrusted_reset } : {}),
    };
  },
  readings: (transcript) => readingsOf(stateOf(transcript), rolloutSession(transcript)),
  tail: (transcript) => stateOf(transcript).activity,
  shellTool: "exec_command",
  contextReady(transcript) {
    const s = stateOf(transcript);
    if (s.activity.state !== "tool_open") return true;
    return s.context_at != null && s.context_at >= s.activity.tool.since;
  },
  sessionOf: rolloutSession,
  sideGrewAt: () => null,
};
