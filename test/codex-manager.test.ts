// The real Codex CLI (0.171.0) as the manager, end to end: a program as `sheepdog init --agent
// codex` writes it (its profile in CODEX_HOME: permissions, trust, the trusted Stop hook),
// real ticks start Codex under the tmux launcher (its TUI) or the command launcher (`codex
// exec`), the fake Responses API makes it claim, save and hand over through exec_command, and
// the watchdog judges it from the rollouts Codex really wrote. Runs beside the rest (its own
// file); each Codex turn takes about half a second.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readHookRecords } from "../src/usage/hook-records.js";
import { lookupSession } from "../src/usage/sessions.js";
import { sheepdog } from "./helpers/cli.js";
import { CODEX_INSTALL, CODEX_VERSION, codexBinary, rollouts } from "./helpers/codex-cli.js";
import {
  codexProgram,
  managerModel,
  rolloutPrompts,
  saveAnswers,
} from "./helpers/codex-manager.js";
import { useFreshFakeOpenAI } from "./helpers/fake-openai.js";
import { skipWithout } from "./helpers/tools.js";
import { holder, isAlive, ofType, tickAsync, waitFor, waitForClaimBy } from "./helpers/watchdog.js";

const codex = await codexBinary();

interface Started {
  at: string;
  pid: number;
  start_time: string;
  pane?: string;
  reason: string;
  planned: boolean;
  launch_began?: string;
}
const starts = (stateDir: string) => ofType(stateDir, "manager_started") as unknown as Started[];
const ms = (iso: unknown) => Date.parse(String(iso));
const timing = (what: string, fromIso: unknown, toIso: unknown) =>
  process.stderr.write(`codex-manager timing: ${what}: ${ms(toIso) - ms(fromIso)} ms\n`);

