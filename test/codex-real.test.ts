import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readRollout } from "../src/agent/codex/rollout.js";
import { linesBackward } from "../src/usage/backward.js";
import { captured } from "./helpers/claude-code.js";
import {
  CODEX_INSTALL,
  CODEX_VERSION,
  codexBinary,
  codexEnv,
  codexExec,
  makeCodexHome,
  rollouts,
} from "./helpers/codex-cli.js";
import {
  allowedHeaders,
  exec,
  type FakeOpenAI,
  usageLimitReply,
  useFreshFakeOpenAI,
} from "./helpers/fake-openai.js";
import { skipWithout } from "./helpers/tools.js";

// Smoke tests of the real Codex CLI against the scripted Responses API (test/helpers/
// fake-openai.ts), read back by the rollout reader: what the Codex end-to-end tests build on.
// Each `codex exec` turn takes about half a second and 150 MB.

const codex = await codexBinary();

describe.skipIf(skipWithout("codex", codex.why, CODEX_INSTALL))(
  `the real Codex CLI ${CODEX_VERSION}`,
  { concurrent: true },
  () => {
    const fresh = useFreshFakeOpenAI();
    const bin = codex.path ?? "";
    const dirs: string[] = [];
    afterAll(() => {
      for (const d of dirs) rmSync(d, { recursive: true, force: true, maxRetries: 5 });
    });

    /** A git work folder, a CODEX_HOME trusting it with a Stop hook (pre-trusted) and notify. */
    function setup(api: FakeOpenAI) {
      const dir = realpathSync(mkdtempSync(join(tmpdir(), "sheepdog-codex-")));
      dirs.push(dir);
      const cwd = join(dir, "work");
      const cap = join(dir, "cap");
      mkdirSync(cwd);
      mkdirSync(cap);
      execFileSync("git", ["init", "-q"], { cwd });
      const h = makeCodexHome({
        dir,
        api,
        trusted: [cwd],
        hooks: {
          Stop: {
            type: "command",
            command: `sh -c 'cat > "$0/Stop-$(date +%s%N).json"' ${cap}`,
            timeout: 10,
          },
        },
        notify: ["sh", "-c", `printf '%s' "$1" > "$0/notify-$(date +%s%N).json"`, cap],
      });
      return { cwd, cap, h, env: codexEnv(h, api) };
    }

    it("a tool turn offline: the call runs, the pre-trusted Stop hook and notify fire, the rollout reads", async () => {
      const api = await fresh();
      const s = setup(api);
      api.script(
        {
          name: "call",
          when: (t) => t.main && t.toolOutputs.length === 0,
          reply: exec("echo hi", { headers: allowedHeaders(42.5, 12) }),
        },
        {
          name: "done",
          when: (t) => t.main && t.toolOutputs.some((o) => /exited with code 0[\s\S]*hi/.test(o)),
          reply: {
            text: "Done.",
            usage: { input_tokens: 3100, cached_tokens: 3000, output_tokens: 9 },
            headers: allowedHeaders(43, 12),
          },
        },
      );
      const r = await codexExec(bin, ["run echo hi"], { cwd: s.cwd, env: s.env });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout.trim()).toBe("Done.");
      expect(api.pending()).toEqual([]);
      // Nothing left the machine: every proxy tunnel was refused.
      expect(api.refused.every((x) => x.startsWith("CONNECT "))).toBe(true);
      const [file] = rollouts(s.h);
      const state = readRollout(linesBackward(file ?? ""), { localZone: "UTC" });
      expect(state.context_tokens).toBe(3100);
      expect(state.readings?.windows.map((w) => [w.window, w.used_percentage])).toEqual([
        ["five_hour", 43],
        ["seven_day", 12],
      ]);
      expect(state.activity.state).toBe("ended");
      const stop = captured(s.cap, "Stop")[0]?.data;
      expect(stop).toMatchObject({
        hook_event_name: "Stop",
        transcript_path: file,
        cwd: s.cwd,
        last_assistant_message: "Done.",
      });
      expect(captured(s.cap, "notify")[0]?.data).toMatchObject({
        type: "agent-turn-complete",
        client: "codex_exec",
      });
    });

    it("a usage limit: exit 1, no Stop hook, the refusal exact to the reset the 429 named", async () => {
      const api = await fresh();
      const s = setup(api);
      const reset = Math.floor(Date.now() / 1000) + 1800;
      api.script({ when: (t) => t.main, times: 5, reply: usageLimitReply(reset) });
      const r = await codexExec(bin, ["run echo hi"], { cwd: s.cwd, env: s.env });
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(
        /ERROR: You’ve hit your usage limit\..* try again at \d{1,2}:\d\d [AP]M\./,
      );
      const state = readRollout(linesBackward(rollouts(s.h)[0] ?? ""));
      expect(state.refusal).toMatchObject({
        resets_at: reset,
        window: "five_hour",
        source: "rate_limits",
      });
      expect(captured(s.cap, "Stop")).toEqual([]);
      expect(captured(s.cap, "notify")).toEqual([]);
    });

    it("a plain 429: exit 1, no refusal", async () => {
      const api = await fresh();
      const s = setup(api);
      api.script({ when: (t) => t.main, times: 5, reply: { status: 429 } });
      const r = await codexExec(bin, ["run echo hi"], { cwd: s.cwd, env: s.env });
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/exceeded retry limit, last status: 429/);
      const state = readRollout(linesBackward(rollouts(s.h)[0] ?? ""));
      expect(state.refusal).toBeNull();
      expect(state.activity).toMatchObject({ state: "ended", error: { status: 429 } });
    });
  },
);
