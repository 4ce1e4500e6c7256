// The Claude Code versions sheepdog is tested against (DESIGN §17): named here and nowhere else
// in the code. The pin is what the real-CLI tests run on; the newest is the newest release the
// usage-limit, trust-dialog and hook tests also run on. Moving to a release:
// `npm run capture:claude -- --version X` (docs/testing.md), then add it here.
import { standingAmong, type VersionStanding } from "../util/versions.js";

export type { VersionStanding } from "../util/versions.js";

/** The version the real-CLI tests are pinned to. */
export const PINNED_VERSION = "2.1.328";
/** The newest version the suite runs its usage-limit, trust-dialog and hook tests on. */
export const NEWEST_TESTED_VERSION = "2.1.332";
/** Every tested version, oldest first. */
export const TESTED_VERSIONS: readonly string[] = [PINNED_VERSION, NEWEST_TESTED_VERSION];

/** How a maintainer checks a release the suite does not know yet. */
export const CHECK_A_VERSION = "npm run capture:claude -- --version <X> in a sheepdog checkout";

/**
 * The hook events each tested version knows, as its own Settings Warning dialog lists them
 * ("Unknown hook event "Interrupt" was ignored. Valid events: …", read on the real CLI): a
 * settings.json that declares any other event opens that blocking dialog at every start.
 */
const HOOK_EVENTS_2_1_328 = [
  "PreToolUse",
  "PostToolUse",
  "PostToolUseFailure",
  "PostToolBatch",
  "Notification",
  "UserPromptSubmit",
  "UserPromptExpansion",
  "SessionStart",
  "SessionEnd",
  "Stop",
  "StopFailure",
  "SubagentStart",
  "SubagentStop",
  "PreCompact",
  "PostCompact",
  "PreModelSwitch",
  "PostModelSwitch",
  "PermissionRequest",
  "PermissionDenied",
  "Setup",
  "TeammateIdle",
  "TaskCreated",
  "TaskCompleted",
  "Elicitation",
  "ElicitationResult",
  "ConfigChange",
  "WorktreeCreate",
  "WorktreeRemove",
  "InstructionsLoaded",
  "CwdChanged",
  "FileChanged",
  "DirectoryAdded",
  "MessageDisplay",
] as const;

export const HOOK_EVENTS: Readonly<Record<string, readonly string[]>> = {
  "2.1.328": HOOK_EVENTS_2_1_328,
  // 2.1.332 adds PreSkillShellCommand.
  "2.1.332": [...HOOK_EVENTS_2_1_328, "PreSkillShellCommand"],
};

/**
 * The hook events a seat's Claude Code knows: its version's list when it is a tested one, else
 * those any tested version knows (an event none of them knows is unknown to sheepdog too).
 */
export function knownHookEvents(version?: string | null): ReadonlySet<string> {
  const own = version ? HOOK_EVENTS[version] : undefined;
  return new Set(own ?? TESTED_VERSIONS.flatMap((v) => HOOK_EVENTS[v] ?? []));
}

/** `2.1.332` from `claude --version`'s `2.1.332 (Claude Code)`; null when it names none. */
export function parseClaudeVersion(output: string): string | null {
  return /\b(\d+\.\d+\.\d+)\b/.exec(output)?.[1] ?? null;
}

/** Where a version stands against the tested ones (DESIGN §17). */
export function versionStanding(version: string): VersionStanding {
  return standingAmong(version, TESTED_VERSIONS);
}
