import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
} from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { findTranscript, projectFolderName } from "../src/usage/transcript.js";
import {
  acceptTrustDialog,
  CLAUDE_CODE_VERSION,
  CLAUDE_INSTALL,
  ClaudeWindow,
  claudeBinary,
  claudeEnv,
  claudePrint,
  makeSeat,
  projectFolder,
  waitFor,
} from "./helpers/claude-code.js";
import { bash, useFakeAnthropic } from "./helpers/fake-anthropic.js";
import { skipWithout } from "./helpers/tools.js";

// Smoke tests of the real Claude Code CLI against the scripted API: what the other real-CLI
// tests build on. Few and small: each claude process takes about 250 MB and seconds to start.

const claude = await claudeBinary();

// biome-ignore lint/suspicious/noExplicitAny: transcript lines
function transcriptLines(folder: string): any[] {
  const files = readdirSync(folder).filter((f) => f.endsWith(".jsonl"));
  return files.flatMap((f) =>
    readFileSync(join(folder, f), "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l)),
  );
}

describe.skipIf(skipWithout("claude", claude.why, CLAUDE_INSTALL))(
  `the real Claude Code ${CLAUDE_CODE_VERSION}`,
  () => {
    const api = useFakeAnthropic();
    let dir = "";
    let cwd = "";
    const windows: ClaudeWindow[] = [];
    beforeEach(() => {
      api.reset();
      dir = realpathSync(mkdtempSync(join(tmpdir(), "sheepdog-claude-")));
      cwd = join(dir, "work");
      mkdirSync(cwd);
    });
    afterEach(() => {
      for (const w of windows.splice(0)) w.kill();
      rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
    });

    it("-p: runs the Bash tool the model asks for and records the model's usage exactly", async () => {
      const seat = makeSeat({
        dir,
        auth: "api-key",
        trusted: [cwd],
        settings: { permissions: { allow: ["Bash"] } },
      });
      const usage = {
        input_tokens: 3,
        cache_creation_input_tokens: 1200,
        cache_read_input_tokens: 13_000,
        output_tokens: 40,
      };
      api.script(
        {
          name: "run",
          when: (t) => t.main && t.lastUser.includes("say the word"),
          reply: bash("echo the-word-is-$((6*7))"),
        },
        {
          name: "answer",
          when: (t) => t.main && t.toolResults.length > 0,
          reply: { text: "It is 42.", usage },
        },
      );
      const started = Date.now();
      const out = await claudePrint(claude.path as string, ["-p", "say the word"], {
        cwd,
        env: claudeEnv(seat, api, { CLAUDE_CODE_MAX_RETRIES: "0" }),
      });
      expect(out.code).toBe(0);
      process.stderr.write(`claude -p, one tool turn: ${Date.now() - started} ms\n`);
      expect(out.stdout.trim()).toBe("It is 42.");
      expect(api.pending()).toEqual([]);
      // What the CLI sent back: the command's real output.
      expect(api.mainTurns()[1]?.toolResults).toEqual(["the-word-is-42"]);
      const lines = transcriptLines(projectFolder(seat, cwd));
      const last = lines.filter((l) => l.type === "assistant").at(-1);
      expect(last.message.content).toEqual([{ type: "text", text: "It is 42." }]);
      expect(last.message.usage).toMatchObject(usage);
      expect(api.refused.every((r) => r.startsWith("CONNECT "))).toBe(true);
    });

    it("a folder reached through a symlink: Claude names its transcript folder after the real path, and sheepdog looks there", async () => {
      const link = join(dir, "linked");
      symlinkSync(cwd, link);
      const seat = makeSeat({ dir, auth: "api-key", trusted: [cwd, link] });
      api.script({ when: (t) => t.main, reply: { text: "hello" } });
      const out = await claudePrint(claude.path as string, ["-p", "hi"], {
        cwd: link,
        env: { ...claudeEnv(seat, api, { CLAUDE_CODE_MAX_RETRIES: "0" }), PWD: link },
      });
      expect(out.code).toBe(0);
      const folders = readdirSync(join(seat.configDir, "projects"));
      expect(folders).toEqual([projectFolderName(cwd, {})]);
      expect(projectFolderName(link, {})).toBe(folders[0]);
      expect(findTranscript({ seat: seat.configDir, cwd: link, env: {} })).toMatch(/\.jsonl$/);
    });

    it("interactive in tmux: the trust dialog, a typed prompt, a Bash tool call under --permission-mode default", async () => {
      const seat = makeSeat({
        dir,
        auth: "oauth",
        settings: { permissions: { allow: ["Bash(echo:*)", "Bash"] } },
      });
      api.script(
        {
          name: "write",
          when: (t) => t.main && t.lastUser.includes("write the file"),
          reply: bash("echo hi > out.txt"),
        },
        {
          name: "done",
          when: (t) => t.main && t.toolResults.length > 0,
          reply: { text: "Written." },
        },
      );
      const t0 = Date.now();
      const w = ClaudeWindow.start({
        socket: `sheepdog-claude-${process.pid}`,
        bin: claude.path as string,
        cwd,
        env: claudeEnv(seat, api),
        args: ["--permission-mode", "default"],
      });
      windows.push(w);
      const dialog = await w.waitForScreen(/Yes, I trust this folder/);
      const tDialog = Date.now() - t0;
      expect(dialog).toMatch(/❯ No, exit/);
      await acceptTrustDialog(w);
      await w.waitForScreen(/manual mode on/);
      const tBox = Date.now() - t0;
      const cfg = JSON.parse(readFileSync(join(seat.configDir, ".claude.json"), "utf8"));
      expect(cfg.projects[cwd].hasTrustDialogAccepted).toBe(true);
      w.tmux("send-keys", "-t", w.target, "-l", "write the file");
      await w.waitForScreen(/❯\s+write the file/);
      const tTyped = Date.now();
      w.keys("Enter");
      await waitFor("out.txt", () => existsSync(join(cwd, "out.txt")), 30_000).catch((e) => {
        throw new Error(`${e.message}; the screen:\n${w.screen()}`);
      });
      await w.waitForScreen(/Written\./);
      process.stderr.write(
        `claude interactive: trust dialog at ${tDialog} ms, input box at ${tBox} ms, prompt to answer ${Date.now() - tTyped} ms\n`,
      );
      expect(readFileSync(join(cwd, "out.txt"), "utf8")).toBe("hi\n");
      expect(api.mainTurns()[1]?.toolResults).toEqual(["(Bash completed with no output)"]);
    });
  },
);

describe("the fake API between tests", () => {
  const api = useFakeAnthropic();

  it("a request begun before a reset (a killed CLI's, still in the socket buffers) is dropped; one after it is served", async () => {
    api.reset();
    const body = JSON.stringify({ model: "m", messages: [] });
    const socket = connect(api.port, "127.0.0.1");
    await new Promise((r) => socket.once("connect", r));
    const closed = new Promise((r) => socket.once("close", r));
    socket.on("error", () => {});
    socket.write(
      `POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 5)}`,
    );
    await new Promise((r) => setTimeout(r, 100)); // the server has the headers, not the body
    api.reset();
    socket.write(body.slice(5));
    await Promise.race([closed, new Promise((r) => setTimeout(r, 1000))]);
    socket.destroy();
    expect(api.requests).toEqual([]);
    const after = await fetch(`${api.url}/v1/messages/count_tokens`, { method: "POST", body });
    expect(after.status).toBe(200);
    expect(api.requests.map((q) => q.answeredBy)).toEqual(["count_tokens"]);
  });
});
