// An unsafe (world-writable) state directory: every command that concerns the program refuses
// with exit 2, naming the directory and why, and changes nothing; `doctor` reports it instead;
// host-level `usage` still works (DESIGN §9, issue 2).
import type { ChildProcess } from "node:child_process";
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sheepdog, sheepdogAsync, sleeper, tempProgram } from "./helpers/cli.js";
import { gitEnv, gitOut, workRepo } from "./helpers/manager-side.js";
import { type NtfyServer, ntfyServer } from "./helpers/ntfy-server.js";
import { hashTree } from "./helpers/watchdog.js";

let server: NtfyServer;
let manager: ChildProcess;
let p: ReturnType<typeof tempProgram>;
let env: NodeJS.ProcessEnv;
let seat: string;

beforeAll(async () => {
  server = await ntfyServer();
  manager = sleeper();
  const program = tempProgram("unsafe", {
    manager: {
      launcher: "command",
      // Were a tick to get through, what it started would exit at once (nothing to leak).
      command: [process.execPath, "-e", "process.exit(0)"],
    },
    merge_lock: { repo: "~/app" },
    page: {
      ntfy: { server: server.url, topic: "unsafe-alerts" },
      heartbeat_url: `${server.url}/hc/unsafe`,
    },
  });
  p = program;
  // HOME inside the hashed tree: nothing may be written there either (units, logs, configs).
  const home = join(p.home, "user-home");
  mkdirSync(home);
  seat = join(home, ".claude");
  env = { ...p.env, HOME: home, XDG_CONFIG_HOME: "", CLAUDE_CONFIG_DIR: seat };
  const git = { ...env, ...gitEnv(home) };
  Object.assign(env, git);
  const repo = workRepo(join(home, "app"), git);
  writeFileSync(join(repo, "README"), "app\n");
  gitOut(repo, ["add", "README"], git);
  gitOut(repo, ["commit", "-q", "-m", "first"], git);

  // A program with real state (a claim, a heartbeat, a journal) and a usage reading on its seat.
  const pid = String(manager.pid);
  expect(sheepdog(["claim", "acquire", "--pid", pid], { env }).code).toBe(0);
  expect(sheepdog(["save", "--pid", pid, "--transcript", "/nonexistent"], { env }).code).toBe(0);
  const reading = {
    rate_limits: { five_hour: { used_percentage: 42, resets_at: Date.now() / 1000 + 3600 } },
    session_id: "s1",
    model: { display_name: "Opus" },
  };
  expect(sheepdog(["statusline"], { env, input: JSON.stringify(reading) }).code).toBe(0);
  chmodSync(p.stateDir, 0o777);
});

afterAll(async () => {
  manager.kill("SIGKILL");
  await server.stop();
  if (p) chmodSync(p.stateDir, 0o700);
});

const pidArgs = () => ["--pid", String(manager.pid)];

/** `report`: the command prints its `{programs: [...]}` report, the refusal as its reason. */
const COMMANDS: { name: string; args: () => string[]; report?: true }[] = [
  { name: "tick", args: () => ["tick"] },
  { name: "tick --json", args: () => ["tick", "--json"], report: true },
  { name: "tick --dry-run", args: () => ["tick", "--dry-run"] },
  { name: "tick --dry-run --json", args: () => ["tick", "--dry-run", "--json"], report: true },
  { name: "status", args: () => ["status"] },
  { name: "status --json", args: () => ["status", "--json"], report: true },
  { name: "hand-over --note x", args: () => ["hand-over", "--note", "x", ...pidArgs()] },
  { name: "pause --until 1h", args: () => ["pause", "--until", "1h"] },
  { name: "unpause", args: () => ["unpause"] },
  { name: "resume", args: () => ["resume"] },
  { name: "finish --note x", args: () => ["finish", "--note", "x", ...pidArgs()] },
  { name: "reopen", args: () => ["reopen"] },
  { name: "merge-lock show", args: () => ["merge-lock", "show"] },
  { name: "merge-lock show --json", args: () => ["merge-lock", "show", "--json"] },
  { name: "page --test", args: () => ["page", "--test"] },
  { name: "report", args: () => ["report"] },
  { name: "report --json", args: () => ["report", "--json"] },
  {
    name: "install systemd --dry-run",
    args: () => ["install", "systemd", "--dry-run", "--program", p.root],
  },
];

describe("a world-writable .sheepdog", () => {
  it.each(COMMANDS)(
    "$name: exit 2 naming the directory and why; nothing changes",
    async (command) => {
      const before = hashTree(p.home);
      // async: the ntfy stand-in lives in this process and must be able to answer (and record)
      const r = await sheepdogAsync(command.args(), { env });
      expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(2);
      if (command.report) {
        // one JSON document on stdout, the program's row saying why
        const out = JSON.parse(r.stdout) as {
          programs: { root: string; decision: string; reason: string; actions: unknown[] }[];
        };
        expect(out.programs).toHaveLength(1);
        expect(out.programs[0]).toMatchObject({ root: p.root, decision: "error", actions: [] });
        expect(out.programs[0]?.reason).toContain(`unsafe state directory: ${p.stateDir}: `);
        expect(out.programs[0]?.reason).toContain("world-writable");
      } else {
        expect(r.stderr).toContain(`unsafe state directory: ${p.stateDir}: `);
        expect(r.stderr).toContain("world-writable");
        expect(r.stdout).toBe("");
      }
      expect(hashTree(p.home)).toBe(before);
      expect(server.received).toEqual([]);
      expect(server.heartbeats).toEqual([]);
    },
  );

  it("doctor exits 1 and reports it (with the fix), changing nothing", async () => {
    const before = hashTree(p.home);
    const r = await sheepdogAsync(["doctor", "--json"], { env });
    expect(r.code, r.stderr).toBe(1);
    const report = JSON.parse(r.stdout) as {
      ok: boolean;
      checks: { check: string; status: string; detail?: string; fix?: string }[];
    };
    expect(report.ok).toBe(false);
    const state = report.checks.find((c) => c.check === "state");
    expect(state?.status).toBe("fail");
    expect(state?.detail).toContain(p.stateDir);
    expect(state?.detail).toContain("world-writable");
    expect(state?.fix).toBe(`chmod 700 ${p.stateDir}`);
    const human = sheepdog(["doctor"], { env });
    expect(human.code).toBe(1);
    expect(human.stdout).toContain("world-writable");
    expect(hashTree(p.home)).toBe(before);
    expect(server.received).toEqual([]);
  });

  it("usage (host-level) still works and reports the seat's reading", () => {
    const r = sheepdog(["usage", "--json"], { env });
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as {
      seats: { seat: string; windows: { five_hour: { used_percentage: number } | null } }[];
    };
    const mine = out.seats.find((s) => s.seat === seat);
    expect(mine?.windows.five_hour?.used_percentage).toBe(42);
    const human = sheepdog(["usage"], { env });
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toContain("42");
  });

  it("the state is intact once fixed: the same program works again", () => {
    chmodSync(p.stateDir, 0o700);
    try {
      const r = sheepdog(["status", "--json"], { env });
      expect(r.code, r.stderr).toBe(0);
      const show = sheepdog(["merge-lock", "show", "--json"], { env });
      expect(show.code, show.stderr).toBe(0);
    } finally {
      chmodSync(p.stateDir, 0o777);
    }
  });
});