describe.skipIf(skipWithout("codex", codex.why, CODEX_INSTALL))(
  `the real Codex CLI ${CODEX_VERSION} as the manager`,
  () => {
    const fresh = useFreshFakeOpenAI();
    const bin = codex.path as string;

    it("tmux: init's program starts with no dialog, claims, saves at the response's context against 75 % of model_context_window, hands over, and its successor claims", async () => {
      const api = await fresh();
      // gpt-6.2-sol's model_context_window is 475000: "auto" hands over at 356250.
      api.script(...managerModel({ tokens: 360_000, handOvers: 1 }));
      const p = codexProgram(bin, api);
      const t = await tickAsync(p.env);
      expect(t.code, t.stderr).toBe(0);
      expect(t.report.decision).toBe("start");
      const [a] = starts(p.stateDir);
      expect(a).toMatchObject({ launcher: "tmux", planned: true });
      await waitForClaimBy(p.stateDir, a?.pid as number);
      // The claim is Codex's own (the pane's process), not its shell's.
      const claimed = ofType(p.stateDir, "claimed")[0];
      expect(claimed?.pid).toBe(a?.pid);
      timing("start to claim", a?.launch_began ?? a?.at, claimed?.at);

      await waitFor("the hand-over", () => ofType(p.stateDir, "hand_over").length > 0, 60_000);
      const [saved] = saveAnswers(api);
      const rollout = rollouts(p.home)[0] as string;
      expect(saved).toMatchObject({
        program: "catalog",
        context_tokens: 360_000,
        hand_over: true,
        hand_over_at: 356_250,
        transcript: rollout,
      });
      expect(ofType(p.stateDir, "hand_over")[0]).toMatchObject({
        pid: a?.pid,
        context_tokens: 360_000,
        note: "context full",
      });
      // Its turn's Stop hook (init's, trusted in the profile) recorded the rollout for the pid.
      const session = /([0-9a-f-]{36})\.jsonl$/.exec(rollout)?.[1] as string;
      await waitFor("the Stop record", () => readHookRecords(session, p.env).stop);
      expect(lookupSession(a as Started, p.env)?.transcript_path).toBe(rollout);
      // The rate limits the fake sent are the seat's readings, recorded by save.
      const usage = JSON.parse(
        sheepdog(["usage", "--seat", p.home.codexHome, "--json"], { env: p.env }).stdout,
      );
      expect(usage.seats[0]).toMatchObject({ seat: p.home.codexHome, limited: false });

      const next = await tickAsync(p.env);
      expect(next.report.decision).toBe("start_after_hand_over");
      const b = starts(p.stateDir)[1] as Started;
      expect(b.planned).toBe(true);
      expect(isAlive(a?.pid as number, a?.start_time as string)).toBe(false);
      await waitForClaimBy(p.stateDir, b.pid);
      const prompts = rolloutPrompts(p.home);
      expect(prompts.filter((x) => x.includes(b.reason))).toHaveLength(1);
      expect(holder(p.stateDir)?.pid ?? b.pid).toBe(b.pid);
      // No app-server daemon was left behind (--no-daemon): no packages folder either.
      expect(existsSync(join(p.home.codexHome, "packages", "app-server-daemon"))).toBe(false);
    });

    it("tmux, the profile's trust taken away: accept_trust_dialog answers Trust this folder? and Hooks need review; without it the start fails with the screen", async () => {
      const api = await fresh();
      api.script(...managerModel({ tokens: 20_000 }));
      const p = codexProgram(bin, api, {
        manager: {
          tmux: {
            session: "catalog",
            command: ["codex", "--no-daemon", "--profile", "sheepdog", "{prompt}"],
            accept_trust_dialog: true,
          },
        },
      });
      const profile = join(p.home.codexHome, "sheepdog.config.toml");
      const untrusted = readFileSync(profile, "utf8")
        .replace(/\[projects\.[^\n]*\]\ntrust_level = "trusted"\n/, "")
        .replace(/\[hooks\.state\.[^\n]*\]\ntrusted_hash = "[^"]*"\n/, "");
      writeFileSync(profile, untrusted);
      // Codex asks "Trust this folder?" for a git repository (0.171.0: a plain folder it does not).
      execFileSync("git", ["init", "-q"], { cwd: p.root });
      const t = await tickAsync(p.env);
      expect(t.report.decision).toBe("start");
      expect(ofType(p.stateDir, "manager_start_failed")).toEqual([]);
      const [a] = starts(p.stateDir);
      await waitForClaimBy(p.stateDir, a?.pid as number);

      // Codex wrote both answers into the profile it runs with (the layer the hook came from),
      // keeping what sheepdog wrote there.
      const after = readFileSync(profile, "utf8");
      expect(after).toContain(`[projects."${p.root}"]\ntrust_level = "trusted"`);
      expect(after).toContain(`[hooks.state."${profile}:stop:0:0"]`);
      expect(after).toContain("approval_policy"); // what sheepdog wrote is still there

      // The same dialogs with accept_trust_dialog false: the start fails, nothing pressed.
      const api2 = await fresh();
      const q = codexProgram(bin, api2);
      writeFileSync(
        join(q.home.codexHome, "sheepdog.config.toml"),
        untrusted.replaceAll(p.root, q.root),
      );
      const u = await tickAsync(q.env);
      expect(u.code, u.stderr).toBe(0);
      const [failed] = ofType(q.stateDir, "manager_start_failed");
      expect(String(failed?.reason)).toMatch(/Codex is held at its trust dialog/);
      // 0.171.0 asks about the hooks first, then the folder.
      expect(String(failed?.screen)).toContain("Hooks need review");
      expect(api2.turns()).toHaveLength(0);
    });

    it("command: codex exec claims, saves with its context, and exits; its output is in manager.log", async () => {
      const api = await fresh();
      api.script(...managerModel({ tokens: 20_000 }));
      const p = codexProgram(bin, api, { launcher: "command" });
      expect((p.config.manager as { command: string[] }).command).toEqual([
        "codex",
        "--no-daemon",
        "--profile",
        "sheepdog",
        "exec",
        "--skip-git-repo-check",
        "{prompt}",
      ]);
      const t = await tickAsync(p.env);
      expect(t.code, t.stderr).toBe(0);
      expect(t.report.decision).toBe("start");
      const [a] = starts(p.stateDir);
      await waitFor("the save", () => ofType(p.stateDir, "saved")[0], 30_000);
      expect(ofType(p.stateDir, "claimed")[0]?.pid).toBe(a?.pid);
      expect(ofType(p.stateDir, "saved")[0]).toMatchObject({ pid: a?.pid, context_tokens: 20_000 });
      await waitFor("codex exec to end", () => !isAlive(a?.pid as number, a?.start_time as string));
      const log = readFileSync(join(p.stateDir, "manager.log"), "utf8");
      expect(log).toContain("Saved. Waiting for the next item.");
    });
  },
);
