// The command launcher's environment: the manager's own, never the page token.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { launcher } from "../src/launch/command.js";
import { tempDir } from "./helpers/cli.js";
import {
  killGroup,
  programWith,
  readRecord,
  requestFor,
  waitFor,
  writeRecorder,
} from "./helpers/launch.js";
import { killStarted, managerProgram, ofType, tick } from "./helpers/watchdog.js";

const pids: number[] = [];
const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const pid of pids.splice(0)) killGroup(pid);
  for (const c of cleanups.splice(0)) c();
  delete process.env.NTFY_TOKEN;
});

describe("command launcher environment", () => {
  it("the manager gets manager.env and SHEEPDOG_PROGRAM, never the page token variable", async () => {
    const dir = tempDir();
    const out = join(dir, "record.json");
    const recorder = writeRecorder(dir, "recorder.cjs");
    process.env.NTFY_TOKEN = "tk_never_in_a_manager";
    const ctx = programWith("alpha", {
      manager: {
        launcher: "command",
        command: [process.execPath, recorder, "{prompt}"],
        // even named in manager.env, the token variable is left out
        env: { RECORD_TO: out, NTFY_TOKEN: "tk_never_in_a_manager" },
      },
      page: { ntfy: { topic: "alpha-pages", token_env: "NTFY_TOKEN" } },
    });
    const launched = await launcher.start(requestFor(ctx));
    pids.push(launched.pid as number);
    const rec = await waitFor("the manager's record", () => readRecord(out));
    expect(rec.pid).toBe(launched.pid);
    expect(rec.env.SHEEPDOG_PROGRAM).toBe(ctx.root);
    expect(rec.env.RECORD_TO).toBe(out);
    expect(rec.env.NTFY_TOKEN).toBeUndefined();
    expect(JSON.stringify(rec.env)).not.toContain("tk_never_in_a_manager");
    // other variables of the tick's environment still reach it
    expect(rec.env.PATH).toBe(process.env.PATH);
  });

  it("a manager started by a real tick does not see the token in its environment", () => {
    const p = managerProgram(
      ["--save-every", "5"],
      {},
      {
        page: {
          ntfy: { server: "http://127.0.0.1:9", topic: "demo-pages", token_env: "NTFY_TOKEN" },
        },
      },
    );
    cleanups.push(() => killStarted(p.stateDir));
    const r = tick({ ...p.env, NTFY_TOKEN: "tk_never_in_a_manager" });
    expect(r.report.decision).toBe("start");
    const started = ofType(p.stateDir, "manager_started")[0] as unknown as { pid: number };
    const environ = readFileSync(`/proc/${started.pid}/environ`, "utf8").split("\0");
    expect(environ).toContain(`SHEEPDOG_PROGRAM=${p.root}`);
    expect(environ.filter((e) => e.startsWith("NTFY_TOKEN="))).toEqual([]);
  });
});
