// What a seat's Claude Code `settings.json` needs for sheepdog (DESIGN §5, §14): the statusLine
// that records usage readings, the StopFailure hook that records a usage-limit stop at once, and
// the Stop and Notification hooks whose records the activity verdict reads.
// `init`'s prompt placeholder and `doctor` show the same snippet.
import { readFileSync } from "node:fs";
import { join } from "node:path";

export const STATUSLINE_COMMAND = "sheepdog statusline";
export const STOP_FAILURE_COMMAND = "sheepdog hook stop-failure";
export const STOP_COMMAND = "sheepdog hook stop";
export const NOTIFICATION_COMMAND = "sheepdog hook notification";

/**
 * Seconds Claude Code gives each of them (DESIGN §18: hot commands never hang). A hook's
 * `timeout` is Claude Code's own (2.1.328, 2.1.332); its statusLine schema has no such key in
 * those versions and ignores it, so there sheepdog's own bound (stdin read within 5 s) is what
 * holds, and the key is ready for a version that reads it.
 */
export const HOOK_TIMEOUT_S = 10;

/** The `settings.json` keys, as an object (the StopFailure matcher filters on the error kind). */
export function claudeSettings(): Record<string, unknown> {
  const run = (command: string) => ({ type: "command", command, timeout: HOOK_TIMEOUT_S });
  return {
    statusLine: run(STATUSLINE_COMMAND),
    hooks: {
      StopFailure: [{ matcher: "rate_limit", hooks: [run(STOP_FAILURE_COMMAND)] }],
      Stop: [{ hooks: [run(STOP_COMMAND)] }],
      Notification: [{ hooks: [run(NOTIFICATION_COMMAND)] }],
    },
  };
}

/** The snippet on one line (doctor's fix) or indented (the prompt placeholder). */
export function claudeSettingsSnippet(indent?: number): string {
  return JSON.stringify(claudeSettings(), null, indent);
}

/** Whether a settings.json value runs `sheepdog <words>` (a path or `node …/sheepdog.js` too). */
export function runsSheepdog(command: unknown, words: string): boolean {
  if (typeof command !== "string") return false;
  const rest = words.split(" ").join(String.raw`\s+`);
  // `hook stop` is not `hook stop-failure`: the words end where no word character or dash follows.
  return new RegExp(String.raw`sheepdog(?:\.c?js)?["']?\s+${rest}(?![\w-])`).test(command);
}

/** The commands of a settings.json's hooks for one event (`StopFailure`, `Stop`, …). */
export function hookCommands(settings: unknown, event: string): string[] {
  const hooks = (settings as { hooks?: Record<string, unknown> } | null)?.hooks?.[event];
  if (!Array.isArray(hooks)) return [];
  return hooks.flatMap((group) => {
    const inner = (group as { hooks?: unknown } | null)?.hooks;
    return Array.isArray(inner)
      ? inner.flatMap((h) => {
          const c = (h as { command?: unknown } | null)?.command;
          return typeof c === "string" ? [c] : [];
        })
      : [];
  });
}

/**
 * The settings files whose hooks a manager's Claude Code reads: the seat's `settings.json` and,
 * in its working directory (the program root), the project's `.claude/settings.json` and
 * `.claude/settings.local.json`.
 */
export function hookSettingsFiles(seat: string, root: string): string[] {
  return [
    join(seat, "settings.json"),
    join(root, ".claude", "settings.json"),
    join(root, ".claude", "settings.local.json"),
  ];
}

/** A hook event a settings file declares that the seat's Claude Code does not know. */
export interface UnknownHookEvent {
  file: string;
  event: string;
}

/**
 * The hook events `files` declare that are not in `known` (DESIGN §14: 2.1.328 and 2.1.332
 * answer each with a blocking Settings Warning dialog at every start). A file that is missing or
 * not JSON declares none here (the statusline check names an unreadable seat settings file).
 */
export function unknownHookEvents(
  files: readonly string[],
  known: ReadonlySet<string>,
): UnknownHookEvent[] {
  const out: UnknownHookEvent[] = [];
  for (const file of files) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(readFileSync(file, "utf8"));
    } catch {
      continue;
    }
    const hooks = (parsed as { hooks?: unknown } | null)?.hooks;
    if (!hooks || typeof hooks !== "object" || Array.isArray(hooks)) continue;
    for (const event of Object.keys(hooks)) if (!known.has(event)) out.push({ file, event });
  }
  return out;
}

/** One line for an unknown hook event: the file, the field, and what was expected. */
export function unknownHookEventText(u: UnknownHookEvent, versions: string): string {
  return `${u.file}: hooks.${u.event}: Claude Code ${versions} knows no hook event ${JSON.stringify(u.event)}; it opens a blocking Settings Warning dialog at every start, so no manager can start until it is removed`;
}
