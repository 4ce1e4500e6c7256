// A start whose process dies at once is dead, whatever the launcher (DESIGN §16, issue 18): no
// wait for claim_grace. Before, a process already gone (or a zombie) when its start was
// recorded had no start_time, so rule 12 could not judge it and waited the full 10 minutes.
import { spawnSync } from "node:child_process";
import { appendFileSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { tempDir, tempProgram } from "./helpers/cli.js";
import { killStarted, ofType, tick } from "./helpers/watchdog.js";

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0).reverse()) c();
});

function program(manager: Record<string, unknown>, env: Record<string, string> = {}) {
  const p = tempProgram("demo", {
    manager,
    watchdog: { interval: "1h", stale_after: "1h", claim_grace: "10m" },
  });
  cleanups.push(() => killStarted(p.stateDir));
  return { ...p, env: { ...p.env, ...env } };
}

/** A pid that no process has now: a child that ran and was reaped. */
function deadPid(): number {
  const r = spawnSync("sh", ["-c", "echo $$"], { encoding: "utf8" });
  return Number(r.stdout.trim());
}

describe("a start that dies at once", () => {
  it("the command launcher: the next tick judges it dead, not starting", () => {
    const p = program({ launcher: "command", command: ["/bin/sh", "-c", "exit 3"] });
    expect(tick(p.env).report.decision).toBe("start");
    const next = tick(p.env);
    expect(next.report.decision).toBe("start");
    expect(next.report.reason).toMatch(/exited before it claimed/);
  });

  it("a tmux pane whose command exits at once: the next tick judges it dead, not starting", () => {
    const tmpdir = tempDir("sd-tmux-");
    const socket = `sd-dies-${process.pid}`;
    cleanups.push(() => {
      spawnSync("tmux", ["-L", socket, "kill-server"], {
        env: { ...process.env, TMUX_TMPDIR: tmpdir },
      });
      rmSync(tmpdir, { recursive: true, force: true });
    });
    const p = program(
      { launcher: "tmux", tmux: { command: ["/bin/sh", "-c", "exit 3"] } },
      { SHEEPDOG_TMUX_SOCKET: socket, TMUX_TMPDIR: tmpdir },
    );
    expect(tick(p.env).report.decision).toBe("start");
    const next = tick(p.env);
    expect(next.report.decision).toBe("start");
    expect(next.report.reason).toMatch(/exited before it claimed/);
  });

  it.each([
    ["recorded as gone when it started (exited: true)", { exited: true }],
    ["recorded by an older version with no start time", {}],
  ])("a start %s is dead once its pid is gone", (_what, fields) => {
    const p = program({ launcher: "command", command: ["/bin/sh", "-c", "sleep 600"] });
    mkdirSync(p.stateDir, { recursive: true, mode: 0o700 });
    const at = new Date(Date.now() - 60_000).toISOString();
    const start = {
      at,
      type: "manager_started",
      reason: "first start",
      planned: true,
      launcher: "command",
      pid: deadPid(),
      ...fields,
    };
    appendFileSync(join(p.stateDir, "journal.jsonl"), `${JSON.stringify(start)}\n`, {
      mode: 0o600,
    });
    writeFileSync(join(p.stateDir, ".keep"), "");
    const r = tick(p.env);
    expect(r.report.decision).toBe("start");
    expect(ofType(p.stateDir, "manager_started")).toHaveLength(2);
  });
});
