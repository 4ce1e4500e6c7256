// A start that fails (DESIGN §6) through real ticks: journaled as `manager_start_failed`, paged
// once, counted by the crash-loop guard, so a start that can never succeed stands down with one
// urgent page instead of failing on every tick.
import { afterEach, describe, expect, it } from "vitest";
import { sheepdogAsync, tempDir, tempProgram } from "./helpers/cli.js";
import { type NtfyServer, ntfyServer } from "./helpers/ntfy-server.js";
import { killStarted, ofType } from "./helpers/watchdog.js";

const cleanups: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function server(): Promise<NtfyServer> {
  const s = await ntfyServer();
  cleanups.push(() => s.stop());
  return s;
}

async function tickJson(env: NodeJS.ProcessEnv) {
  const r = await sheepdogAsync(["tick", "--json"], { env });
  expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(0);
  return (
    JSON.parse(r.stdout) as { programs: { decision: string; reason: string; actions: string[] }[] }
  ).programs[0] as { decision: string; reason: string; actions: string[] };
}

describe("failed starts through real ticks", () => {
  it("a manager command that cannot run: three failed starts, one page, then one stand-down", async () => {
    const ntfy = await server();
    const missing = `${tempDir()}/no-such-manager`;
    const p = tempProgram("catalog", {
      manager: { launcher: "command", command: [missing, "{prompt}"] },
      watchdog: { interval: "1h", claim_grace: "1h" },
      page: { ntfy: { server: ntfy.url, topic: "catalog" } },
    });
    cleanups.push(() => killStarted(p.stateDir));
    for (let n = 1; n <= 3; n++) {
      const r = await tickJson(p.env);
      expect(r.decision).toBe("start");
      expect(r.actions.join("\n")).toMatch(/^start failed: .*no-such-manager/m);
    }
    const failed = ofType(p.stateDir, "manager_start_failed");
    expect(failed).toHaveLength(3);
    expect(failed[0]).toMatchObject({ launcher: "command", planned: true });
    expect(failed[1]).toMatchObject({ launcher: "command", planned: false });
    expect(String(failed[0]?.reason)).toContain(missing);
    expect(ofType(p.stateDir, "manager_started")).toEqual([]);
    expect(ofType(p.stateDir, "tick_failed")).toEqual([]);

    const fourth = await tickJson(p.env);
    expect(fourth.decision).toBe("stand_down");
    expect(fourth.reason).toMatch(/failed: .*no-such-manager.*crash loop: 3 unplanned starts/);
    expect(ofType(p.stateDir, "manager_start_failed")).toHaveLength(3);
    expect((await tickJson(p.env)).decision).toBe("hold");

    // One page for the failed starts (the cooldown holds back the next two), one urgent for the
    // stand-down.
    const pages = ntfy.received.map((m) => ({ title: m.title, priority: m.priority }));
    expect(pages).toEqual([
      { title: "catalog: the manager did not start", priority: 4 },
      { title: "catalog stood down", priority: 5 },
    ]);
    expect(ntfy.received[0]?.message).toContain("no-such-manager");
  });
});
