// Every command's synopsis and options, with a line of explanation each: the one place they are
// written. `parseCommandArgs` takes a command's options from here, `--help` prints them, and a
// test holds docs/commands.md to the same list, so what a command accepts, what its help says
// and what the manual says cannot drift apart.

/**
 * An option's kind. `duration`: a positive duration (90s, 5m, 2h, 1d), parsed to ms; `when`: a
 * duration or an ISO-8601 time, parsed to a When. Both are parsed in util/args.ts, with one
 * error wording each, so no command parses a flag of its own.
 */
export type OptionType = "string" | "boolean" | "duration" | "when";

export interface OptionSpec {
  type: OptionType;
  /** The value's placeholder in help (`N`, `DURATION`); options with a value only. */
  arg?: string;
  help: string;
}

/** A `when` option's value: a duration from now (its direction is the command's), or a time. */
export type When = { duration: number } | { at: number };

export interface CommandSpec {
  /** The synopsis lines, without the leading `sheepdog `. */
  usage: readonly string[];
  /** One line: what the command is for. */
  about: string;
  options: Record<string, OptionSpec>;
  /** Whether the command takes positional words (a subcommand, a folder). */
  positionals?: boolean;
}

const program = {
  type: "string",
  arg: "NAME|PATH",
  help: "the program: a path, or a name under $SHEEPDOG_HOME (default: the program whose folder you are in, else $SHEEPDOG_PROGRAM)",
} as const satisfies OptionSpec;
const all = {
  type: "boolean",
  help: "every program under $SHEEPDOG_HOME instead of one",
} as const satisfies OptionSpec;
const json = {
  type: "boolean",
  help: "print one JSON document (snake_case keys, times in UTC) instead of lines for people",
} as const satisfies OptionSpec;
/** The `--json` of a command whose answer is always JSON (save, hand-over, wait). */
export const alwaysJson = {
  type: "boolean",
  help: "accepted for symmetry: the answer is always one JSON object",
} as const satisfies OptionSpec;
const pid = {
  type: "string",
  arg: "N",
  help: "the manager's pid (default: the nearest ancestor that is not a shell, wrapper or sheepdog)",
} as const satisfies OptionSpec;
const transcript = {
  type: "string",
  arg: "PATH",
  help: "the manager's transcript: Claude Code's, or a Codex rollout (default: the one its statusline or Stop hook recorded, else the newest in its project folder, or the newest rollout of the program root since the claim)",
} as const satisfies OptionSpec;
const progress = {
  type: "string",
  arg: "TEXT",
  help: "the progress fingerprint to record (default: a hash of the files progress.paths matches)",
} as const satisfies OptionSpec;
const dryRun = {
  type: "boolean",
  help: "print what would be done, and change nothing",
} as const satisfies OptionSpec;
const wide = {
  type: "boolean",
  help: "show every column whole, however wide the terminal",
} as const satisfies OptionSpec;

