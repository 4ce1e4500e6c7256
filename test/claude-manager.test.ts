// The real Claude Code (2.1.328) as the manager, end to end: real ticks start it under the tmux
// launcher in a real tmux window, the fake model makes it claim, save and hand over through its
// Bash tool, and the watchdog judges it from what it really wrote. The first start in an
// untrusted folder (its trust dialog answered, or the start failed with its screen), a hand-over
// to a real successor, and a `kill -9` of the real CLI.
import { readdirSync, readFileSync } from "node:fs";
import { basename, join } from "node:path";
import { describe, expect, it } from "vitest";
import { readHookRecords } from "../src/usage/hook-records.js";
import { projectFolderName } from "../src/usage/transcript.js";
import { CLAUDE_CODE_VERSION, CLAUDE_INSTALL, claudeBinary } from "./helpers/claude-code.js";
import {
  claudeProgram,
  managerModel,
  saveAnswers,
  transcriptPrompts,
  typeInto,
  usageOf,
} from "./helpers/claude-manager.js";
import { sheepdog } from "./helpers/cli.js";
import { bash, type Turn, useFreshFakeAnthropic } from "./helpers/fake-anthropic.js";
import { useNtfyServer } from "./helpers/ntfy-server.js";
import { skipWithout } from "./helpers/tools.js";
import { holder, isAlive, ofType, tickAsync, waitFor, waitForClaimBy } from "./helpers/watchdog.js";

const claude = await claudeBinary();

/** The compactMetadata of the newest compact_boundary in the folder's transcripts, or null. */
function transcriptBoundary(folder: string): Record<string, unknown> | null {
  let found: Record<string, unknown> | null = null;
  for (const f of readdirSync(folder).filter((n) => n.endsWith(".jsonl")))
    for (const line of readFileSync(join(folder, f), "utf8").split("\n"))
      if (line.includes('"compact_boundary"')) found = JSON.parse(line).compactMetadata ?? null;
  return found;
}

interface Started {
  at: string;
  pid: number;
  start_time: string;
  pane?: string;
  reason: string;
  planned: boolean;
  /** When the launch began (the start is journaled once the launcher returns). */
  launch_began?: string;
}
const starts = (stateDir: string) => ofType(stateDir, "manager_started") as unknown as Started[];
const ms = (iso: unknown) => Date.parse(String(iso));
/** Timings the closing notes quote, printed once per test. */
const timing = (what: string, fromIso: unknown, toIso: unknown) =>
  process.stderr.write(`claude-manager timing: ${what}: ${ms(toIso) - ms(fromIso)} ms\n`);

