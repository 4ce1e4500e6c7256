// The program's settings as the watchdog reads them: every duration in ms, parsed once by
// config/load.ts (policyOf). Types only, so the rules, gaps and warnings import them without
// load.ts (which imports the warnings).

/** Every duration as milliseconds: what the watchdog's rules read. */
export interface Policy {
  interval: number;
  /**
   * How often the watchdog really runs (DESIGN §6): `tick --every` (the units install writes
   * pass it), else the interval. Gaps are judged against it.
   */
  cadence: number;
  staleAfter: number;
  claimGrace: number;
  mergeMax: number;
  /** A live holder this long without a save has its activity read (DESIGN §14). */
  quietAfter: number;
  /** How long a nudged idle manager has to save before it is restarted. */
  nudgeWait: number;
  crashLoopStarts: number;
  crashLoopWithin: number;
  noProgressHandOvers: number;
  /** A token count, or "auto": 75 % of the manager session's context window. */
  handOverTokens: number | "auto";
  pauseAtPercent: number;
  pauseFallback: number;
  pageCooldown: number;
  remindEvery: number;
  reminders: number;
  /** A tick that runs longer than this is considered hung; its lock may be broken. */
  tickDeadline: number;
  /**
   * The line typed into a live holder at its prompt when a usage pause ends (DESIGN §19), or
   * null when the agent goes on by itself (Claude Code).
   */
  resumeLine: string | null;
  /** The manager's agent, for people ("Claude Code", "Codex"): the reasons that name it. */
  agentLabel: string;
  /** The lease's ttl and margin (DESIGN §15), parsed once here; null: a single-host program. */
  lease: LeaseTimes | null;
}

/** A lease's durations in ms: every rule and command reads these, never the config's text. */
export interface LeaseTimes {
  ttl: number;
  margin: number;
}
