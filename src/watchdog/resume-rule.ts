// The resume line (DESIGN §19): an agent that does not go on by itself after a usage limit
// (Codex 0.171.0 waits at its prompt for ever) is typed `manager.resume_line` once the pause
// ends, when its holder is alive at its prompt in a pane. A manager that exited is started
// anew by the rules as usual. Pure, like decide.
import type { Effect } from "./effects.js";
import type { Facts } from "./facts.js";
import { ms } from "./gaps.js";
import { startOfHolder } from "./holder-start.js";
import { type Decision, type NeedsFacts, needs } from "./rule-context.js";

/**
 * Whether the newest usage pause was ended early by a person's `unpaused` (no tick ended it, so
 * none typed the line) while the holder held the claim, and nothing since: no save of its own,
 * no resume line typed.
 */
function endedByPerson(facts: Facts, claim: Extract<Facts["claim"], { pid: number }>): boolean {
  if (facts.paused) return false;
  const last = facts.history.pauses.at(-1);
  if (!last) return false;
  const ended = ms(last.to);
  const now = ms(facts.now);
  // Ended at its `until`: the tick that journaled `unpaused` typed it (or tried).
  if (!last.by_person || !(ended <= now)) return false;
  if (ms(claim.claimed_at) >= ended) return false;
  const hb = facts.heartbeat;
  if (hb && hb.pid === claim.pid && ms(hb.at) >= ended) return false;
  const typed = facts.history.activity_events?.resume_typed;
  return !(typed && ms(typed.at) >= ended);
}

/**
 * `d` with the resume line typed after its unpause, when it leaves a live holder running
 * (rule 7) at its prompt in a pane; asks for the holder's activity first. `resumeLine` null:
 * the agent goes on by itself (Claude Code), nothing is typed.
 */
export function withResumeLine(
  d: Decision,
  facts: Facts,
  resumeLine: string | null | undefined,
): Decision | NeedsFacts {
  if (!resumeLine || d.decision !== "ok") return d;
  const claim = facts.claim;
  if (claim.state !== "alive") return d;
  // A usage pause (it names its window; a person's `sheepdog pause` is not a limit's) that this
  // tick ends, or that a person ended (`unpause`, a page's button) since the holder's last sign
  // of life, with no line typed since.
  const endsNow = facts.paused?.window && d.effects.some((e) => e.kind === "unpause");
  if (!endsNow && !endedByPerson(facts, claim)) return d;
  const start = startOfHolder(facts.history.last_start, claim);
  if (!start || start.launcher === "command" || start.pane === undefined) return d;
  if (facts.unread?.includes("activity")) return needs("activity");
  if (facts.activity?.turn_ended !== true) return d;
  const resume: Effect = {
    kind: "resume_line",
    pid: claim.pid,
    start,
    text: resumeLine,
    reason: `the usage pause ended and pid ${claim.pid} waits at its prompt (its agent does not go on by itself)`,
  };
  return {
    ...d,
    reason: `${d.reason}; the resume line is typed into its ${start.launcher} pane`,
    effects: [...d.effects, resume],
  };
}
