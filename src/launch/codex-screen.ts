// What the Codex TUI's screen says (0.171.0 under tmux, test/fixtures/codex-0.171.0/screen-*.txt),
// for the launchers that read it: its "Trust this folder?" and "Hooks need review" dialogs
// and which option is selected (`› `), any other dialog, and its composer.

/** The dialogs a start may answer when `accept_trust_dialog` allows it. */
export type CodexTrustDialog = "folder" | "hooks";

const FOLDER = /trust this folder\?/i;
const FOLDER_YES = /^(?:\d\.\s*)?trust and continue\b/i;
const HOOKS = /hooks need review/i;
const HOOKS_YES = /^(?:\d\.\s*)?trust all and continue\b/i;

/** Which trust dialog the screen shows, if any. */
export function codexTrustDialog(screen: string | null): CodexTrustDialog | null {
  if (!screen) return null;
  if (HOOKS.test(screen) && /trust all and continue/i.test(screen)) return "hooks";
  if (FOLDER.test(screen) && /trust and continue/i.test(screen)) return "folder";
  return null;
}

/**
 * The one key that moves a trust dialog towards trusting: `enter` when the trusting option is
 * selected, else `down` or `up` towards it (a digit only moves the selection in 0.171.0). Null
 * when the screen is not such a dialog or shows no selected option.
 */
export function codexTrustKey(screen: string | null): "enter" | "down" | "up" | null {
  const dialog = codexTrustDialog(screen);
  if (!screen || !dialog) return null;
  const yes = dialog === "hooks" ? HOOKS_YES : FOLDER_YES;
  const lines = screen.split("\n").map((l) => l.trim());
  const options = lines.map((l) => l.replace(/^›\s*/, ""));
  const at = options.findIndex((l) => yes.test(l));
  const selected = lines.findIndex((l) => /^›\s*\d\./.test(l));
  if (at < 0 || selected < 0) return null;
  if (selected === at) return "enter";
  return selected < at ? "down" : "up";
}

/**
 * Whether the screen shows a dialog waiting for an answer: the trust dialogs, or any other
 * menu whose footer names Enter and Esc (`enter confirm · esc skip`, `enter continue · esc
 * back`), as the rate-limit "Switch to …?" modal draws. An unreadable screen cannot rule one out.
 */
export function codexShowsDialog(screen: string | null): boolean {
  if (screen === null || codexTrustDialog(screen)) return true;
  return /^\s*enter (?:to )?(?:confirm|continue|select)\b.*·\s*esc\b/im.test(screen);
}

/** A dialog's first line, clipped: a journal line or a page quotes it. */
const DIALOG_LINE_MAX = 120;

/**
 * The dialog a Codex screen is held at, as its first line ("Hooks need review", "Trust this
 * folder? …"), or null when it shows none: the head of the paragraph above its numbered
 * options (the screen's first line when it draws none).
 */
export function codexDialogOnScreen(screen: string): string | null {
  if (!codexShowsDialog(screen)) return null;
  const lines = screen.split("\n").map((l) => l.trim());
  const options = lines.findIndex((l) => /^(?:›\s*)?1\.\s/.test(l));
  let i = options > 0 ? options - 1 : -1;
  while (i >= 0 && lines[i] === "") i--;
  while (i > 0 && lines[i - 1] !== "") i--;
  const first = (i >= 0 ? lines[i] : lines.find((l) => l !== "")) ?? "";
  if (first === "") return "a dialog";
  return first.length > DIALOG_LINE_MAX ? `${first.slice(0, DIALOG_LINE_MAX - 1)}…` : first;
}

/** Whether the composer shows with no dialog: a `› ` line above the footer's shortcuts hint. */
export function codexShowsComposer(screen: string | null): boolean {
  if (!screen || codexShowsDialog(screen)) return false;
  return /^\s*› /m.test(screen) && /\? for shortcuts/.test(screen);
}

/** What a person does about a start held at a dialog. */
export function codexDialogFix(screen: string | null, root: string): string {
  const dialog = codexTrustDialog(screen);
  if (dialog === "folder")
    return `Codex asks whether to trust ${root}: run sheepdog init --agent codex (its profile trusts the folder), or run \`codex\` once in ${root} and trust it, or set manager.tmux.accept_trust_dialog: true in program.json`;
  if (dialog === "hooks")
    return "Codex asks to review new or changed hooks: trust them once in `codex` (or run sheepdog doctor for the hooks sheepdog's profile trusts), or set manager.tmux.accept_trust_dialog: true in program.json";
  return "answer the dialog in the tmux window (or fix what it asks about); the next tick starts a fresh manager";
}