describe.skipIf(skipWithout("claude", claude.why, CLAUDE_INSTALL))(
  `the real Claude Code ${CLAUDE_CODE_VERSION} as the manager (tmux launcher)`,
  () => {
    const freshApi = useFreshFakeAnthropic();
    const ntfy = useNtfyServer();
    const bin = claude.path as string;

    it("a first start in an untrusted folder with accept_trust_dialog: the dialog is answered, it claims, and save's context is the model's usage", async () => {
      const api = await freshApi();
      api.script(...managerModel({ tokens: 14_404 }));
      const p = claudeProgram(bin, api, { trusted: false, accept: true });
      const t = await tickAsync(p.env);
      expect(t.code, t.stderr).toBe(0);
      expect(t.report.decision).toBe("start");
      const [s] = starts(p.stateDir);
      expect(s).toMatchObject({ launcher: "tmux", planned: true });
      await waitForClaimBy(p.stateDir, s?.pid as number);
      // The claim is the real CLI's own (the pane's process), not its shell's.
      expect(holder(p.stateDir)?.pid).toBe(s?.pid);
      const claude = JSON.parse(readFileSync(join(p.seat.configDir, ".claude.json"), "utf8"));
      expect(claude.projects[p.root]?.hasTrustDialogAccepted).toBe(true);
      const [saved] = await waitFor("the manager's save", () => {
        const a = saveAnswers(api);
        return a.length > 0 ? a : null;
      });
      expect(saved).toMatchObject({ program: "catalog", context_tokens: 14_404, hand_over: false });
      expect(String(saved?.transcript)).toContain(projectFolderName(p.root, {}));
      // Its turn ended: the Stop hook from init's snippet recorded it for the session.
      const session = basename(String(saved?.transcript), ".jsonl");
      const { stop } = await waitFor("the Stop record", () => {
        const r = readHookRecords(session, p.env);
        return r.stop ? r : null;
      });
      expect(stop).toMatchObject({ session_id: session, background_tasks: [], session_crons: [] });
      const claimed = ofType(p.stateDir, "claimed")[0];
      timing("start to claim (trust dialog answered)", s?.launch_began ?? s?.at, claimed?.at);
      // Its own save keeps it fresh.
      const again = await tickAsync(p.env);
      expect(again.report.decision).toBe("ok");
    });

    it("without accept_trust_dialog the start fails with the dialog's screen and one page; nothing is pressed", async () => {
      const api = await freshApi();
      api.script(...managerModel());
      ntfy.received.length = 0;
      const p = claudeProgram(bin, api, {
        trusted: false,
        accept: false,
        page: { ntfy: { server: ntfy.url, topic: "catalog" } },
      });
      const t = await tickAsync(p.env);
      expect(t.code, t.stderr).toBe(0);
      const [failed] = ofType(p.stateDir, "manager_start_failed");
      expect(failed).toMatchObject({ launcher: "tmux" });
      expect(String(failed?.reason)).toMatch(/folder-trust dialog/);
      expect(String(failed?.reason)).toContain("manager.tmux.accept_trust_dialog: true");
      expect(String(failed?.screen)).toMatch(/❯\s+No, exit/);
      expect(String(failed?.screen)).toContain("Yes, I trust this folder");
      await waitFor("the page", () => ntfy.received.length > 0);
      expect(ntfy.received).toHaveLength(1);
      expect(ntfy.received[0]?.message).toContain("Yes, I trust this folder");
      // The window was closed, and no Claude session began: the folder is still untrusted.
      const panes = p.tmux("list-panes", "-s", "-t", "=catalog", "-F", "#{pane_current_command}");
      expect(panes.out.trim().split("\n")).toEqual([expect.not.stringMatching(/claude/)]);
      const claude = JSON.parse(readFileSync(join(p.seat.configDir, ".claude.json"), "utf8"));
      expect(claude.projects?.[p.root]?.hasTrustDialogAccepted).not.toBe(true);
      expect(api.mainTurns()).toHaveLength(0);
    });

    it("a hand-over: the successor starts with the one-line prompt, its arrival is in the new transcript, and it claims", async () => {
      const api = await freshApi();
      api.script(...managerModel({ tokens: 160_004, handOvers: 1 }));
      const p = claudeProgram(bin, api);
      expect((await tickAsync(p.env)).report.decision).toBe("start");
      const [a] = starts(p.stateDir);
      await waitFor("the hand-over", () => ofType(p.stateDir, "hand_over").length > 0, 60_000);
      const [hand] = ofType(p.stateDir, "hand_over");
      expect(hand).toMatchObject({ pid: a?.pid, context_tokens: 160_004, note: "context full" });

      const t = await tickAsync(p.env);
      expect(t.report.decision).toBe("start_after_hand_over");
      const b = starts(p.stateDir)[1] as Started;
      expect(b.planned).toBe(true);
      expect(b.pid).not.toBe(a?.pid);
      // The manager that handed over is stopped by exact pid before its successor starts.
      expect(isAlive(a?.pid as number, a?.start_time as string)).toBe(false);
      // The tick returned once the prompt had arrived: it is in a transcript of the seat.
      const folder = join(p.seat.configDir, "projects", projectFolderName(p.root, {}));
      const prompts = transcriptPrompts(folder);
      expect(prompts).toHaveLength(2);
      expect(b.reason).toMatch(/handed over/);
      const successor = prompts.filter((t) => t.includes(b.reason));
      expect(successor).toHaveLength(1);
      expect(successor[0]).toContain(`Read ${p.root}/MANAGER-PROMPT.md and follow it.`);
      await waitForClaimBy(p.stateDir, b.pid);
      const claimed = ofType(p.stateDir, "claimed")[1];
      timing("hand-over to the successor's claim", hand?.at, claimed?.at);
      timing("successor's start to its claim", b.launch_began ?? b.at, claimed?.at);
    });

    it("auto-compact: after a turn near the window, Claude compacts by itself and save's context is the compacted one", async () => {
      const api = await freshApi();
      api.script(
        // The prompt a person types after the compaction: the model saves at the new context.
        {
          name: "after compact",
          when: (t) => t.main && /save again/.test(t.lastUser),
          times: Number.POSITIVE_INFINITY,
          reply: bash("sheepdog save", { usage: usageOf(3_404) }),
        },
        ...managerModel({ tokens: 96_000 }),
      );
      const p = claudeProgram(bin, api, { env: { CLAUDE_CODE_AUTO_COMPACT_WINDOW: "100000" } });
      expect((await tickAsync(p.env)).report.decision).toBe("start");
      const [a] = starts(p.stateDir);
      await waitForClaimBy(p.stateDir, a?.pid as number);
      const first = await waitFor("the first save", () => saveAnswers(api)[0]);
      expect(first.context_tokens).toBe(96_000);
      await typeInto(p, a?.pane as string, "save again");
      const second = await waitFor("the save after compaction", () => saveAnswers(api)[1], 60_000);
      const folder = join(p.seat.configDir, "projects", projectFolderName(p.root, {}));
      const boundary = transcriptBoundary(folder);
      expect(boundary).toMatchObject({ trigger: "auto", preTokens: expect.any(Number) });
      expect(second.context_tokens).toBe(3_404);
    });

    it("a manager keeps sheepdog wait in the background: its Stop lists the wait, and the wait wakes it when the program is paused", async () => {
      const api = await freshApi();
      const waitCall = {
        tool: {
          name: "Bash",
          input: {
            command: "sheepdog wait --every 20m",
            description: "wait",
            run_in_background: true,
          },
        },
        usage: usageOf(15_504),
      };
      // 2.1.328 tells the model a background command ended with a task notification naming
      // its output file, not the output: the model reads the file.
      const notified = (t: Turn) =>
        /<task-notification>[\s\S]*<status>completed<\/status>/.test(t.lastUser);
      api.script(
        {
          name: "read the wait's line",
          when: (t) => t.main && notified(t),
          reply: (t) =>
            bash(`cat ${/<output-file>([^<]+)<\/output-file>/.exec(t.lastUser)?.[1]}`, {
              usage: usageOf(15_604),
            }),
        },
        {
          name: "woken",
          when: (t) => t.main && t.toolResults.some((r) => /"event":"seat"/.test(r)),
          reply: { text: "Paused: saving and stopping.", usage: usageOf(15_704) },
        },
        {
          name: "wait",
          when: (t) => t.main && t.toolResults.some((r) => /"saved_at"/.test(r)),
          reply: waitCall,
        },
        ...managerModel({ tokens: 15_404 }),
      );
      const p = claudeProgram(bin, api);
      expect((await tickAsync(p.env)).report.decision).toBe("start");
      const [a] = starts(p.stateDir);
      await waitForClaimBy(p.stateDir, a?.pid as number);
      const [saved] = await waitFor("the save", () => {
        const s = saveAnswers(api);
        return s.length > 0 ? s : null;
      });
      const session = basename(String(saved?.transcript), ".jsonl");
      const { stop } = await waitFor("the Stop with the wait running", () => {
        const r = readHookRecords(session, p.env);
        return r.stop && r.stop.background_count > 0 ? r : null;
      });
      // As 2.1.328 reports a background shell (id, type, status, description, command).
      expect(stop?.background_tasks).toEqual([
        expect.objectContaining({
          type: "shell",
          status: "running",
          command: "sheepdog wait --every 20m",
        }),
      ]);
      // A pause wakes the wait; Claude Code wakes the model, which reads the wait's line.
      expect(sheepdog(["pause", "--until", "1h"], { env: p.env }).code).toBe(0);
      const woken = await waitFor(
        "the model to read the wait's line",
        () => api.mainTurns().find((t) => t.toolResults.some((r) => /"event":"seat"/.test(r))),
        45_000,
      );
      const output = woken.toolResults.find((r) => /"event"/.test(r)) as string;
      const line = JSON.parse(/\{"event".*\}/.exec(output)?.[0] ?? "null");
      expect(line).toMatchObject({
        event: "seat",
        reason: expect.stringMatching(/^the program is paused until /),
      });
    }, 120_000);

    it("kill -9 of the real CLI: the next tick replaces it, and the new one claims", async () => {
      const api = await freshApi();
      api.script(...managerModel());
      const p = claudeProgram(bin, api);
      expect((await tickAsync(p.env)).report.decision).toBe("start");
      const [a] = starts(p.stateDir);
      await waitForClaimBy(p.stateDir, a?.pid as number);
      const killedAt = new Date().toISOString();
      process.kill(a?.pid as number, "SIGKILL");
      await waitFor("the kill", () => !isAlive(a?.pid as number, a?.start_time as string));
      const t = await tickAsync(p.env);
      expect(t.report.decision).toBe("restart_dead");
      const b = starts(p.stateDir)[1] as Started;
      expect(b.planned).toBe(false);
      await waitForClaimBy(p.stateDir, b.pid);
      timing("kill -9 to the new claim", killedAt, ofType(p.stateDir, "claimed")[1]?.at);
    });
  },
);
