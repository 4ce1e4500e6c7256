// What an agent's Herdr pane shows (what it means: claude-screen.ts). Read with
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
