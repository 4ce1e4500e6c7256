// Seat resolution order (DESIGN §4) through the CLI: `save` without `--transcript` reads the
// newest transcript in `<seat>/projects/<cwd>/`, where the seat is `usage.seat`, else
// `manager.env.CLAUDE_CONFIG_DIR`, else `$CLAUDE_CONFIG_DIR`, else `~/.claude` (`~` expanded).
import type { ChildProcess } from "node:child_process";
import { copyFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { sheepdog, sleeper, tempDir, tempProgram } from "./helpers/cli.js";
import { FIXTURES } from "./helpers/fixtures.js";
import { assistantLine, writeTranscript } from "./helpers/usage.js";

const FIXTURE = join(FIXTURES, "transcript-basic.jsonl");
// The fixture's context is 5 + 2210 + 140995 = 143210 (test/fixtures/README.md).
const FIXTURE_TOKENS = 143210;

const started: ChildProcess[] = [];
afterAll(() => {
  for (const p of started) p.kill("SIGKILL");
});

type Seat = "usage" | "manager_env" | "env" | "default";
const SEATS: readonly Seat[] = ["usage", "manager_env", "env", "default"];

interface Row {
  name: string;
  usageSeat: boolean;
  managerEnv: boolean;
  envVar: boolean;
  want: Seat;
}

const ROWS: Row[] = [
  {
    name: "usage.seat wins over manager.env.CLAUDE_CONFIG_DIR and $CLAUDE_CONFIG_DIR",
    usageSeat: true,
    managerEnv: true,
    envVar: true,
    want: "usage",
  },
  {
    name: "usage.seat wins over $CLAUDE_CONFIG_DIR alone",
    usageSeat: true,
    managerEnv: false,
    envVar: true,
    want: "usage",
  },
  {
    name: 'manager.env.CLAUDE_CONFIG_DIR "~/.claude-loop" wins over $CLAUDE_CONFIG_DIR',
    usageSeat: false,
    managerEnv: true,
    envVar: true,
    want: "manager_env",
  },
  {
    name: "with neither, $CLAUDE_CONFIG_DIR",
    usageSeat: false,
    managerEnv: false,
    envVar: true,
    want: "env",
  },
  {
    name: "with nothing, ~/.claude",
    usageSeat: false,
    managerEnv: false,
    envVar: false,
    want: "default",
  },
];

describe("seat resolution order (save without --transcript)", () => {
  it.each(ROWS)("$name", (row) => {
    const home = tempDir("sheepdog-seat-home-");
    const seatDir: Record<Seat, string> = {
      usage: join(home, ".seat-usage"),
      manager_env: join(home, ".claude-loop"),
      env: join(tempDir("sheepdog-seat-env-"), "env-seat"),
      default: join(home, ".claude"),
    };
    const p = tempProgram("demo", {
      ...(row.usageSeat ? { usage: { seat: "~/.seat-usage" } } : {}),
      ...(row.managerEnv ? { manager: { env: { CLAUDE_CONFIG_DIR: "~/.claude-loop" } } } : {}),
    });
    const folder = p.root.replace(/[^A-Za-z0-9]/g, "-");
    const transcripts = {} as Record<Seat, string>;
    for (const seat of SEATS) {
      const path = join(seatDir[seat], "projects", folder, `${seat}-session.jsonl`);
      // A decoy in every other seat: same project folder, its own (different) context size.
      writeTranscript(path, [assistantLine({ input: 1, cc: 2, cr: 3 })]);
      if (seat === row.want) copyFileSync(FIXTURE, path);
      transcripts[seat] = path;
    }

    const manager = sleeper();
    started.push(manager);
    const r = sheepdog(["save", "--pid", String(manager.pid)], {
      cwd: p.root,
      env: {
        ...p.env,
        HOME: home,
        CLAUDE_CONFIG_DIR: row.envVar ? seatDir.env : undefined,
      },
    });
    manager.kill("SIGKILL");
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.transcript).toBe(transcripts[row.want]);
    expect(out.context_tokens).toBe(FIXTURE_TOKENS);
  });
});
