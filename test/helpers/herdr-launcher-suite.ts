// The herdr launcher's own tests, run by test/launch-herdr.test.ts against the stand-in as Herdr
// 0.8.2 and, those whose outcome depends on the release, by test/launch-herdr-0.9.test.ts as
// 0.9.3 (two files, so the two run side by side).

import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { appendEvent } from "../../src/journal/journal.js";
import { freeAgentName, type HerdrTiming, launcher, startHerdr } from "../../src/launch/herdr.js";
import { projectDirOf, promptArrived } from "../../src/launch/herdr-arrival.js";
import { StartFailed } from "../../src/launch/start-failed.js";
import { managerTranscriptEnv } from "../../src/usage/transcript.js";
import { herdrTestbed, type StandinVersion } from "./herdr-testbed.js";
import { alive, programWith, readRecord, requestFor, TEST_BIN, waitFor } from "./launch.js";

/**
 * The stand-in writes a delivered prompt's transcript entry before it answers, so a look at the
 * transcript (`arrivalMs`) only waits long for a prompt that was lost. `promptMs` is over
 * Herdr's 5 s effect gate, so a stall is `agent_prompt_stalled`, not `timeout`.
 */
export const FAST: HerdrTiming = { startMs: 10_000, promptMs: 8_000, arrivalMs: 600, tries: 3 };

/**
 * `full`: every test; else only those whose outcome depends on Herdr's release (what its
 * commands answer and when), not on the launcher's own bookkeeping, which one run covers.
 */
