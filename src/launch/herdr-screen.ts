// What an agent's pane shows, and whether that is Claude's folder-trust dialog. Read with
// `--source visible`: real Herdr answers `--source recent` with `agent_not_idle` while a busy
// agent is on the alternate screen (exactly when a stuck manager's screen matters), and a
// start that timed out has cleared the agent's name, so reads go by pane.
import { HerdrError, herdrText } from "./herdr-cli.js";

/**
 * The pane's visible screen: `agent read <pane>` while an agent runs in it, else `pane read`.
 * Null when neither answers (the pane is gone, Herdr is down).
 */
export async function visibleScreen(pane: string, env: NodeJS.ProcessEnv): Promise<string | null> {
  for (const group of ["agent", "pane"] as const) {
    try {
      return await herdrText({
        command: `herdr ${group} read ${pane}`,
        args: [group, "read", pane, "--source", "visible"],
        env,
      });
    } catch (err) {
      if (!(err instanceof HerdrError)) return null;
    }
  }
  return null;
}

/** The last `lines` non-blank lines of a screen, for a journal line or a page. */
export function screenTail(screen: string, lines = 20): string {
  const kept = screen
    .split("\n")
    .map((l) => l.trimEnd())
    .filter((l) => l.trim() !== "");
  return kept.slice(-lines).join("\n");
}

/**
 * Claude Code's folder-trust dialog: "Do you trust the files in this folder?" (≤ 2.0) or "Is
 * this a project you created or one you trust?" (2.1), with "Enter to confirm · Esc to cancel"
 * under it (Herdr's claude manifest at v0.8.2 marks that footer `blocked`).
 */
export function isTrustDialog(screen: string | null): boolean {
  if (!screen) return false;
  const text = screen.toLowerCase();
  return (
    /enter to confirm/.test(text) &&
    /trust the files in this folder|project you created or one you trust|yes, i trust this folder/.test(
      text,
    )
  );
}

/** The screen below its last horizontal rule (Claude draws its dialogs there), else all of it. */
function belowLastRule(screen: string): string {
  const lines = screen.split("\n");
  for (let i = lines.length - 1; i >= 0; i--)
    if (/^\s*─{10,}\s*$/.test(lines[i] as string)) return lines.slice(i + 1).join("\n");
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
  if (screen === null || isTrustDialog(screen)) return true;
  const text = screen.toLowerCase();
  const form = belowLastRule(text);
  if (/esc to cancel/.test(form) && /enter to confirm|enter to select/.test(form)) return true;
  if (/run a dynamic workflow\?/.test(text) && /esc to cancel/.test(text)) return true;
  return (
    /do you want to proceed\?/.test(text) && /^\s*❯?\s*(?:[1-3]\.\s*)?(?:yes|no)\b/m.test(text)
  );
}

/** What a person does about a start held at a dialog. */
export function dialogFix(screen: string | null, root: string): string {
  if (isTrustDialog(screen))
    return `Claude asks whether to trust ${root}: run \`claude\` once in ${root} and accept, or set manager.herdr.accept_trust_dialog: true in program.json`;
  return "answer the dialog in Herdr (or fix what it asks about); the next tick starts a fresh manager";
}
