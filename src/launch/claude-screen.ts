// What Claude Code's screen says, for the launchers that read it (tmux's capture-pane, Herdr's
// `agent read`): its folder-trust dialog and which option is selected, any other dialog, and
// its input box, and its usage-limit dialog. Screens as Claude Code 2.0, 2.1.328 and 2.1.332
// draw them (test/fixtures/claude-2.1.328/screens/, claude-2.1.332/).

/** The last `lines` non-blank lines of a screen, for a journal line or a page. */
export function screenTail(screen: string, lines = 20): string {
  const kept = screen
    .split("\n")
    .map((l) => l.trimEnd())
    .filter((l) => l.trim() !== "");
  return kept.slice(-lines).join("\n");
}

const TRUST_QUESTION =
  /trust the files in this folder|project you created or one you trust|yes, i trust this folder/;
/** The option that trusts the folder: "1. Yes, proceed" (≤ 2.0), "Yes, I trust this folder" (2.1). */
const TRUST_YES = /^(?:\d\.\s*)?yes, (?:proceed|i trust this folder)\b/;

/**
 * Claude Code's folder-trust dialog: "Do you trust the files in this folder?" (≤ 2.0) or "Is
 * this a project you created or one you trust?" (2.1), with "Enter to confirm · Esc to cancel"
 * under it (Herdr's claude manifest at v0.8.2 marks that footer `blocked`).
 */
export function isTrustDialog(screen: string | null): boolean {
  if (!screen) return false;
  const text = screen.toLowerCase();
  return /enter to confirm/.test(text) && TRUST_QUESTION.test(text);
}

/**
 * The one key that moves the trust dialog towards trusting the folder: `enter` when its
 * "Yes" option is selected, else `down` or `up` towards it. 2.1.328 selects "No, exit" first,
 * so a lone Enter would end Claude Code; ≤ 2.0 selected "Yes, proceed". Null when the screen
 * is not that dialog or shows no selected option (nothing is pressed blind).
 */
export function trustKey(screen: string | null): "enter" | "down" | "up" | null {
  if (!screen || !isTrustDialog(screen)) return null;
  const options = screen.split("\n").map((l) => l.trim().toLowerCase());
  const yes = options.findIndex((l) => TRUST_YES.test(l.replace(/^❯\s*/, "")));
  const selected = options.findIndex((l) => l.startsWith("❯"));
  if (yes < 0 || selected < 0) return null;
  if (selected === yes) return "enter";
  return selected < yes ? "down" : "up";
}

/**
 * The pause after a key before the screen is read again, and how long "Yes" must stay selected
 * before Enter: a late arrow moves the menu on, and Enter on "No, exit" ends Claude Code.
 */
export const KEY_SETTLE_MS = 300;

/** A full-width horizontal rule, as Claude draws above its dialogs and around its input box. */
const isRule = (line: string | undefined) => /^\s*─{10,}\s*$/.test(line ?? "");

/** The screen below its last horizontal rule (Claude draws its dialogs there), else all of it. */
function belowLastRule(screen: string): string {
  const lines = screen.split("\n");
  for (let i = lines.length - 1; i >= 0; i--)
    if (isRule(lines[i])) return lines.slice(i + 1).join("\n");
  return screen;
}

/**
 * Whether the screen shows a dialog waiting for an answer, by the markers of the rules Herdr's
 * Claude manifest marks `visible_blocker` (src/detect/manifests/claude.toml, herdrdev/herdr@
 * 1c76079f: `live_blocked_form`, `dynamic_workflow_prompt`, the permission prompts). Herdr
 * also reports `blocked` from prose alone ("Would you like to … yes": `legacy_no_prompt_blocker`,
 * herdr #4064), which is no dialog. An unreadable screen cannot rule a dialog out.
 */
export function showsDialog(screen: string | null): boolean {
  if (screen === null || isTrustDialog(screen) || dialogOnScreen(screen) !== null) return true;
  const text = screen.toLowerCase();
  const form = belowLastRule(text);
  if (/esc to cancel/.test(form) && /enter to confirm|enter to select/.test(form)) return true;
  if (/run a dynamic workflow\?/.test(text) && /esc to cancel/.test(text)) return true;
  return (
    /do you want to proceed\?/.test(text) && /^\s*❯?\s*(?:[1-3]\.\s*)?(?:yes|no)\b/m.test(text)
  );
}

