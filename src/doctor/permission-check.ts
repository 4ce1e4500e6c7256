// Whether the manager's Claude Code would run `sheepdog …` with no person (issue 33): doctor's
// check and `check`'s error. Read only: Claude's settings files are never edited here.
import { join } from "node:path";
import { agentKindOf } from "../agent/kinds.js";
import { managerClaudeArgs } from "../config/claude-argv.js";
import type { Program } from "../config/load.js";
import {
  SHEEPDOG_ALLOW_RULE,
  settingsLayers,
  sheepdogPermission,
} from "../usage/claude-permissions.js";
import { seatOf } from "../usage/seat.js";
import { bad, type Check, ok } from "./check.js";

export const PERMISSION_CHECK = "claude-permissions";

/** The fix, the same wherever it is shown. */
export function permissionFix(root: string): string {
  return `add "${SHEEPDOG_ALLOW_RULE}" to permissions.allow in ${join(root, ".claude", "settings.json")} (sheepdog init writes it; see docs/launchers.md#permissions)`;
}

/** The check, or null when the manager is not Claude Code. */
export function permissionCheck(
  program: Pick<Program, "name" | "root" | "config">,
  isRoot = process.getuid?.() === 0,
): Check | null {
  // A codex program's launcher section left out runs codex (its launch defaults), not the
  // `claude` the schema's defaults name: its permissions are Codex's (doctor's codex checks).
  if (agentKindOf(program.config) !== "claude") return null;
  const args = managerClaudeArgs(program.config.manager);
  if (args === null) return null;
  const layers = settingsLayers(program.root, seatOf(program.config));
  const verdict = sheepdogPermission({ args, layers, root: isRoot });
  if (verdict.ok)
    return ok(program.name, PERMISSION_CHECK, `the manager runs sheepdog unasked: ${verdict.how}`);
  const unreadable = layers
    .filter((l) => l.error)
    .map((l) => `; ${l.path} cannot be read (${l.error}), so Claude Code ignores it`)
    .join("");
  return bad(
    program.name,
    PERMISSION_CHECK,
    "fail",
    `the manager's \`${verdict.command}\` would not run without a person: ${verdict.why}${unreadable}; it never claims`,
    permissionFix(program.root),
  );
}
