// Hot commands never hang (DESIGN §18, issue 31): the statusline and the hooks read at most
// 1 MB of stdin within 5 s (a stdin that is never closed, a payload without end), and a
// transcript that is not a regular file (a FIFO) is refused without a blocking open, by the
// statusline and by `save --transcript`. The settings snippet gives each a timeout of 10 s.
import { spawn, spawnSync } from "node:child_process";
import { closeSync, constants, existsSync, openSync, readdirSync, writeSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { claudeSettings } from "../src/usage/claude-settings.js";
import { CLI, sleeper, tempProgram } from "./helpers/cli.js";

/** Past this a run is taken as hung and killed, so a failing build fails fast, not at 60 s. */
const HUNG_MS = 20_000;

interface Ended {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** Whether the test had to kill it. */
  hung: boolean;
}

/** Runs the CLI with `input` written to a stdin that is left open unless `close`. */
function run(
  args: string[],
  env: NodeJS.ProcessEnv,
  input: string | Buffer,
  close = false,
): Promise<Ended> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      env: { ...process.env, ...env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    let hung = false;
    child.stdout.on("data", (d) => {
      stdout += d;
    });
    child.stderr.on("data", (d) => {
      stderr += d;
    });
    child.stdin.on("error", () => {}); // it may stop reading before all is written: that is the point
    const timer = setTimeout(() => {
      hung = true;
      child.kill("SIGKILL");
    }, HUNG_MS);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      child.stdin.destroy();
      done({ code, signal, stdout, stderr, hung });
    });
    child.stdin.write(input);
    if (close) child.stdin.end();
  });
}

const SESSION = "9b1c8a52-0a6f-4a8e-9f2e-2c1d7e5b3a10";
const reading = (extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    rate_limits: { five_hour: { used_percentage: 33, resets_at: Date.now() / 1000 + 3600 } },
    session_id: SESSION,
    model: { display_name: "Opus" },
    ...extra,
  });

function fifo(dir: string): string {
  const path = join(dir, "transcript.jsonl");
  expect(spawnSync("mkfifo", [path]).status).toBe(0);
  return path;
}

describe("a stdin that is never closed", () => {
  it("statusline: a whole object is all it reads; it answers, records, and exits 0 at once", async () => {
    const p = tempProgram("hot");
    // a wait far longer than the test's: only the object's end can end the read
    const env = {
      ...p.env,
      SHEEPDOG_STDIN_WAIT_MS: "600000",
      CLAUDE_CONFIG_DIR: join(p.home, "seat"),
    };
    const r = await run(["statusline"], env, reading());
    expect(r.hung).toBe(false);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Opus · 5h 33% ↻\d\d:\d\d\n$/);
    expect(readdirSync(join(p.env.SHEEPDOG_STATE_DIR, "usage"))).toHaveLength(1);
  });

  it("statusline: half an object, then nothing: its line once the wait is over, and it ends", async () => {
    const p = tempProgram("hot");
    const env = { ...p.env, SHEEPDOG_STDIN_WAIT_MS: "400" };
    const r = await run(["statusline"], env, reading().slice(0, 30));
    expect(r.hung).toBe(false);
    expect(r.stdout).toBe("sheepdog · unreadable status input\n");
    // a read still pending cannot be taken back: the process ends itself once it has answered
    expect(r.signal).toBe("SIGTERM");
  });

  it("statusline: a payload without end is read to 1 MB and no further, not waited for", async () => {
    const p = tempProgram("hot");
    const env = { ...p.env, SHEEPDOG_STDIN_WAIT_MS: "600000" };
    const r = await run(["statusline"], env, Buffer.alloc(3 * 1024 * 1024, 0x20));
    expect(r.hung).toBe(false);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("sheepdog · no status input\n");
  });

  const payload = (event: string, root: string) =>
    JSON.stringify({
      session_id: SESSION,
      hook_event_name: { stop: "Stop", notification: "Notification" }[event] ?? "StopFailure",
      transcript_path: "/nonexistent.jsonl",
      cwd: root,
    });

  it.each([["stop"], ["notification"], ["stop-failure"]])(
    "hook %s: a whole payload: recorded, exit 0 at once, nothing on stdout",
    async (event) => {
      const p = tempProgram("hot");
      const env = { ...p.env, SHEEPDOG_STDIN_WAIT_MS: "600000" };
      const r = await run(["hook", event], env, payload(event, p.root));
      expect(r.hung).toBe(false);
      expect(r.code).toBe(0);
      expect(r.stdout).toBe("");
      if (event === "stop")
        expect(existsSync(join(p.env.SHEEPDOG_STATE_DIR, "hooks", `${SESSION}.stop.json`))).toBe(
          true,
        );
    },
  );

  it.each([["stop"], ["stop-failure"]])(
    "hook %s: half a payload, then nothing: it ends once the wait is over, recording nothing",
    async (event) => {
      const p = tempProgram("hot");
      const env = { ...p.env, SHEEPDOG_STDIN_WAIT_MS: "400" };
      const r = await run(["hook", event], env, payload(event, p.root).slice(0, 25));
      expect(r.hung).toBe(false);
      expect(r.signal).toBe("SIGTERM");
      expect(r.stdout).toBe("");
      expect(existsSync(join(p.env.SHEEPDOG_STATE_DIR, "hooks"))).toBe(false);
    },
  );
});

