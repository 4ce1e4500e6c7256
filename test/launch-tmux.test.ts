// The tmux launcher against a real tmux server of the test's own (`$SHEEPDOG_TMUX_SOCKET`).
import { spawnSync } from "node:child_process";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { launcher } from "../src/launch/tmux.js";
import type { Launched } from "../src/launch/types.js";
import { tempDir } from "./helpers/cli.js";
import {
  alive,
  killGroup,
  programWith,
  readRecord,
  requestFor,
  waitFor,
  writeRecorder,
} from "./helpers/launch.js";

const SOCKET = `sheepdog-test-${process.pid}`;
const started: Launched[] = [];
let bin: string;
let recorder: string;

function tmux(...args: string[]) {
  const r = spawnSync("tmux", ["-L", SOCKET, ...args], { encoding: "utf8" });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

function sessions(): string[] {
  const r = tmux("list-sessions", "-F", "#{session_name}");
  return r.code === 0 ? r.out.trim().split("\n") : [];
}

function windowsOf(session: string): string[] {
  const r = tmux("list-windows", "-t", `=${session}`, "-F", "#{window_id}");
  return r.code === 0 ? r.out.trim().split("\n") : [];
}

/** A program whose tmux command runs the recorder with placeholders in its argv. */
function program(name: string, extra: Record<string, unknown> = {}, record = "") {
  const out = record || join(tempDir(), "record.json");
  const ctx = programWith(name, {
    page: { ntfy: { topic: `${name}-pages`, token_env: "NTFY_TOKEN" } },
    manager: {
      launcher: "tmux",
      env: { RECORD_TO: out, EXTRA_VAR: "x y 'z' \"w\" $HOME" },
      tmux: {
        command: [
          process.execPath,
          recorder,
          "{prompt}",
          "--program={program}",
          "--root={root}",
          "{reason}",
        ],
        ...extra,
      },
    },
  });
  return { ctx, out };
}

beforeAll(() => {
  // A server of our own, its socket in a folder of our own.
  process.env.TMUX_TMPDIR = tempDir();
  process.env.SHEEPDOG_TMUX_SOCKET = SOCKET;
  bin = tempDir();
  recorder = writeRecorder(bin, "recorder.cjs");
});

afterEach(() => {
  for (const l of started.splice(0)) if (l.pid) killGroup(l.pid);
});

afterAll(() => {
  tmux("kill-server");
  rmSync(process.env.TMUX_TMPDIR as string, { recursive: true, force: true });
  delete process.env.SHEEPDOG_TMUX_SOCKET;
  delete process.env.TMUX_TMPDIR;
});

describe("tmux launcher", () => {
  it("creates the session when absent and starts the argv in a new window, placeholders filled, no shell", async () => {
    const { ctx, out } = program("alpha");
    expect(sessions()).not.toContain("alpha");
    const reason = `it's "stuck" $(touch /tmp/sheepdog-pwned) ; echo no`;
    const req = requestFor(ctx, reason);
    const launched = await launcher.start(req);
    started.push(launched);

    expect(launched.launcher).toBe("tmux");
    expect(launched.pane).toMatch(/^%\d+$/);
    expect(launched.window).toMatch(/^alpha:@\d+$/);
    expect(launched.start_time).toMatch(/^linux:/);
    expect(sessions()).toContain("alpha");

    const rec = await waitFor("the manager's record", () => readRecord(out));
    expect(rec.pid).toBe(launched.pid);
    expect(rec.argv).toEqual([req.prompt, "--program=alpha", `--root=${ctx.root}`, reason]);
    expect(rec.cwd).toBe(ctx.root);
    expect(rec.env.SHEEPDOG_PROGRAM).toBe(ctx.root);
    expect(rec.env.EXTRA_VAR).toBe("x y 'z' \"w\" $HOME");
    expect(spawnSync("test", ["-e", "/tmp/sheepdog-pwned"]).status).not.toBe(0);
  });

  it("reuses a present session, one new window per start; close removes exactly that window", async () => {
    const { ctx } = program("beta", { session: "shared-beta" });
    tmux("new-session", "-d", "-s", "shared-beta", "-c", ctx.root);
    const before = windowsOf("shared-beta");
    expect(before).toHaveLength(1);

    const first = await launcher.start(requestFor(ctx));
    const second = await launcher.start(requestFor(ctx));
    started.push(first, second);
    expect(sessions().filter((s) => s === "shared-beta")).toHaveLength(1);
    const during = windowsOf("shared-beta");
    expect(during).toHaveLength(3);
    expect(first.window).not.toBe(second.window);
    expect(first.window?.startsWith("shared-beta:@")).toBe(true);

    await launcher.close(ctx, first);
    const after = windowsOf("shared-beta");
    expect(after).toHaveLength(2);
    expect(after).not.toContain(first.window?.split(":")[1]);
    expect(after).toContain(second.window?.split(":")[1]);
    await waitFor("the closed window's process to end", () => !alive(first.pid as number));
    expect(alive(second.pid as number)).toBe(true);

    // Closing again is fine: the pane is already gone.
    await launcher.close(ctx, first);
    expect(windowsOf("shared-beta")).toHaveLength(2);
  });

  it("screen returns the pane's text; null once the pane is gone", async () => {
    const ctx = programWith("gamma", {
      manager: {
        launcher: "tmux",
        tmux: {
          command: [
            "sh",
            "-c",
            'printf "%s\\n" "manager says: $1"; exec sleep 300',
            "sh",
            "{reason}",
          ],
        },
      },
    });
    const launched = await launcher.start(requestFor(ctx, "a reason with spaces"));
    started.push(launched);
    await waitFor("the pane to show the line", () => {
      const r = tmux("capture-pane", "-p", "-t", launched.pane as string);
      return r.out.includes("manager says");
    });
    const screen = await launcher.screen(ctx, launched);
    expect(screen).toContain("manager says: a reason with spaces");
    await launcher.close(ctx, launched);
    expect(await launcher.screen(ctx, launched)).toBeNull();
  });

  it("does not touch a pane whose process is not the recorded one", async () => {
    const { ctx } = program("delta");
    const launched = await launcher.start(requestFor(ctx));
    started.push(launched);
    const impostor = { ...launched, pid: (launched.pid as number) + 100000 };
    await launcher.close(ctx, impostor);
    expect(await launcher.screen(ctx, impostor)).toBeNull();
    expect(tmux("display-message", "-p", "-t", launched.pane as string, "#{pane_id}").code).toBe(0);
  });

  it("runs a one-word command without a shell", async () => {
    const dir = tempDir();
    const out = join(dir, "record.json");
    writeRecorder(dir, "only-word");
    const ctx = programWith("epsilon", {
      manager: {
        launcher: "tmux",
        env: { RECORD_TO: out, PATH: `${dir}:${process.env.PATH}` },
        tmux: { command: ["only-word"] },
      },
    });
    const launched = await launcher.start(requestFor(ctx));
    started.push(launched);
    const rec = await waitFor("the manager's record", () => readRecord(out));
    expect(rec.argv).toEqual([]);
    expect(rec.pid).toBe(launched.pid);
  });

  it("never hands the page token to tmux or the manager (a new server, and one started with it)", async () => {
    const saved = process.env.SHEEPDOG_TMUX_SOCKET;
    const socket = `${SOCKET}-token`;
    process.env.NTFY_TOKEN = "tk_never_in_a_pane";
    process.env.SHEEPDOG_TMUX_SOCKET = socket;
    // Two servers on two sockets: a server just killed can still hold its socket for a moment.
    const socketB = `${socket}-b`;
    const own = (...args: string[]) =>
      spawnSync("tmux", ["-L", socket, ...args], { encoding: "utf8" });
    const ownB = (...args: string[]) =>
      spawnSync("tmux", ["-L", socketB, ...args], { encoding: "utf8" });
    try {
      // A server the launcher starts itself, while the token is in this process's environment.
      const a = program("eta");
      started.push(await launcher.start(requestFor(a.ctx)));
      const recA = await waitFor("the manager's record", () => readRecord(a.out));
      expect(recA.env.SHEEPDOG_PROGRAM).toBe(a.ctx.root);
      expect(recA.env.NTFY_TOKEN).toBeUndefined();
      expect(own("show-environment", "-g").stdout).not.toContain("tk_never_in_a_pane");
      // A server someone started with the token set: the session still keeps it from the pane.
      process.env.SHEEPDOG_TMUX_SOCKET = socketB;
      const made = spawnSync("tmux", ["-L", socketB, "new-session", "-d", "-s", "theta"], {
        env: process.env,
        encoding: "utf8",
      });
      expect(made.status, made.stderr).toBe(0);
      expect(ownB("show-environment", "-g", "NTFY_TOKEN").stdout).toContain("tk_never_in_a_pane");
      const b = program("theta");
      started.push(await launcher.start(requestFor(b.ctx)));
      const recB = await waitFor("the manager's record", () => readRecord(b.out));
      expect(recB.env.NTFY_TOKEN).toBeUndefined();
    } finally {
      own("kill-server");
      ownB("kill-server");
      delete process.env.NTFY_TOKEN;
      process.env.SHEEPDOG_TMUX_SOCKET = saved;
    }
  });

  it("refuses a session name tmux would rewrite when the config loads (check says it, no start fails on it)", () => {
    expect(() => program("zeta", { session: "a.b" })).toThrow(/manager\.tmux\.session/);
  });
});
