// The one wrapper every external tool runs through: TERM then KILL to the whole process group
// at the deadline, output capped, one error format.
import { describe, expect, it } from "vitest";
import { runTool, toolFailure } from "../src/process/run-tool.js";

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe("runTool", () => {
  it("at the deadline sends TERM first: a tool that handles it says so and ends", async () => {
    const r = await runTool("sh", ["-c", 'trap "echo got-term; exit 0" TERM; sleep 30 & wait'], {
      timeoutMs: 200,
      killGraceMs: 10_000,
    });
    expect(r.timedOut).toBe(true);
    expect(r.code).toBeNull();
    expect(r.stdout).toContain("got-term");
    expect(toolFailure(r)).toMatch(/^sh -c .*: timed out: got-term$/);
  });

  it("then KILLs the whole group when TERM is ignored (no grandchild survives)", async () => {
    const r = await runTool(
      "sh",
      ["-c", 'trap "" TERM; sh -c \'trap "" TERM; echo $$; sleep 30\' & wait'],
      { timeoutMs: 200, killGraceMs: 200 },
    );
    expect(r.timedOut).toBe(true);
    expect(r.signal).toBe("SIGKILL");
    const grandchild = Number(r.stdout.trim());
    expect(grandchild).toBeGreaterThan(0);
    // SIGKILL is delivered at once, but the orphan is reaped by whoever adopts it: poll.
    for (let i = 0; i < 100 && alive(grandchild); i++) await new Promise((r) => setTimeout(r, 50));
    expect(alive(grandchild)).toBe(false);
  });

  it("caps each output stream and says it was cut", async () => {
    const r = await runTool("sh", ["-c", "head -c 100000 /dev/zero | tr '\\0' x"], {
      timeoutMs: 10_000,
      maxOutputBytes: 1000,
    });
    expect(r.stdout).toHaveLength(1000);
    expect(r.truncated).toBe(true);
  });

  it("passes input and the argv intact, no shell", async () => {
    const r = await runTool("sh", ["-c", 'cat; printf "%s" "$1"', "sh", "a 'b' $c"], {
      timeoutMs: 10_000,
      input: "in;",
    });
    expect(r).toMatchObject({ code: 0, stdout: "in;a 'b' $c", timedOut: false });
  });

  it("one error format: the command, how it ended, the tail of its stderr", async () => {
    const r = await runTool(
      "sh",
      ["-c", "echo one >&2; echo two >&2; echo three >&2; echo four >&2; exit 3"],
      {
        timeoutMs: 10_000,
      },
    );
    expect(r.code).toBe(3);
    expect(toolFailure(r)).toBe(
      "sh -c 'echo one >&2; echo two >&2; echo three >&2; echo four >&2; exit 3': exit 3: two / three / four",
    );
    const missing = await runTool("no-such-tool-sheepdog", ["x"], { timeoutMs: 10_000 });
    expect(missing.code).toBeNull();
    expect(missing.spawnError).toMatch(/ENOENT/);
    expect(toolFailure(missing)).toMatch(/^no-such-tool-sheepdog x: cannot run it: .*ENOENT/);
  });
});
