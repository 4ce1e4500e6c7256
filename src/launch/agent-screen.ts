// What a manager's screen says, read by each agent's own rules (DESIGN §14, §19): the dialog a
// pane is held at (a nudge never types into one, a start held at one is `blocked`) and the
// agent's usage-limit dialog (the refusal rule's, never a `blocked` page). Pure and small: the
// tick's watchdog side loads it without the launchers' start watches (agent-start.ts).
import { type AgentKind, agentKindOf } from "../agent/kinds.js";
import { dialogOnScreen, showsLimitDialog } from "./claude-screen.js";
import { codexDialogOnScreen } from "./codex-screen.js";

export interface AgentScreen {
  /** The dialog's first line, or null when the screen shows none. */
  dialog(screen: string): string | null;
  /** Whether the screen is the agent's usage-limit dialog (Codex 0.171.0 draws none). */
  limitDialog(screen: string | null): boolean;
}

const SCREENS: Record<AgentKind, AgentScreen> = {
  claude: { dialog: dialogOnScreen, limitDialog: showsLimitDialog },
  codex: { dialog: codexDialogOnScreen, limitDialog: () => false },
};

export function agentScreen(config: { manager: { agent?: AgentKind } }): AgentScreen {
  return SCREENS[agentKindOf(config)];
}
