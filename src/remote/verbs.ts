import type { IncidentKind } from "../page/incident.js";

// The answers a page may offer as one tap (DESIGN §8): only safe ones. `finish`, and anything
// that stops a manager, is never among them, and a command naming any other verb is refused.

export const VERBS = ["resume", "unpause", "pause-2h"] as const;
export type Verb = (typeof VERBS)[number];

export function isVerb(v: unknown): v is Verb {
  return typeof v === "string" && (VERBS as readonly string[]).includes(v);
}

/** How long `pause-2h` pauses. */
export const PHONE_PAUSE_MS = 2 * 3600_000;

/** The button's label, and the CLI command the verb is exactly. */
export const VERB_WORDS: Record<Verb, { label: string; cli: string }> = {
  resume: { label: "Resume", cli: "sheepdog resume" },
  unpause: { label: "Unpause", cli: "sheepdog unpause" },
  "pause-2h": { label: "Pause 2 h", cli: "sheepdog pause --until 2h" },
};

/**
 * The answers offered on each kind of problem page: resume after a stand-down, unpause during
 * a pause, and a 2 h pause where holding the watchdog back gives a person time (a manager held
 * at a prompt, one in an API error storm, starts that fail). None where the answer would not
 * help or the command would refuse (an invalid program.json refuses every command).
 */
export const OFFERED: Record<IncidentKind, readonly Verb[]> = {
  stood_down: ["resume"],
  paused: ["unpause"],
  blocked: ["pause-2h"],
  api_errors: ["pause-2h"],
  start_failed: ["pause-2h"],
  tick_failed: [],
  lease_lost: [],
  config_invalid: [],
};
