// What a seat's Claude Code `settings.json` needs for sheepdog (DESIGN §5): the statusLine that
// records usage readings, and the StopFailure hook that records a usage-limit stop at once.
// `init`'s prompt placeholder and `doctor` show the same snippet.

export const STATUSLINE_COMMAND = "sheepdog statusline";
export const STOP_FAILURE_COMMAND = "sheepdog hook stop-failure";

/** The `settings.json` keys, as an object (the StopFailure matcher filters on the error kind). */
export function claudeSettings(): Record<string, unknown> {
  return {
    statusLine: { type: "command", command: STATUSLINE_COMMAND },
    hooks: {
      StopFailure: [
        { matcher: "rate_limit", hooks: [{ type: "command", command: STOP_FAILURE_COMMAND }] },
      ],
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
  return new RegExp(String.raw`sheepdog(?:\.c?js)?["']?\s+${rest}\b`).test(command);
}

/** The commands of a settings.json's StopFailure hooks. */
export function stopFailureCommands(settings: unknown): string[] {
  const hooks = (settings as { hooks?: { StopFailure?: unknown } } | null)?.hooks?.StopFailure;
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