export const COMMAND_SPECS = {
  init: {
    usage: ["init DIR [--name N] [--launcher command|tmux|herdr] [--agent claude|codex] [--json]"],
    about: "write program.json (every default spelled out) and a placeholder MANAGER-PROMPT.md",
    positionals: true,
    options: {
      name: {
        type: "string",
        arg: "N",
        help: "the program's name (default: the folder's name; [a-z0-9-], up to 63 characters)",
      },
      launcher: {
        type: "string",
        arg: "KIND",
        help: "how the manager is started: command (the default), tmux or herdr",
      },
      agent: {
        type: "string",
        arg: "AGENT",
        help: "the manager's agent: claude (Claude Code, the default) or codex (the Codex CLI; also writes sheepdog's profile in $CODEX_HOME)",
      },
      json,
    },
  },
  check: {
    usage: ["check [--program P] [--json]"],
    about: "validate program.json: exit 2 naming the file, the field and what was expected",
    options: { program, json },
  },
  tick: {
    usage: ["tick [--program P | --all] [--every DURATION] [--dry-run] [--json] [--wide]"],
    about: "one watchdog pass per program: gather, decide, act (what the timer runs)",
    options: {
      program,
      all,
      every: {
        type: "duration",
        arg: "DURATION",
        help: "how often the scheduler runs this tick (the units install writes pass it); gaps in the watchdog's runs are judged against it (default: the program's watchdog.interval)",
      },
      "dry-run": dryRun,
      json,
      wide,
    },
  },
  status: {
    usage: ["status [--program P | --all] [--json] [--wide]", "status --fleet [--json] [--wide]"],
    about: "what each program's watchdog sees now, and what it last decided; changes nothing",
    options: {
      program,
      all,
      fleet: {
        type: "boolean",
        help: "every lease on the remotes of the programs under $SHEEPDOG_HOME: its host, epoch and freshness, read from the remote (DESIGN §15)",
      },
      json,
      wide,
    },
  },
  watch: {
    usage: ["watch [--program P | --all] [--json]"],
    about: "the watchdog, resident: the same pass the moment a manager dies or hands over",
    options: { program, all, json },
  },
  claim: {
    usage: [
      "claim acquire [--pid N] [--break-stale] [--json]",
      "claim release [--pid N] [--force --note TEXT] [--json]",
      "claim show [--json]",
    ],
    about: "take, give back or show the program's one-manager claim",
    positionals: true,
    options: {
      program,
      pid,
      "break-stale": {
        type: "boolean",
        help: "acquire: take over a claim whose holder is dead, reused or unreadable (journaled)",
      },
      force: {
        type: "boolean",
        help: "release: remove a claim you do not hold (a person's override; needs --note)",
      },
      note: { type: "string", arg: "TEXT", help: "release --force: why, for the journal" },
      json,
    },
  },
  save: {
    usage: ["save [--pid N] [--transcript PATH] [--progress TEXT]"],
    about:
      "stamp the heartbeat, push the ledger, answer with the context size and the watchdog's word",
    options: { program, pid, transcript, progress, json: alwaysJson },
  },
  "hand-over": {
    usage: ["hand-over --note TEXT [--pid N] [--transcript PATH] [--progress TEXT]"],
    about: "save, then release the claim so a fresh manager starts (planned)",
    options: {
      program,
      note: {
        type: "string",
        arg: "TEXT",
        help: "where things stand, for the successor and the journal (required)",
      },
      pid,
      transcript,
      progress,
      json: alwaysJson,
    },
  },
  wait: {
    usage: ["wait [--every DURATION] [--pid N] [--json]"],
    about:
      "the manager's one background wait: until --every passes, the program pauses or stands down, or the claim is lost; one JSON line",
    options: {
      program,
      every: {
        type: "duration",
        arg: "DURATION",
        help: "wake after this long at the latest (default 20m)",
      },
      pid,
      json: alwaysJson,
    },
  },
  finish: {
    usage: ["finish --note TEXT [--pid N] [--force] [--json]"],
    about: "the backlog is done: release the claim; the watchdog starts nothing until reopen",
    options: {
      program,
      note: { type: "string", arg: "TEXT", help: "what was finished, for the journal (required)" },
      pid,
      force: {
        type: "boolean",
        help: "finish although another live process holds the claim (a person's override, journaled as forced; the holder keeps running)",
      },
      json,
    },
  },
  reopen: {
    usage: ["reopen [--note TEXT] [--json]"],
    about: "undo finish: the next tick starts a manager",
    options: {
      program,
      note: { type: "string", arg: "TEXT", help: "why, for the journal" },
      json,
    },
  },
  statusline: {
    usage: ["statusline"],
    about: "Claude Code's statusLine command: JSON on stdin, one line out; records usage readings",
    options: {},
  },
  hook: {
    usage: ["hook stop-failure", "hook stop", "hook notification"],
    about:
      "Claude Code's StopFailure, Stop and Notification hooks, and Codex's Stop: JSON on stdin; never fails loudly, exit 0",
    positionals: true,
    options: {},
  },
  usage: {
    usage: ["usage [--seat DIR] [--json]"],
    about: "the merged usage readings of every seat on this host, and whether each is limited",
    options: {
      seat: {
        type: "string",
        arg: "DIR",
        help: "one seat only: its Claude config folder (e.g. ~/.claude-loop) or its CODEX_HOME",
      },
      json,
    },
  },
  "merge-lock": {
    usage: [
      "merge-lock acquire [--pid N] [--item ID] [--json]",
      "merge-lock release [--pid N] [--stale] [--json]",
      "merge-lock show [--json]",
    ],
    about: "one merge at a time into the target repository: a git ref, created atomically",
    positionals: true,
    options: {
      program,
      pid,
      item: { type: "string", arg: "ID", help: "acquire: the backlog item being merged" },
      stale: {
        type: "boolean",
        help: "release: remove a lock whose holder on this machine is dead (or is not holder JSON)",
      },
      json,
    },
  },
  pause: {
    usage: ["pause --until WHEN [--json]"],
    about: "start nothing until WHEN (an ISO-8601 time, or a duration from now such as 2h)",
    options: {
      program,
      until: { type: "when", arg: "WHEN", help: "when the pause ends (required)" },
      json,
    },
  },
  unpause: {
    usage: ["unpause [--json]"],
    about: "end a pause now; readings recorded before it no longer limit the seat",
    options: { program, json },
  },
  resume: {
    usage: ["resume [--note TEXT] [--json]"],
    about: "clear a stand-down: the next tick starts a manager if none holds the claim",
    options: {
      program,
      note: { type: "string", arg: "TEXT", help: "why, for the journal" },
      json,
    },
  },
  page: {
    usage: ["page --test [--json]"],
    about: "send a test page through the program's ntfy settings",
    options: {
      program,
      test: { type: "boolean", help: "send a low-priority test page now (required)" },
      json,
    },
  },
  install: {
    usage: [
      "install launchd|systemd [--program P | --all] [--interval 5m] [--watch] [--dry-run] [--json]",
    ],
    about: "schedule the watchdog tick: a launchd agent or a systemd user timer",
    positionals: true,
    options: {
      program,
      all,
      interval: {
        type: "duration",
        arg: "DURATION",
        help: "how often the tick runs (default: the program's watchdog.interval; 5m with --all)",
      },
      watch: {
        type: "boolean",
        help: "also install the resident watcher (sheepdog watch), kept alive by the scheduler",
      },
      "dry-run": { type: "boolean", help: "print every file and command, and touch nothing" },
      json,
    },
  },
  uninstall: {
    usage: ["uninstall launchd|systemd [--program P | --all] [--dry-run] [--json]"],
    about: "remove what install wrote (never a manager)",
    positionals: true,
    options: {
      program,
      all,
      "dry-run": {
        type: "boolean",
        help: "print what would be removed and run, and touch nothing",
      },
      json,
    },
  },
  doctor: {
    usage: ["doctor [--program P | --all] [--json]"],
    about:
      "check everything supervision needs, and say how to fix what is missing; changes nothing",
    options: { program, all, json },
  },
  journal: {
    usage: ["journal [--program P | --all] [--since 1h] [--json] [--wide]"],
    about: "the program's journal: one line per event",
    options: {
      program,
      all: {
        type: "boolean",
        help: "every program under $SHEEPDOG_HOME, their events in one list in time order, each line naming its program",
      },
      since: {
        type: "when",
        arg: "WHEN",
        help: "only events since WHEN: a duration back from now (12h) or an ISO-8601 time (default: every event kept)",
      },
      json,
      wide,
    },
  },
  report: {
    usage: ["report [--program P | --all] [--since 24h] [--out FILE] [--open] [--json]"],
    about: "the picture of a night: one self-contained HTML page drawn from the journal",
    options: {
      program,
      all,
      since: {
        type: "when",
        arg: "WHEN",
        help: "the window's start: a duration back from now (24h, the default) or an ISO-8601 time",
      },
      out: {
        type: "string",
        arg: "FILE",
        help: "write the page here (default: .sheepdog/report-<program>-<date>.html)",
      },
      open: { type: "boolean", help: "open the page in the browser (xdg-open, or open on macOS)" },
      json: {
        type: "boolean",
        help: "print the timeline the page is drawn from, as JSON, instead of writing the page",
      },
    },
  },
  demo: {
    usage: ["demo [--quiet] [--keep]"],
    about: "a real watchdog supervising a toy manager in a throw-away program, time compressed",
    options: {
      quiet: { type: "boolean", help: "no narration: only errors, and the exit code" },
      keep: {
        type: "boolean",
        help: "keep the throw-away program's folder (its journal, the report) instead of removing it",
      },
    },
  },
  version: {
    usage: ["version"],
    about: "print sheepdog's version (also --version, -v)",
    options: {},
  },
} as const satisfies Record<string, CommandSpec>;

type Specs = typeof COMMAND_SPECS;
export type CommandName = keyof Specs;

type ValueOf<T extends OptionType> = T extends "string"
  ? string
  : T extends "duration"
    ? number
    : T extends "when"
      ? When
      : boolean;

/**
 * A command's parsed option values: strings for string options, booleans for flags, ms for a
 * duration, a When for a when.
 */
export type OptionValues<C extends CommandName> = {
  -readonly [K in keyof Specs[C]["options"]]?: Specs[C]["options"][K] extends {
    type: infer T extends OptionType;
  }
    ? ValueOf<T>
    : never;
};

/** The options a command's parser accepts, in node:util parseArgs' shape. */
export function parserOptions(
  command: CommandName,
): Record<string, { type: "string" | "boolean" }> {
  const spec: CommandSpec = COMMAND_SPECS[command];
  return Object.fromEntries(
    Object.entries(spec.options).map(([name, o]) => [
      name,
      { type: o.type === "boolean" ? "boolean" : "string" },
    ]),
  );
}
