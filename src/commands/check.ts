import { agentKindOf } from "../agent/kinds.js";
import { openProgram, type ProgramContext } from "../config/context.js";
import { activityWarnings, configWarnings, policyWarnings } from "../config/warnings.js";
import { permissionCheck } from "../doctor/permission-check.js";
import { EXIT, UsageError } from "../errors.js";
import { shownUrl } from "../page/ntfy.js";
import {
  hookSettingsFiles,
  unknownHookEvents,
  unknownHookEventText,
} from "../usage/claude-settings.js";
import { knownHookEvents, TESTED_VERSIONS } from "../usage/claude-versions.js";
import { seatOf } from "../usage/seat.js";
import { parseCommandArgs } from "../util/args.js";

/**
 * A ledger repo that tracks a state folder would carry the claim, the heartbeat, the journal
 * and evidence off the host at every push (DESIGN §18): refused, with the fix. (A ledger that is
 * not usable yet is save's notice to give, not check's.)
 */
async function refuseTrackedState(
  ledger: NonNullable<ProgramContext["config"]["ledger"]>,
  root: string,
): Promise<void> {
  const { trackedStateFiles } = await import("../ledger/ledger.js");
  const found = await trackedStateFiles(ledger, root);
  if (!("files" in found) || found.files.length === 0) return;
  const shown = found.files.slice(0, 3).join(", ") + (found.files.length > 3 ? ", …" : "");
  const dirs = [
    ...new Set(found.files.map((f) => f.slice(0, f.indexOf(".sheepdog/") + ".sheepdog/".length))),
  ];
  throw new UsageError(
    `ledger.repo: ${found.repo} tracks sheepdog's state (${found.files.length} file${found.files.length === 1 ? "" : "s"}: ${shown}), which must never leave this host; fix with: git -C ${found.repo} rm -r -q --cached ${dirs.join(" ")} && git -C ${found.repo} commit -m "stop tracking sheepdog state"`,
  );
}

/** The config as printed: the heartbeat URL by its origin only (its path is the secret key). */
function shownConfig(config: ProgramContext["config"]): ProgramContext["config"] {
  const url = config.page?.heartbeat_url;
  if (!url || !config.page) return config;
  return { ...config, page: { ...config.page, heartbeat_url: shownUrl(url) } };
}

export async function run(argv: string[]): Promise<number> {
  const { values } = parseCommandArgs("check", argv);
  const program = openProgram(values.program);
  if (program.config.ledger) await refuseTrackedState(program.config.ledger, program.root);
  // A hook event the seat's Claude Code does not know holds every start at a dialog (DESIGN
  // §14): an error, judged against every tested version's list (doctor reads the seat's own).
  // A Codex manager reads no Claude Code settings.
  const unknown =
    agentKindOf(program.config) === "claude"
      ? unknownHookEvents(
          hookSettingsFiles(seatOf(program.config), program.root),
          knownHookEvents(null),
        )
      : [];
  if (unknown.length > 0)
    throw new UsageError(
      unknown.map((u) => unknownHookEventText(u, TESTED_VERSIONS.join(" and "))).join("\n"),
    );
  const warnings = [
    ...configWarnings(program.config),
    ...policyWarnings(program.policy, program.policy.interval),
    ...activityWarnings(program.policy),
  ];
  // A valid config whose manager could never claim on its own is no ready program (issue 33).
  const permission = permissionCheck(program);
  const errors =
    permission && permission.status === "fail"
      ? [{ check: permission.check, detail: permission.detail, fix: permission.fix }]
      : [];
  if (values.json) {
    const doc = {
      ok: errors.length === 0,
      program: program.name,
      root: program.root,
      config: shownConfig(program.config),
      warnings,
      ...(errors.length > 0 ? { errors } : {}),
    };
    process.stdout.write(`${JSON.stringify(doc)}\n`);
  } else {
    process.stdout.write(
      `${program.configPath}: ${errors.length === 0 ? "ok" : "valid"} (program ${program.name}, launcher ${program.config.manager.launcher})\n`,
    );
    for (const w of warnings) process.stderr.write(`warning: ${program.configPath}: ${w}\n`);
    for (const e of errors) process.stderr.write(`error: ${e.detail}\n  fix: ${e.fix}\n`);
  }
  return errors.length === 0 ? EXIT.ok : EXIT.failed;
}
