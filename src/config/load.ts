import { readFileSync } from "node:fs";
import { join } from "node:path";
import { AGENT_FACTS, agentKindOf, DEFAULT_RESUME_LINE } from "../agent/kinds.js";
import { UsageError } from "../errors.js";
import { formatDuration, parseDuration } from "../util/duration.js";
import { envMs } from "../util/env-ms.js";
import { expandHome, isErrno } from "../util/fs.js";
import { jsonErrorLocation } from "../util/json-location.js";
import { agentProblems, withAgentDefaults } from "./agent-config.js";
import { CONFIG_FILE } from "./files.js";
import { describeIssue } from "./issues.js";
import type { LeaseTimes, Policy } from "./policy.js";
import { type ProgramConfig, programSchema } from "./schema.js";
import { leaseTtlNeeded } from "./warnings.js";

export type { LeaseTimes, Policy } from "./policy.js";
export { CONFIG_FILE };

/** The one place a lease's `ttl` and `margin` are parsed. */
export function leaseTimesOf(lease: { ttl: string; margin: string }): LeaseTimes {
  return { ttl: parseDuration(lease.ttl), margin: parseDuration(lease.margin) };
}

export interface Program {
  name: string;
  root: string;
  configPath: string;
  config: ProgramConfig;
  policy: Policy;
}

export const TICK_DEADLINE_MS = 4 * 60_000;

/**
 * A pass's deadline, in ms: `SHEEPDOG_TICK_DEADLINE_MS` (tests), else 4 min. One reading for the
 * supervisor that gives a pass up and the tick lock that ages against it, so they agree.
 */
export function passDeadlineMs(env: NodeJS.ProcessEnv = process.env): number {
  return envMs("SHEEPDOG_TICK_DEADLINE_MS", TICK_DEADLINE_MS, env);
}

/** Reads and validates `<root>/program.json`; throws UsageError (exit 2) naming what is wrong. */
export function loadProgram(root: string): Program {
  return loadProgramText(root).program;
}

/** `<root>/program.json` has no file at all (init was never run): no fallback applies. */
export class ConfigMissing extends UsageError {}

/** loadProgram, with the text it validated (kept as the last valid config). */
export function loadProgramText(root: string): { program: Program; text: string } {
  const configPath = join(root, CONFIG_FILE);
  let text: string;
  try {
    text = readFileSync(configPath, "utf8");
  } catch (err) {
    if (isErrno(err, "ENOENT"))
      throw new ConfigMissing(`${configPath}: not found (run: sheepdog init ${root})`);
    throw new UsageError(`${configPath}: cannot read: ${(err as Error).message}`);
  }
  return { program: programOf(root, text, configPath), text };
}

/** A Program from config text (`file` names it in errors). */
export function programOf(root: string, text: string, file = join(root, CONFIG_FILE)): Program {
  const config = parseConfig(text, file);
  return {
    name: config.name,
    root,
    configPath: join(root, CONFIG_FILE),
    config,
    policy: policyOf(config),
  };
}

/** Parses program.json text; every error names the file, the JSON path and what was expected. */
export function parseConfig(text: string, file: string): ProgramConfig {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    const { line, column } = jsonErrorLocation(text);
    const detail = (err as Error).message
      .replace(/ in JSON at position \d+.*$/, "")
      .replace(/,\s*(?:\.\.\.)?".*$/s, "");
    throw new UsageError(`${file}: invalid JSON at line ${line}, column ${column}: ${detail}`);
  }
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    throw new UsageError(`${file}: expected a JSON object at the top level`);
  }
  const result = programSchema.safeParse(raw);
  if (!result.success) {
    // One issue can name several unknown keys, a line each: every line names the file.
    const lines = result.error.issues.flatMap((issue) => describeIssue(issue, raw).split("\n"));
    throw new UsageError(lines.map((l) => `${file}: ${l}`).join("\n"));
  }
  const config = withAgentDefaults(result.data, raw);
  const problems = loadProblems(config);
  if (problems.length > 0) throw new UsageError(problems.map((l) => `${file}: ${l}`).join("\n"));
  return expandPaths(config);
}

