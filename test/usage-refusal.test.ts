// A usage-limit refusal limits the whole seat until its own reset even when the statusline has a
// later reset on record (DESIGN §5): real `sheepdog statusline`/`tick`/`usage` processes, a real
// fake manager, a real transcript under a real seat folder, an HTTP stand-in for ntfy.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { CLI, sheepdog, sheepdogAsync, tempProgram } from "./helpers/cli.js";
import { useNtfyServer } from "./helpers/ntfy-server.js";
import { apiErrorLine, assistantLine, writeTranscript } from "./helpers/usage.js";
import {
  FAKE_MANAGER,
  killStarted,
  ofType,
  type TickProgram,
  waitForClaimBy,
} from "./helpers/watchdog.js";

const server = useNtfyServer();
const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

async function tick(env: NodeJS.ProcessEnv): Promise<TickProgram> {
  const r = await sheepdogAsync(["tick", "--json"], { env });
  expect(r.stderr).toBe("");
  expect(r.code).toBe(0);
  return (JSON.parse(r.stdout) as { programs: TickProgram[] }).programs[0] as TickProgram;
}

function program() {
  const p = tempProgram("catalog", {
    manager: {
      launcher: "command",
      command: [process.execPath, FAKE_MANAGER, "{prompt}"],
      env: { SHEEPDOG_CLI: CLI },
    },
    watchdog: { interval: "1h", stale_after: "1h", claim_grace: "1h" },
    usage: { pause_fallback: "1h" },
    page: { ntfy: { server: server.url, topic: "catalog-alerts" } },
  });
  const seat = join(p.home, "seat");
  mkdirSync(seat, { recursive: true });
  cleanups.push(() => killStarted(p.stateDir));
  return { ...p, seat, env: { ...p.env, CLAUDE_CONFIG_DIR: seat } };
}

describe("a refusal naming no time, with a later statusline reset on record", () => {
  it("tick pauses until now + pause_fallback, and usage shows the seat limited", async () => {
    const p = program();
    const first = await tick(p.env);
    expect(first.decision).toBe("start");
    const started = ofType(p.stateDir, "manager_started").at(-1) as unknown as { pid: number };
    await waitForClaimBy(p.stateDir, started.pid);

    // The statusline: 80 % of the five-hour window, resetting in 3 h.
    const resets = Math.floor(Date.now() / 1000) + 3 * 3600;
    const s = sheepdog(["statusline"], {
      env: p.env,
      input: JSON.stringify({
        rate_limits: { five_hour: { used_percentage: 80, resets_at: resets } },
      }),
    });
    expect(s.code).toBe(0);
    expect((await tick(p.env)).decision).toBe("ok");

    // The holder's transcript ends in a refusal naming no reset.
    const at = new Date();
    writeTranscript(join(p.seat, "projects", p.root.replace(/[^a-zA-Z0-9]/g, "-"), "a.jsonl"), [
      assistantLine(
        { input: 1200, cc: 300, cr: 90_000 },
        { timestamp: new Date(at.getTime() - 1000).toISOString() },
      ),
      apiErrorLine("You've hit your limit", at.toISOString()),
    ]);
    const t = await tick(p.env);
    expect(t.decision).toBe("pause");
    expect(t.reason).toMatch(/usage-limit refusal/);
    const now = Date.parse(String((t.facts as { now: string }).now));
    const paused = ofType(p.stateDir, "paused");
    expect(paused).toHaveLength(1);
    expect(paused[0]).toMatchObject({
      until: new Date(now + 3600_000).toISOString(),
      window: "five_hour",
    });
    expect((await tick(p.env)).decision).toBe("wait_pause");

    const u = sheepdog(["usage", "--seat", p.seat, "--json"], { env: p.env });
    expect(JSON.parse(u.stdout).seats[0]).toMatchObject({
      limited: true,
      reason: expect.stringMatching(/^five_hour usage-limit refusal until/),
      windows: {
        five_hour: {
          used_percentage: 80,
          resets_at: new Date(resets * 1000).toISOString(),
          reset: false,
        },
        seven_day: null,
      },
    });
  });
});
