import { RuntimeFailure } from "../errors.js";

/**
 * A launcher could not start the manager, or started it and found it held (at a dialog, say).
 * The tick journals `manager_start_failed {launcher, reason, screen?}` (DESIGN §6) and pages
 * with the screen and the fix; the crash-loop guard counts it as an unplanned start.
 */
export class StartFailed extends RuntimeFailure {
  /** herdr: the workspace the start used, kept so the next start reuses it. */
  workspace?: string;
  constructor(
    /** One line: what failed and, where known, what to do about it. */
    readonly reason: string,
    /** What the pane showed when the start failed (herdr/tmux), when it could be read. */
    readonly screen?: string,
  ) {
    super(screen ? `${reason}\nscreen:\n${screen}` : reason);
    this.name = "StartFailed";
  }
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what goes
const CONTROL = /[\u0000-\u001f\u007f-\u009f]+/g;

/** Text a terminal gets as one line: control characters (newlines too) become one space. */
export function oneLine(text: string): string {
  return text.replace(CONTROL, " ").replace(/ {2,}/g, " ").trim();
}