/**
 * What a start or a lease would only find out later (DESIGN §16: refuse at load what can be
 * refused, so `check` says it and a tick never fails on it): the fields the launcher needs, and
 * a lease ttl too short to fence in time.
 */
function loadProblems(config: ProgramConfig): string[] {
  const m = config.manager;
  // (A missing manager.command is allowed: a program that is only inspected needs none; check
  // warns, and a start without one is a failed start the crash-loop guard counts.)
  const out: string[] = agentProblems(config);
  // A holder must fence itself (ttl − margin without a renewal) before another host may take
  // over (ttl + margin), with a tick between: ttl ≥ 2 × margin + interval (DESIGN §15).
  const lease = config.lease;
  if (lease) {
    const least = leaseTtlNeeded(leaseTimesOf(lease), parseDuration(config.watchdog.interval));
    if (least !== null)
      out.push(
        `lease.ttl: expected at least 2 × lease.margin + watchdog.interval (${formatDuration(least)}), got ${JSON.stringify(lease.ttl)}: a host could be taken over before it has fenced itself`,
      );
  }
  // Commands on the page topic would ring the phone, and pages would be read as commands.
  const ntfy = config.page?.ntfy;
  if (ntfy?.control_topic !== undefined && ntfy.control_topic === ntfy.topic)
    out.push(
      `page.ntfy.control_topic: expected a topic other than page.ntfy.topic, got ${JSON.stringify(ntfy.control_topic)} for both`,
    );
  const session = m.tmux?.session;
  if (m.launcher === "tmux" && session !== undefined && /[.:]/.test(session))
    out.push(
      `manager.tmux.session: expected a tmux session name without "." or ":", got ${JSON.stringify(session)}`,
    );
  return out;
}

function expandPaths(config: ProgramConfig): ProgramConfig {
  const c = structuredClone(config);
  if (c.usage.seat) c.usage.seat = expandHome(c.usage.seat);
  if (c.manager.env.CLAUDE_CONFIG_DIR)
    c.manager.env.CLAUDE_CONFIG_DIR = expandHome(c.manager.env.CLAUDE_CONFIG_DIR);
  if (c.manager.env.CODEX_HOME) c.manager.env.CODEX_HOME = expandHome(c.manager.env.CODEX_HOME);
  if (c.merge_lock) c.merge_lock.repo = expandHome(c.merge_lock.repo);
  if (c.ledger) c.ledger.repo = expandHome(c.ledger.repo);
  if (c.lease) {
    c.lease.repo = expandHome(c.lease.repo);
    c.lease.ref ??= `refs/sheepdog/lease/${c.name}`;
  }
  if (c.page?.ntfy?.token_file) c.page.ntfy.token_file = expandHome(c.page.ntfy.token_file);
  return c;
}

export function policyOf(config: ProgramConfig): Policy {
  const w = config.watchdog;
  const page = config.page;
  return {
    interval: parseDuration(w.interval),
    cadence: parseDuration(w.interval),
    staleAfter: parseDuration(w.stale_after),
    claimGrace: parseDuration(w.claim_grace),
    mergeMax: parseDuration(w.merge_max),
    quietAfter: parseDuration(w.quiet_after),
    nudgeWait: parseDuration(w.nudge_wait),
    crashLoopStarts: w.crash_loop.starts,
    crashLoopWithin: parseDuration(w.crash_loop.within),
    noProgressHandOvers: w.no_progress_hand_overs,
    handOverTokens: config.hand_over_tokens,
    pauseAtPercent: config.usage.pause_at_percent,
    pauseFallback: parseDuration(config.usage.pause_fallback),
    pageCooldown: parseDuration(page?.cooldown ?? "6h"),
    remindEvery: parseDuration(page?.remind_every ?? "4h"),
    reminders: page?.reminders ?? 2,
    tickDeadline: passDeadlineMs(),
    lease: config.lease ? leaseTimesOf(config.lease) : null,
    agentLabel: AGENT_FACTS[agentKindOf(config)].label,
    resumeLine: AGENT_FACTS[agentKindOf(config)].continuesAfterLimit
      ? null
      : (config.manager.resume_line ?? DEFAULT_RESUME_LINE),
  };
}