export function launcherSuite(version: StandinVersion, full = true): void {
  describe(`herdr launcher (the stand-in as Herdr ${version})`, () => {
    const t = herdrTestbed(version);
    const itFull = full ? it : () => {};

    it("creates the workspace, a tab, starts the agent, prompts and sees the prompt arrive", async () => {
      const ctx = t.program();
      const req = requestFor(ctx, `it's "stuck"; $(echo no)`);
      const launched = await startHerdr(req, FAST);

      const s = t.state();
      expect(s.workspaces.map((w) => w.label)).toEqual(["alpha"]);
      expect(launched).toMatchObject({ launcher: "herdr", agent: "manager" });
      expect(s.agents.map((a) => [a.name, a.pane_id])).toEqual([["manager", launched.pane]]);
      const pane = s.panes.find((p) => p.pane_id === launched.pane);
      expect(pane?.tab_id).toBe(launched.window);

      const argvs = t.calls().map((c) => c.argv);
      const ws = s.workspaces[0]?.workspace_id as string;
      expect(argvs).toEqual([
        // No workspace recorded for the program yet: a new one, never one found by its label.
        ["workspace", "create", "--cwd", ctx.root, "--label", "alpha", "--no-focus"],
        [
          "tab",
          "create",
          "--workspace",
          ws,
          "--cwd",
          ctx.root,
          "--label",
          "manager",
          "--env",
          `CLAUDE_CONFIG_DIR=${t.seat}`,
          "--env",
          `RECORD_TO=${t.record}`,
          "--env",
          `SHEEPDOG_PROGRAM=${ctx.root}`,
          "--no-focus",
        ],
        ["agent", "list"],
        [
          "agent",
          "start",
          "manager",
          "--kind",
          "claude",
          "--pane",
          launched.pane,
          "--timeout",
          "10000",
          "--",
          "--model",
          "opus",
          "--name=alpha",
        ],
        [
          "agent",
          "prompt",
          "manager",
          req.prompt,
          "--wait",
          "--until",
          "working",
          "--timeout",
          "8000",
        ],
        // The pid (AgentInfo has none) and the session Herdr's Claude integration reports.
        ["pane", "process-info", "--pane", launched.pane],
        ["agent", "get", "manager"],
      ]);
      expect(t.calls().flatMap((c) => c.violations)).toEqual([]);
      expect(t.calls().every((c) => c.exit === 0)).toBe(true);

      // The agent is a real process, started in the program root with the manager's env.
      const rec = await waitFor("the agent's record", () => readRecord(t.record));
      expect(rec.argv).toEqual(["--model", "opus", "--name=alpha"]);
      expect(rec.cwd).toBe(ctx.root);
      expect(rec.env.SHEEPDOG_PROGRAM).toBe(ctx.root);
      expect(alive(rec.pid)).toBe(true);
      expect(promptArrived(t.seat, ctx.root, req.prompt, Date.now() - 60_000)).toBe(true);
      // Stopped by exact pid like the other launchers' managers; the exact transcript is known.
      expect(launched.pid).toBe(rec.pid);
      expect(launched.start_time).toEqual(expect.any(String));
      expect(launched.workspace).toBe(ws);
      expect(launched.transcript).toMatch(
        new RegExp(
          `^${projectDirOf(t.seat, ctx.root).replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}/[0-9a-f-]{36}\\.jsonl$`,
        ),
      );
      expect(existsSync(launched.transcript as string)).toBe(true);
    });

    itFull(
      "finds the prompt in the project folder manager.env names with CLAUDE_CODE_PROJECT_DIR_NAME",
      async () => {
        // Claude Code in the pane gets manager.env: its transcripts go to <seat>/projects/<that
        // name>/, not the munged root; the arrival check must look where Claude writes.
        const ctx = programWith("alpha", {
          manager: {
            launcher: "herdr",
            env: {
              CLAUDE_CONFIG_DIR: t.seat,
              RECORD_TO: t.record,
              CLAUDE_CODE_PROJECT_DIR_NAME: "renamed",
            },
            herdr: { args: [] },
          },
        });
        const req = requestFor(ctx, "a reason");
        const launched = await startHerdr(req, FAST);
        const folder = join(t.seat, "projects", "renamed");
        expect(launched.transcript?.startsWith(`${folder}/`)).toBe(true);
        expect(existsSync(launched.transcript as string)).toBe(true);
        expect(existsSync(projectDirOf(t.seat, ctx.root))).toBe(false);
        const env = managerTranscriptEnv(ctx.config.manager.env);
        expect(projectDirOf(t.seat, ctx.root, env)).toBe(folder);
        expect(promptArrived(t.seat, ctx.root, req.prompt, Date.now() - 60_000, env)).toBe(true);
        expect(promptArrived(t.seat, ctx.root, req.prompt, Date.now() - 60_000)).toBe(false);
        // Our own environment's value gives way to the manager's.
        expect(managerTranscriptEnv({}, { CLAUDE_CODE_PROJECT_DIR_NAME: "ours" })).toEqual({
          CLAUDE_CODE_PROJECT_DIR_NAME: "ours",
        });
        expect(
          managerTranscriptEnv(
            { CLAUDE_CODE_PROJECT_DIR_NAME: "theirs" },
            { CLAUDE_CODE_PROJECT_DIR_NAME: "ours" },
          ),
        ).toEqual({ CLAUDE_CODE_PROJECT_DIR_NAME: "theirs" });
      },
    );

    itFull("never hands the page token to herdr or the agent", async () => {
      process.env.NTFY_TOKEN = "tk_never_in_a_pane";
      // herdr itself records the environment it was run with (it keeps it for every pane).
      const seen = join(t.dir, "herdr-env.jsonl");
      const wrapperDir = join(t.dir, "wrap");
      spawnSync("mkdir", ["-p", wrapperDir]);
      writeFileSync(
        join(wrapperDir, "herdr"),
        `#!/bin/sh\nprintf '%s\\n' "\${NTFY_TOKEN-unset}" >> ${JSON.stringify(seen)}\nexec ${JSON.stringify(join(TEST_BIN, "herdr"))} "$@"\n`,
        { mode: 0o755 },
      );
      process.env.PATH = `${wrapperDir}:${process.env.PATH}`;
      const ctx = t.program();
      const launched = await startHerdr(requestFor(ctx), FAST);
      expect(launched.agent).toBe("manager");
      const rec = await waitFor("the agent's record", () => readRecord(t.record));
      expect(rec.env.SHEEPDOG_PROGRAM).toBe(ctx.root);
      expect(rec.env.NTFY_TOKEN).toBeUndefined();
      const herdrSaw = readFileSync(seen, "utf8").trim().split("\n");
      expect(herdrSaw.length).toBeGreaterThan(3);
      expect(new Set(herdrSaw)).toEqual(new Set(["unset"]));
    });

    itFull(
      "reuses only the workspace it recorded, and gives a taken agent name a suffix",
      async () => {
        const ctx = t.program();
        // Someone else's workspace that happens to carry the program's name as its label.
        t.herdr(["workspace", "create", "--cwd", t.dir, "--label", "alpha", "--no-focus"]);
        const first = await startHerdr(requestFor(ctx), FAST);
        expect(t.calls("workspace create")).toHaveLength(2);
        expect(first.workspace).not.toBe(t.state().workspaces[0]?.workspace_id);
        // The tick journals what a start launched; the next start reuses that workspace.
        appendEvent(ctx.stateDir, {
          type: "manager_started",
          reason: "r",
          planned: true,
          ...first,
        });
        const second = await startHerdr(requestFor(ctx, "a second start"), FAST);
        expect(t.calls("workspace create")).toHaveLength(2);
        expect(second.workspace).toBe(first.workspace);
        expect(t.calls("tab create")).toHaveLength(2);
        expect(first.agent).toBe("manager");
        expect(second.agent).toBe("manager-2");
        expect(second.window).not.toBe(first.window);
        expect(t.calls("agent start")[1]?.argv[2]).toBe("manager-2");
        expect(t.calls("agent prompt")[1]?.argv[2]).toBe("manager-2");

        // Once the first is gone its name is free again.
        await launcher.close(ctx, first);
        const third = await startHerdr(requestFor(ctx, "a third start"), FAST);
        expect(third.agent).toBe("manager");
      },
    );

    itFull("uses the configured workspace label, agent name and kind", async () => {
      const ctx = t.program("beta", {
        workspace: "loops",
        agent: "boss",
        kind: "claude",
        args: [],
      });
      const launched = await startHerdr(requestFor(ctx), FAST);
      expect(launched.agent).toBe("boss");
      expect(t.state().workspaces.map((w) => w.label)).toEqual(["loops"]);
      // No agent args: no `--` either.
      expect(t.calls("agent start")[0]?.argv.slice(-4)).toEqual([
        "--pane",
        launched.pane,
        "--timeout",
        "10000",
      ]);
    });

    for (const [drops, mode] of [
      [1, "silent"],
      [2, "silent"],
      [1, "stalled"],
      [2, "stalled"],
    ] as const) {
      if (drops === 2 && !full) continue;
      it(`retries when the first ${drops} prompt(s) are lost (${mode})`, async () => {
        process.env.HERDR_STANDIN_DROP_PROMPTS = String(drops);
        process.env.HERDR_STANDIN_DROP_MODE = mode;
        const ctx = t.program();
        const req = requestFor(ctx);
        const launched = await startHerdr(req, FAST);
        expect(launched.agent).toBe("manager");
        const prompts = t.calls("agent prompt");
        expect(prompts).toHaveLength(drops + 1);
        expect(prompts.every((c) => c.argv[3] === req.prompt)).toBe(true);
        expect(prompts.map((c) => c.exit)).toEqual([
          ...Array(drops).fill(mode === "stalled" ? 1 : 0),
          0,
        ]);
        expect(promptArrived(t.seat, ctx.root, req.prompt, Date.now() - 60_000)).toBe(true);
      });
    }

    it("fails clearly after 3 lost prompts and closes the pane it made", async () => {
      process.env.HERDR_STANDIN_DROP_PROMPTS = "3";
      const ctx = t.program();
      const err = await startHerdr(requestFor(ctx), FAST).then(
        () => null,
        (e: Error) => e,
      );
      expect(err?.message).toMatch(/the prompt never reached agent manager/);
      expect(err?.message).toContain(projectDirOf(t.seat, ctx.root));
      expect(err?.message).toMatch(/send 3: herdr said delivered/);
      expect(err).toBeInstanceOf(StartFailed);
      expect((err as StartFailed).screen).toMatch(/prompt swallowed/);
      expect(t.calls("agent prompt")).toHaveLength(3);
      expect(t.calls("pane close")).toHaveLength(1);
      const rec = await waitFor("the agent's record", () => readRecord(t.record));
      await waitFor("the agent to be stopped", () => !alive(rec.pid));
      expect(t.state().agents).toEqual([]);
    });

    it("a start whose pass is given up sends nothing more and closes the pane it made", async () => {
      // Every prompt is lost, so the start would send three; the pass is given up after the first.
      process.env.HERDR_STANDIN_DROP_PROMPTS = "3";
      const pass = new AbortController();
      const giveUp = setInterval(() => {
        if (t.calls("agent prompt").length > 0) pass.abort();
      }, 20);
      const err = await startHerdr({ ...requestFor(t.program()), signal: pass.signal }, FAST)
        .then(
          () => null,
          (e: Error) => e,
        )
        .finally(() => clearInterval(giveUp));
      expect(err).toBeInstanceOf(StartFailed);
      expect((err as StartFailed).reason).toBe(
        "herdr: agent manager's start was given up with its pass",
      );
      expect((err as StartFailed).screen).toMatch(/prompt swallowed/);
      expect(t.calls("agent prompt")).toHaveLength(1);
      expect(t.calls("pane close")).toHaveLength(1);
    });

    it("close closes the pane and its process ends; screen shows the agent's screen", async () => {
      const ctx = t.program();
      const req = requestFor(ctx);
      const launched = await startHerdr(req, FAST);
      const rec = await waitFor("the agent's record", () => readRecord(t.record));

      const screen = await launcher.screen(ctx, launched);
      expect(screen).toContain(req.prompt);
      // By pane (a timed-out start clears the name), `visible` (a busy agent refuses `recent`).
      expect(t.calls("agent read").at(-1)?.argv).toEqual([
        "agent",
        "read",
        launched.pane,
        "--source",
        "visible",
      ]);

      await launcher.close(ctx, launched);
      expect(t.calls("pane close").at(-1)?.argv).toEqual(["pane", "close", launched.pane]);
      await waitFor("the agent to be stopped", () => !alive(rec.pid));
      expect(t.state().panes.some((p) => p.pane_id === launched.pane)).toBe(false);
      // Already gone: close is quiet, screen is null.
      await launcher.close(ctx, launched);
      expect(await launcher.screen(ctx, launched)).toBeNull();
    });

    itFull("does not close a pane that is no longer in the recorded tab", async () => {
      const ctx = t.program();
      const launched = await startHerdr(requestFor(ctx), FAST);
      await launcher.close(ctx, { ...launched, window: "w9:t99" });
      expect(t.calls("pane close")).toHaveLength(0);
      expect(t.state().panes.some((p) => p.pane_id === launched.pane)).toBe(true);
    });

    const faults: [string, unknown, RegExp][] = [
      [
        "workspace create",
        "malformed",
        /^herdr workspace create --label alpha: herdr's answer is not JSON/,
      ],
      [
        "tab create",
        "wrong_shape",
        /^herdr tab create --workspace w\d+: unexpected answer from herdr at \.result\.tab: /,
      ],
      [
        "agent start",
        { code: "server_error", message: "boom" },
        /^herdr agent start manager: Herdr error server_error: boom/,
      ],
      ["agent list", "exit2", /^herdr agent list: herdr rejected the command line \(exit 2\)/],
      [
        "agent prompt",
        { code: "agent_not_found", message: "agent manager not found" },
        /^herdr agent prompt manager: Herdr error agent_not_found/,
      ],
    ];
    for (const [sub, fault, expected] of faults) {
      itFull(
        `a bad answer from \`herdr ${sub}\` gives a clear error and leaves no pane behind`,
        async () => {
          process.env.HERDR_STANDIN_FAULT = JSON.stringify({ [sub]: fault });
          const ctx = t.program();
          await expect(startHerdr(requestFor(ctx), FAST)).rejects.toThrow(expected);
          if (existsSync(t.stateFile)) {
            const s = t.state();
            expect(s.agents).toEqual([]);
            // Once the tab is known, its pane is closed: only the new workspace's own pane remains.
            if (sub.startsWith("agent")) expect(s.panes).toHaveLength(1);
          }
        },
      );
    }

    itFull("says so when herdr is not installed", async () => {
      const ctx = t.program();
      process.env.PATH = "/nonexistent";
      await expect(startHerdr(requestFor(ctx), FAST)).rejects.toThrow(
        /^herdr workspace create --label alpha: cannot run herdr .*on PATH/,
      );
    });

    itFull("picks free agent names", () => {
      const cases: [string, string[], string][] = [
        ["manager", [], "manager"],
        ["manager", ["manager"], "manager-2"],
        ["manager", ["manager", "manager-2", "manager-3"], "manager-4"],
        ["a".repeat(32), ["a".repeat(32)], `${"a".repeat(30)}-2`],
      ];
      for (const [base, taken, want] of cases) {
        const got = freeAgentName(base, new Set(taken));
        expect(got).toBe(want);
        expect(got).toMatch(/^[a-z][a-z0-9_-]{0,31}$/);
      }
    });
  });
}
