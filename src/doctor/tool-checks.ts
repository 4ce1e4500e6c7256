// Doctor's checks of what a program needs on this host: its launcher's tools, the seat's Claude
// settings (statusline, StopFailure hook), and pages.
import { accessSync, constants, readFileSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { AGENT_FACTS, agentKindOf } from "../agent/kinds.js";
import type { Program } from "../config/load.js";
import type { Installed } from "../install/installed.js";
import { unitPath, which } from "../install/target.js";
import {
  claudeSettingsSnippet,
  hookCommands,
  NOTIFICATION_COMMAND,
  runsSheepdog,
  STOP_COMMAND,
  STOP_FAILURE_COMMAND,
} from "../usage/claude-settings.js";
import { seatOf } from "../usage/seat.js";
import { bad, type Check, nativeScheduler, ok } from "./check.js";

/** The argv[0]s a program's manager launcher needs, with whether each is required. */
function neededTools(program: Program): string[] {
  const m = program.config.manager;
  const agent = AGENT_FACTS[agentKindOf(program.config)];
  // every manager runs `sheepdog claim` and `sheepdog save` by name (DESIGN §16)
  const tools: string[] = ["sheepdog"];
  if (program.config.ledger || program.config.merge_lock || program.config.lease) tools.push("git");
  if (m.launcher === "herdr") {
    tools.push("herdr");
    const kind = m.herdr?.kind ?? agent.launch.herdr.kind;
    if (kind === "claude" || kind === "codex") tools.push(kind);
  } else if (m.launcher === "tmux") {
    tools.push("tmux", m.tmux?.command[0] ?? (agent.launch.tmux[0] as string));
  } else if (m.command?.[0]) tools.push(m.command[0]);
  return [...new Set(tools)];
}

export function toolChecks(program: Program, covering: Installed[]): Check[] {
  const fromUnit = covering.find((i) => i.path !== undefined);
  const path = fromUnit?.path ?? unitPath({ homebrew: nativeScheduler() === "launchd" });
  const whose = fromUnit ? `the PATH of ${fromUnit.name}` : "the PATH install would write";
  return neededTools(program).map((tool) => {
    // a relative command path is resolved against the program root, where the launcher runs it
    const found = tool.includes("/") ? which(resolve(program.root, tool), path) : which(tool, path);
    if (found) return ok(program.name, `tool:${tool}`, `${tool}: ${found} (on ${whose})`);
    return bad(
      program.name,
      `tool:${tool}`,
      "fail",
      `${tool} is not on ${whose}: ${path}`,
      tool === "sheepdog"
        ? `reinstall the timer (sheepdog install ${fromUnit?.scheduler ?? nativeScheduler()} ${programFlag(program, fromUnit)}): it puts a folder with sheepdog on the unit's PATH`
        : fromUnit
          ? `install ${tool}, then reinstall the timer from a shell where it is on PATH`
          : `install ${tool}, or put it on PATH before running sheepdog install`,
    );
  });
}

function programFlag(program: Program, unit: Installed | undefined): string {
  return unit?.target?.kind === "all" ? "--all" : `--program ${program.root}`;
}

/** The seat's settings.json, parsed, or why it cannot be. */
function readSettings(settings: string): { parsed: unknown } | { why: string } {
  try {
    return { parsed: JSON.parse(readFileSync(settings, "utf8")) };
  } catch (err) {
    return {
      why:
        (err as NodeJS.ErrnoException).code === "ENOENT"
          ? "does not exist"
          : `cannot be read as JSON: ${(err as Error).message}`,
    };
  }
}

const settingsFix = (settings: string) => `merge into ${settings}: ${claudeSettingsSnippet()}`;

export function statuslineCheck(program: Program): Check {
  const seat = seatOf(program.config);
  const settings = join(seat, "settings.json");
  const fix = settingsFix(settings);
  const read = readSettings(settings);
  if ("why" in read)
    return bad(
      program.name,
      "statusline",
      "warn",
      `${settings} ${read.why}; no usage readings for seat ${seat}`,
      fix,
    );
  const command = (read.parsed as { statusLine?: { command?: unknown } } | null)?.statusLine
    ?.command;
  if (typeof command === "string" && runsSheepdog(command, "statusline"))
    return ok(program.name, "statusline", `${settings}: statusLine runs ${command}`);
  return bad(
    program.name,
    "statusline",
    "warn",
    typeof command === "string"
      ? `${settings}: statusLine runs ${JSON.stringify(command)}, not sheepdog statusline; usage limits will not pause this program`
      : `${settings}: no statusLine command; usage limits will not pause this program`,
    fix,
  );
}

/** One of sheepdog's hooks in the seat's settings.json (DESIGN §5, §14). */
function hookCheck(
  program: Program,
  hook: { name: string; event: string; words: string; command: string; without: string },
): Check {
  const settings = join(seatOf(program.config), "settings.json");
  const read = readSettings(settings);
  if ("why" in read)
    return bad(program.name, hook.name, "warn", `${settings} ${read.why}`, settingsFix(settings));
  const ours = hookCommands(read.parsed, hook.event).find((c) => runsSheepdog(c, hook.words));
  if (ours) return ok(program.name, hook.name, `${settings}: ${hook.event} runs ${ours}`);
  return bad(
    program.name,
    hook.name,
    "warn",
    `${settings}: no ${hook.event} hook runs ${hook.command}; ${hook.without}`,
    settingsFix(settings),
  );
}

/** The StopFailure, Stop and Notification hooks: each missing one is a warning of its own. */
export function hookChecks(program: Program): Check[] {
  return [
    hookCheck(program, {
      name: "stop_failure_hook",
      event: "StopFailure",
      words: "hook stop-failure",
      command: STOP_FAILURE_COMMAND,
      without: "a usage-limit stop is seen only when a tick reads the transcript",
    }),
    hookCheck(program, {
      name: "stop_hook",
      event: "Stop",
      words: "hook stop",
      command: STOP_COMMAND,
      without: "an ended turn and what will wake it are read from the transcript alone",
    }),
    hookCheck(program, {
      name: "notification_hook",
      event: "Notification",
      words: "hook notification",
      command: NOTIFICATION_COMMAND,
      without: "idle and permission prompts are not seen",
    }),
  ];
}

export function pagesCheck(program: Program): Check {
  const ntfy = program.config.page?.ntfy;
  if (!ntfy)
    return bad(
      program.name,
      "pages",
      "warn",
      "no pages configured: a stand-down reaches nobody",
      `add "page": {"ntfy": {"topic": "..."}} to ${program.configPath}, then: sheepdog page --test`,
    );
  const where = `ntfy topic ${ntfy.topic} on ${ntfy.server}`;
  if (ntfy.token_file) {
    const file = ntfy.token_file;
    let st: ReturnType<typeof statSync>;
    try {
      st = statSync(file);
    } catch {
      return bad(
        program.name,
        "pages",
        "fail",
        `${where}: token_file ${file} does not exist`,
        `write the token to ${file} and chmod 600 ${file}`,
      );
    }
    const mode = st.mode & 0o777;
    if (mode & 0o077)
      return bad(
        program.name,
        "pages",
        "fail",
        `${where}: token_file ${file} has mode ${mode.toString(8).padStart(4, "0")}; a token file must be 0600`,
        `chmod 600 ${file}`,
      );
    try {
      accessSync(file, constants.R_OK);
    } catch {
      return bad(
        program.name,
        "pages",
        "fail",
        `${where}: token_file ${file} is not readable by you`,
        `chown $(id -un) ${file}; chmod 600 ${file}`,
      );
    }
    if (st.size === 0)
      return bad(
        program.name,
        "pages",
        "fail",
        `${where}: token_file ${file} is empty`,
        `write the token to ${file}`,
      );
    return ok(program.name, "pages", `${where}; token from ${file} (0600, readable)`);
  }
  if (ntfy.token_env) {
    const here = Boolean(process.env[ntfy.token_env]?.trim());
    // install writes only PATH, SHEEPDOG_HOME and SHEEPDOG_STATE_DIR into the unit (a token
    // never goes in a file others can read), so a scheduled tick cannot see this variable
    return bad(
      program.name,
      "pages",
      here ? "warn" : "fail",
      `${where}: token_env ${ntfy.token_env} is ${here ? "set in this shell, but" : "not set, and"} the timer's environment does not carry it; pages from the tick will fail`,
      `put the token in a file (chmod 600) and set page.ntfy.token_file in ${program.configPath}`,
    );
  }
  return ok(
    program.name,
    "pages",
    `${where}; no token (anyone who knows the topic can read the pages)`,
  );
}
