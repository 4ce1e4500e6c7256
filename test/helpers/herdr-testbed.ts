// The herdr launcher tests' setting: a temp folder with a seat, the recorder as `claude` on PATH,
// and the Herdr stand-in (test/bin/herdr) as one release, its state and log the test's own.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { basename, join } from "node:path";
import { afterEach, beforeEach } from "vitest";
import type { ProgramContext } from "../../src/config/context.js";
import { tempDir } from "./cli.js";
import {
  killGroup,
  programWith,
  readRecord,
  type StandinCall,
  standinLog,
  TEST_BIN,
  writeRecorder,
} from "./launch.js";

/** The releases the stand-in models (test/bin/herdr): 0.8.2 (protocol 20), 0.9.3 (22). */
export const STANDIN_VERSIONS = ["0.8.2", "0.9.3"] as const;
export type StandinVersion = (typeof STANDIN_VERSIONS)[number];

export interface StandinState {
  server: { version: string; protocol: number };
  workspaces: { workspace_id: string; label: string }[];
  tabs: { tab_id: string }[];
  panes: { pane_id: string; tab_id: string; terminal_id: string }[];
  agents: { name: string | null; pid: number; pane_id: string; registered?: boolean }[];
}

export interface Testbed {
  readonly dir: string;
  readonly seat: string;
  /** Where the recorder (`claude`) writes its argv, cwd, pid and env. */
  readonly record: string;
  readonly stateFile: string;
  state(): StandinState;
  /** The stand-in's calls, all or those of one `group sub`. */
  calls(sub?: string): StandinCall[];
  /** A herdr program whose manager runs with the test's seat. */
  program(name?: string, herdr?: Record<string, unknown>): ProgramContext;
  /** Runs the stand-in directly, as a person would. */
  herdr(
    args: string[],
    env?: Record<string, string>,
  ): { code: number | null; out: string; err: string };
}

const SAVED = { ...process.env };

/**
 * Registers the hooks: each test gets fresh folders and the stand-in as `version`, its prompt
 * effect wait shortened (Herdr waits 5 s, the answers still say so); every other
 * HERDR_STANDIN_* mode is off unless the test sets it.
 */
export function herdrTestbed(version: StandinVersion): Testbed {
  let dir = "";
  const bed: Testbed = {
    get dir() {
      return dir;
    },
    get seat() {
      return join(dir, "seat");
    },
    get record() {
      return join(dir, "record.json");
    },
    get stateFile() {
      return join(dir, "herdr-state.json");
    },
    state: () => JSON.parse(readFileSync(bed.stateFile, "utf8")) as StandinState,
    calls: (sub) =>
      standinLog(join(dir, "herdr-log.jsonl")).filter(
        (c) => !sub || c.argv.slice(0, 2).join(" ") === sub,
      ),
    program: (name = "alpha", herdr = {}) =>
      programWith(name, {
        page: { ntfy: { topic: `${name}-pages`, token_env: "NTFY_TOKEN" } },
        manager: {
          launcher: "herdr",
          env: { CLAUDE_CONFIG_DIR: bed.seat, RECORD_TO: bed.record },
          herdr: { args: ["--model", "opus", "--name={program}"], ...herdr },
        },
      }),
    herdr: (args, env = {}) => {
      const r = spawnSync(join(TEST_BIN, "herdr"), args, {
        encoding: "utf8",
        // The stand-in writes transcripts under the seat: never the real ~/.claude.
        env: { ...process.env, CLAUDE_CONFIG_DIR: bed.seat, ...env },
      });
      return { code: r.status, out: r.stdout, err: r.stderr };
    },
  };

  beforeEach(() => {
    dir = tempDir();
    const fakeBin = join(dir, "bin");
    mkdirSync(fakeBin, { recursive: true });
    writeRecorder(fakeBin, "claude");
    for (const k of Object.keys(process.env))
      if (k.startsWith("HERDR_STANDIN_")) delete process.env[k];
    process.env.PATH = `${TEST_BIN}:${fakeBin}:${SAVED.PATH}`;
    process.env.HERDR_STANDIN_STATE = bed.stateFile;
    process.env.HERDR_STANDIN_LOG = join(dir, "herdr-log.jsonl");
    process.env.HERDR_STANDIN_VERSION = version;
    process.env.HERDR_STANDIN_EFFECT_MS = "300";
  });

  afterEach(() => {
    // Every agent of each state file the stand-in kept (a test that plays two Herdr versions
    // keeps herdr-state.json.0.8.2 and .0.9.3), and only a process that runs this bed's fake
    // agent: a pid reused by another test's process is left alone.
    const name = basename(bed.stateFile);
    for (const f of existsSync(dir) ? readdirSync(dir) : []) {
      const version = f.startsWith(name) ? f.slice(name.length) : null;
      if (version !== "" && !/^\.\d+\.\d+\.\d+$/.test(version ?? "")) continue;
      let agents: { pid: number }[] = [];
      try {
        agents =
          (JSON.parse(readFileSync(join(dir, f), "utf8")) as { agents?: { pid: number }[] })
            .agents ?? [];
      } catch {
        continue; // torn or gone: nothing to read
      }
      for (const a of agents) if (runsBedAgent(a.pid, dir)) killGroup(a.pid);
    }
    const rec = readRecord(bed.record);
    if (rec) killGroup(rec.pid);
    for (const k of Object.keys(process.env)) if (!(k in SAVED)) delete process.env[k];
    Object.assign(process.env, SAVED);
  });

  return bed;
}

/** Whether the process runs this bed's fake agent (`<folder>/bin/…` in its /proc cmdline). */
function runsBedAgent(pid: number, folder: string): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8")
      .split("\0")
      .some((a) => a.startsWith(`${folder}/`));
  } catch {
    return false;
  }
}