/** Lines a dialog's footer or options have (below the last rule), and no input box has. */
const DIALOG_MARKS = [
  /esc to cancel/i,
  /enter to (?:confirm|select)/i,
  /^\s*❯\s*\d+\.\s/m,
  /do you want to proceed\?/i,
];

/** Whether the screen shows Claude's input box: a `❯` line between two full-width rules. */
function hasInputBox(lines: readonly string[]): boolean {
  for (let i = 0; i + 2 < lines.length; i++)
    if (isRule(lines[i]) && /^\s*❯/.test(lines[i + 1] as string) && isRule(lines[i + 2]))
      return true;
  return false;
}

/**
 * The dialog a Claude Code screen is held at, as its first line (say "Auto mode can't check
 * actions in this session", "Bash command", "Accessing workspace:"), or null when it shows none.
 * A dialog is drawn under the screen's last full-width rule in place of the input box, with a
 * footer or options no input box has ("Esc to cancel", "Enter to confirm", "❯ 1. Yes", "Do you
 * want to proceed?"); the input box's own footer may say "Esc to cancel" too (a usage limit's
 * "Continuing automatically at … · Esc to cancel"), so a screen that shows the box is no dialog.
 * Screens as 2.1.328 and 2.1.332 draw them (test/fixtures/claude-2.1.3*\/screens/).
 */
export function dialogOnScreen(screen: string): string | null {
  const lines = screen.split("\n").map((l) => l.trimEnd());
  if (hasInputBox(lines)) return null;
  let last = -1;
  for (let i = lines.length - 1; i >= 0; i--)
    if (isRule(lines[i])) {
      last = i;
      break;
    }
  const below = lines.slice(last + 1);
  const text = below.join("\n");
  if (!DIALOG_MARKS.some((re) => re.test(text))) return null;
  const first = below.find((l) => l.trim() !== "" && !/^[╌─\s]+$/.test(l));
  return first ? first.trim() : "a dialog";
}

/**
 * Whether Claude Code's input box shows: a `❯` line right under a full-width rule, with no
 * dialog on the screen (2.1.328 draws the box between two rules, its hints below).
 */
export function showsInputBox(screen: string | null): boolean {
  if (!screen || showsDialog(screen)) return false;
  const lines = screen.split("\n");
  for (let i = 0; i + 1 < lines.length; i++)
    if (isRule(lines[i]) && /^\s*❯/.test(lines[i + 1] as string)) return true;
  return false;
}

/**
 * Claude Code's usage-limit dialog (2.1.328 and 2.1.332 under tmux, drawn when the reset is more
 * than a day away, with no hook run for it): "What do you want to do? ❯ 1. Stop and wait for
 * limit to reset  2. Wait here, then continue automatically at Dec 5, 7:07pm  3. Upgrade your
 * plan  Enter to confirm · Esc to cancel". A manager at it never goes on by itself.
 */
export function showsLimitDialog(screen: string | null): boolean {
  if (!screen) return false;
  // The dialog is the bottom of the screen (no input box under it): its last lines.
  const form = screenTail(screen, 12).toLowerCase();
  return (
    /what do you want to do\?/.test(form) &&
    /stop and wait for limit to reset|wait here, then continue automatically/.test(form) &&
    /enter to confirm/.test(form)
  );
}

/** What a person does about a start held at a dialog, under the launcher that met it. */
export function dialogFix(screen: string | null, root: string, launcher: "herdr" | "tmux"): string {
  if (isTrustDialog(screen))
    return `Claude asks whether to trust ${root}: run \`claude\` once in ${root} and accept, or set manager.${launcher}.accept_trust_dialog: true in program.json`;
  return launcher === "herdr"
    ? "answer the dialog in Herdr (or fix what it asks about); the next tick starts a fresh manager"
    : "answer the dialog in the tmux window (or fix what it asks about, as a pre-approved API key in the seat's .claude.json); the next tick starts a fresh manager";
}