describe("a stdin that is a pipe (as a shell gives; Claude Code 2.1.332 gives a socket)", () => {
  /** The CLI with stdin from a FIFO this test holds open for writing (O_RDWR: no wait). */
  async function viaPipe(args: string[], env: NodeJS.ProcessEnv, input: string) {
    const dir = tempProgram("pipe").home;
    const path = join(dir, "stdin");
    expect(spawnSync("mkfifo", [path]).status).toBe(0);
    const writer = openSync(path, constants.O_RDWR);
    try {
      writeSync(writer, input);
      const child = spawn(process.execPath, [CLI, ...args], {
        env: { ...process.env, ...env },
        stdio: [openSync(path, "r"), "pipe", "pipe"],
      });
      let stdout = "";
      child.stdout?.on("data", (d) => {
        stdout += d;
      });
      const timer = setTimeout(() => child.kill("SIGKILL"), HUNG_MS);
      const [code, signal] = await new Promise<[number | null, string | null]>((done) =>
        child.on("close", (c, s) => done([c, s])),
      );
      clearTimeout(timer);
      return { code, signal, stdout };
    } finally {
      closeSync(writer);
    }
  }

  it("a whole object never followed by the pipe's end: answered at once", async () => {
    const p = tempProgram("hot");
    const r = await viaPipe(
      ["statusline"],
      { ...p.env, SHEEPDOG_STDIN_WAIT_MS: "600000" },
      reading(),
    );
    expect(r).toMatchObject({ code: 0, signal: null });
    expect(r.stdout).toMatch(/^Opus · 5h 33%/);
  });

  it("half an object: its line once the wait is over, exit 0 (nothing left pending)", async () => {
    const p = tempProgram("hot");
    const r = await viaPipe(
      ["statusline"],
      { ...p.env, SHEEPDOG_STDIN_WAIT_MS: "400" },
      '{"model"',
    );
    expect(r).toEqual({ code: 0, signal: null, stdout: "sheepdog · unreadable status input\n" });
  });
});

describe("a transcript that is a FIFO", () => {
  it("statusline: refused without opening it; the line is printed", async () => {
    const p = tempProgram("hot");
    const path = fifo(p.home);
    const r = await run(["statusline"], p.env, reading({ transcript_path: path }), true);
    expect(r.hung).toBe(false);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Opus · 5h 33%/);
  });

  it("save --transcript FIFO: refused without opening it, with a notice; the heartbeat is stamped", async () => {
    const p = tempProgram("hot");
    const path = fifo(p.home);
    const manager = sleeper();
    try {
      const r = await run(
        ["save", "--pid", String(manager.pid), "--transcript", path],
        p.env,
        "",
        true,
      );
      expect(r.hung).toBe(false);
      expect(r.code, r.stderr).toBe(0);
      const out = JSON.parse(r.stdout);
      expect(out.context_tokens).toBeNull();
      expect(out.notices).toContain(
        `transcript ${path} is not a regular file (a FIFO, a device or a folder): not read; context size unknown`,
      );
      expect(existsSync(join(p.stateDir, "heartbeat.json"))).toBe(true);
    } finally {
      manager.kill("SIGKILL");
    }
  });
});

describe("the settings snippet", () => {
  it("gives the statusline and each hook a timeout of 10 s", () => {
    const s = claudeSettings() as {
      statusLine: { timeout: number };
      hooks: Record<string, { hooks: { timeout: number }[] }[]>;
    };
    expect(s.statusLine.timeout).toBe(10);
    const hooks = Object.values(s.hooks).flatMap((groups) => groups.flatMap((g) => g.hooks));
    expect(hooks).toHaveLength(3);
    for (const h of hooks) expect(h.timeout).toBe(10);
  });
});
