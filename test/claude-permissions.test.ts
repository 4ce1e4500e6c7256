// The real Claude Code as a tmux-launched manager, set up as `sheepdog init --launcher tmux` sets
// it up (issue 33): its tmux command is `claude {prompt}` (auto mode, Claude Code's default) and
// its permission to run `sheepdog …` is the allow rule init writes into the program's
// `.claude/settings.json`. With it the manager claims with no key pressed; without it doctor
// fails naming the fix, and the start, held at auto mode's "can't check actions in this
// session" dialog behind the test's gateway (the fake API on 127.0.0.1), is paged `blocked` once
// with its screen, its screen and hook record kept before it is replaced.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CLAUDE_CODE_VERSION, CLAUDE_INSTALL, claudeBinary } from "./helpers/claude-code.js";
import { claudeProgram, managerModel } from "./helpers/claude-manager.js";
import { sheepdog, tempDir } from "./helpers/cli.js";
import { useFreshFakeAnthropic } from "./helpers/fake-anthropic.js";
import { useNtfyServer } from "./helpers/ntfy-server.js";
import { skipWithout } from "./helpers/tools.js";
import { graceDue, ofType, tickAsync, waitFor, waitForClaimBy } from "./helpers/watchdog.js";

const claude = await claudeBinary();
const HEADLINE = "Auto mode can't check actions in this session";

/** What `sheepdog init --launcher tmux` writes: the tmux command and `.claude/settings.json`. */
function initSetup(): { command: string[]; projectSettings: string } {
  const dir = join(tempDir(), "catalog");
  const r = sheepdog(["init", dir, "--launcher", "tmux"]);
  expect(r.code, r.stderr).toBe(0);
  const config = JSON.parse(readFileSync(join(dir, "program.json"), "utf8"));
  return {
    command: config.manager.tmux.command,
    projectSettings: readFileSync(join(dir, ".claude", "settings.json"), "utf8"),
  };
}

const permissionCheck = (env: NodeJS.ProcessEnv) => {
  const r = sheepdog(["doctor", "--json"], { env });
  const doc = JSON.parse(r.stdout) as {
    checks: { check: string; status: string; detail: string; fix: string | null }[];
  };
  return { code: r.code, check: doc.checks.find((c) => c.check === "claude-permissions") };
};
const ms = (iso: unknown) => Date.parse(String(iso));
const timing = (what: string, from: unknown, to: unknown) =>
  process.stderr.write(`claude-permissions timing: ${what}: ${ms(to) - ms(from)} ms\n`);

describe.skipIf(skipWithout("claude", claude.why, CLAUDE_INSTALL))(
  `the real Claude Code ${CLAUDE_CODE_VERSION}: a manager's permission to run sheepdog (tmux launcher, auto mode)`,
  () => {
    const freshApi = useFreshFakeAnthropic();
    const ntfy = useNtfyServer();
    const bin = claude.path as string;

    it("with init's settings it claims on its first start, no key pressed; doctor says so", async () => {
      const api = await freshApi();
      api.script(...managerModel());
      const setup = initSetup();
      expect(setup.command).toEqual(["claude", "{prompt}"]);
      const p = claudeProgram(bin, api, { auth: "oauth", init: setup });
      const doctor = permissionCheck(p.env);
      expect(doctor.check).toMatchObject({ status: "ok" });
      expect(doctor.check?.detail).toContain(join(p.root, ".claude", "settings.json"));
      const t = await tickAsync(p.env);
      expect(t.report.decision).toBe("start");
      const [s] = ofType(p.stateDir, "manager_started");
      await waitForClaimBy(p.stateDir, s?.pid as number);
      // The claim's Bash call ran unasked: its result reached the model.
      await waitFor("the claim's result at the model", () =>
        api.mainTurns().some((x) => x.toolResults.some((r) => /claimed by pid/.test(r))),
      );
      expect(ofType(p.stateDir, "blocked")).toHaveLength(0);
      timing(
        "start to claim (auto mode, init's allow rule)",
        s?.launch_began,
        ofType(p.stateDir, "claimed")[0]?.at,
      );
    });

    it("without them doctor fails naming the fix, and the held start is paged blocked once with its screen, its evidence kept", async () => {
      const api = await freshApi();
      api.script(...managerModel());
      const setup = { ...initSetup(), projectSettings: null };
      const p = claudeProgram(bin, api, {
        auth: "oauth",
        init: setup,
        // Long enough for the real CLI to reach its dialog on a loaded host, with the blocked
        // tick still inside it (10 s was not: the dialog once took over 20 s in a full run).
        watchdog: { claim_grace: "30s" },
        page: { ntfy: { server: ntfy.url, topic: "catalog" } },
      });
      const doctor = permissionCheck(p.env);
      expect(doctor.code).toBe(1);
      expect(doctor.check).toMatchObject({ status: "fail" });
      expect(doctor.check?.detail).toMatch(
        /would not run without a person: auto mode asks a person/,
      );
      expect(doctor.check?.fix).toContain(
        `add "Bash(sheepdog:*)" to permissions.allow in ${join(p.root, ".claude", "settings.json")}`,
      );

      expect((await tickAsync(p.env)).report.decision).toBe("start");
      const [s] = ofType(p.stateDir, "manager_started");
      const pane = String(s?.pane);
      const screen = () => p.tmux("capture-pane", "-p", "-t", pane).out;
      await waitFor("auto mode's dialog", () => screen().includes(HEADLINE), 25_000).catch(
        (err: Error) => {
          const failed = ofType(p.stateDir, "manager_start_failed").map((e) => e.reason);
          throw new Error(`${err.message}; the pane shows:\n${screen()}\n${failed.join("\n")}`);
        },
      );
      const t = await tickAsync(p.env);
      expect(t.report.decision, t.report.reason).toBe("blocked");
      const [blocked] = ofType(p.stateDir, "blocked");
      expect(blocked).toMatchObject({ pid: s?.pid, screen: expect.stringContaining(HEADLINE) });
      timing("start to blocked", s?.launch_began, blocked?.at);
      await waitFor("the page", () => ntfy.received.length > 0);
      expect(ntfy.received).toHaveLength(1);
      expect(ntfy.received[0]?.message).toContain(HEADLINE);
      expect(ntfy.received[0]?.message).toContain("See: sheepdog doctor");

      // The next tick waits on and says why; nothing is pressed, nothing paged again.
      const again = await tickAsync(p.env);
      expect(again.report.decision).toBe("starting");
      expect(again.report.reason).toMatch(/it waits for a person/);
      expect(ntfy.received).toHaveLength(1);

      // Past claim_grace: its screen and its Notification are kept, then it is replaced.
      const due = graceDue(p.stateDir, 30_000) - Date.now() + 100;
      if (due > 0) await new Promise((r) => setTimeout(r, due));
      const r = await tickAsync(p.env);
      expect(r.report.decision, r.report.reason).toBe("start");
      expect(r.report.reason).toContain("it waited for a person");
      const [stopped] = ofType(p.stateDir, "manager_stopped");
      expect(stopped).toMatchObject({ pid: s?.pid, who: "leftover" });
      const kept = String(stopped?.evidence);
      expect(readFileSync(join(kept, "screen.txt"), "utf8")).toContain(HEADLINE);
      const hooks = JSON.parse(readFileSync(join(kept, "hooks.json"), "utf8"));
      expect(hooks.notification).toMatchObject({
        notification_type: "agent_needs_input",
        message: `${HEADLINE} and needs your choice`,
      });
    }, 120_000);
  },
);
