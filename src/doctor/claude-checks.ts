// Doctor's checks of the seat's Claude Code (DESIGN §14, §17): its version against the versions
// sheepdog is tested on, and hook events in its settings that it does not know.
import { execFileSync } from "node:child_process";
import { basename, resolve } from "node:path";
import type { Program } from "../config/load.js";
import type { Installed } from "../install/installed.js";
import { unitPath, which } from "../install/target.js";
import {
  hookSettingsFiles,
  unknownHookEvents,
  unknownHookEventText,
} from "../usage/claude-settings.js";
import {
  CHECK_A_VERSION,
  knownHookEvents,
  NEWEST_TESTED_VERSION,
  PINNED_VERSION,
  parseClaudeVersion,
  TESTED_VERSIONS,
  versionStanding,
} from "../usage/claude-versions.js";
import { seatOf } from "../usage/seat.js";
import { bad, type Check, nativeScheduler, ok } from "./check.js";

/** The `claude` the manager command runs (by name or path), or null when it runs none. */
export function managerClaude(program: Program): string | null {
  const m = program.config.manager;
  if (m.launcher === "herdr") return (m.herdr?.kind ?? "claude") === "claude" ? "claude" : null;
  const argv0 = m.launcher === "tmux" ? (m.tmux?.command[0] ?? "claude") : m.command?.[0];
  return argv0 && /^claude(?:\.exe)?$/.test(basename(argv0)) ? argv0 : null;
}

/** What `<claude> --version` says, run the way the manager's launcher would find it. */
function claudeVersionOf(bin: string): { version: string | null; said: string } {
  try {
    const out = execFileSync(bin, ["--version"], {
      encoding: "utf8",
      timeout: 15_000,
      stdio: ["ignore", "pipe", "pipe"],
    });
    return { version: parseClaudeVersion(out), said: out.trim().split("\n")[0] ?? "" };
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    return { version: null, said: (e.stderr || e.message).trim().split("\n")[0] ?? "failed" };
  }
}

const TESTED = TESTED_VERSIONS.join(", ");

/**
 * The seat's Claude Code version (DESIGN §17): tested; older than the pin (an error: formats
 * sheepdog needs may be missing); newer than the newest tested (a warning naming it and how to
 * check a new one). Also returns the version, for the hook-event check.
 */
export function claudeVersionCheck(
  program: Program,
  covering: Installed[],
): { check: Check | null; version: string | null } {
  const argv0 = managerClaude(program);
  if (!argv0) return { check: null, version: null };
  const fromUnit = covering.find((i) => i.path !== undefined);
  const path =
    program.config.manager.env.PATH ??
    fromUnit?.path ??
    unitPath({ homebrew: nativeScheduler() === "launchd" });
  const bin = argv0.includes("/") ? which(resolve(program.root, argv0), path) : which(argv0, path);
  const name = "claude_version";
  // Not on the PATH: the tool check says so, with its fix.
  if (!bin) return { check: null, version: null };
  const { version, said } = claudeVersionOf(bin);
  if (!version)
    return {
      version: null,
      check: bad(
        program.name,
        name,
        "warn",
        `${bin} --version named no version (${JSON.stringify(said)}); sheepdog is tested on ${TESTED}`,
        `run ${bin} --version by hand; sheepdog is tested on Claude Code ${TESTED}`,
      ),
    };
  const standing = versionStanding(version);
  const what = `${bin}: Claude Code ${version}`;
  if (standing === "tested")
    return { version, check: ok(program.name, name, `${what}, a tested version (${TESTED})`) };
  if (standing === "older")
    return {
      version,
      check: bad(
        program.name,
        name,
        "fail",
        `${what} is older than the oldest tested version, ${PINNED_VERSION}: formats sheepdog reads (the refusal's structured rate_limit_info, the hook payloads, the dialogs) may be missing`,
        `update Claude Code to ${NEWEST_TESTED_VERSION} (npm install -g @anthropic-ai/claude-code@${NEWEST_TESTED_VERSION})`,
      ),
    };
  return {
    version,
    check: bad(
      program.name,
      name,
      "warn",
      `${what} is ${standing === "newer" ? `newer than the newest tested version, ${NEWEST_TESTED_VERSION}` : `not a tested version (${TESTED})`}: the texts, dialogs and fields sheepdog reads may have moved`,
      `check it with ${CHECK_A_VERSION.replace("<X>", version)}, or install ${NEWEST_TESTED_VERSION}`,
    ),
  };
}

/** Hook events the manager's Claude Code does not know: a dialog that holds every start. */
export function hookEventsCheck(program: Program, version: string | null): Check {
  const seat = seatOf(program.config);
  const files = hookSettingsFiles(seat, program.root);
  const known = knownHookEvents(version);
  const whose = version && TESTED_VERSIONS.includes(version) ? version : TESTED;
  const unknown = unknownHookEvents(files, known);
  if (unknown.length === 0)
    return ok(
      program.name,
      "hook_events",
      `every hook event declared in ${files[0]} (and the project's .claude/) is one Claude Code ${whose} knows`,
    );
  return bad(
    program.name,
    "hook_events",
    "fail",
    unknown.map((u) => unknownHookEventText(u, whose)).join("; "),
    `remove ${unknown.map((u) => `hooks.${u.event} from ${u.file}`).join(" and ")}`,
  );
}

/** The seat's Claude Code checks, the version first (the hook list depends on it). */
export function claudeChecks(program: Program, covering: Installed[]): Check[] {
  const { check, version } = claudeVersionCheck(program, covering);
  return [...(check ? [check] : []), hookEventsCheck(program, version)];
}
