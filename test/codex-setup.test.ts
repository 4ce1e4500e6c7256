// Setting a Codex program up through the CLI (DESIGN §19): `init --agent codex` (the program
// and sheepdog's profile in CODEX_HOME), `check` refusing what would fail at a start, `doctor`'s
// Codex checks against the real `codex --version` and the profile, and `hook stop` with Codex's
// Stop payload recording the rollout for the Codex process.
import { spawnSync } from "node:child_process";
import {
  chmodSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CLI, sheepdog, sleeper, tempDir } from "./helpers/cli.js";
import { CODEX_INSTALL, codexBinary } from "./helpers/codex-cli.js";
import { FIXTURES } from "./helpers/fixtures.js";
import { skipWithout } from "./helpers/tools.js";

const codex = await codexBinary();

interface Check {
  check: string;
  status: string;
  detail: string;
  fix: string | null;
}

/** `init DIR --agent codex` in a fresh home with its own CODEX_HOME. */
function initCodex(launcher = "tmux") {
  const home = tempDir("sd-codex-setup-");
  const codexHome = join(home, ".codex");
  const root = join(home, "catalog");
  const bin = join(home, "bin");
  spawnSync("mkdir", ["-p", bin]);
  const env = {
    SHEEPDOG_HOME: home,
    SHEEPDOG_STATE_DIR: join(home, ".state"),
    CODEX_HOME: codexHome,
    HOME: home,
    PATH: `${bin}:${process.env.PATH ?? ""}`,
  };
  const r = sheepdog(["init", root, "--agent", "codex", "--launcher", launcher, "--json"], { env });
  return { home, codexHome, root, bin, env, r, profile: join(codexHome, "sheepdog.config.toml") };
}

const doctor = (s: ReturnType<typeof initCodex>) => {
  const r = sheepdog(["doctor", "--program", s.root, "--json"], { env: s.env });
  const checks = (JSON.parse(r.stdout) as { checks: Check[] }).checks;
  return (name: string) => checks.find((c) => c.check === name);
};

describe("init --agent codex", () => {
  it("writes the program (codex --no-daemon --profile sheepdog, the resume line, the seat) and the profile (0600); check passes", () => {
    const s = initCodex();
    expect(s.r.code, s.r.stderr).toBe(0);
    expect(JSON.parse(s.r.stdout)).toMatchObject({
      agent: "codex",
      created: [join(s.root, "program.json"), join(s.root, "MANAGER-PROMPT.md"), s.profile],
    });
    const config = JSON.parse(readFileSync(join(s.root, "program.json"), "utf8"));
    expect(config.manager).toMatchObject({
      agent: "codex",
      resume_line: "The usage limit has reset. Continue from your last save.",
      env: { CODEX_HOME: s.codexHome },
      tmux: { command: ["codex", "--no-daemon", "--profile", "sheepdog", "{prompt}"] },
    });
    expect(statSync(s.profile).mode & 0o777).toBe(0o600);
    expect(readFileSync(join(s.root, "MANAGER-PROMPT.md"), "utf8")).toMatch(
      /sheepdog wait --every 20m/,
    );
    const c = sheepdog(["check", "--program", s.root], { env: s.env });
    expect(c.code, c.stderr).toBe(0);
    // A second program on the seat adds its root to the same profile.
    const dog = join(s.home, "dog");
    const again = sheepdog(["init", dog, "--agent", "codex", "--json"], { env: s.env });
    expect(JSON.parse(again.stdout).updated).toEqual([s.profile]);
    expect(readFileSync(s.profile, "utf8")).toContain(`[projects."${dog}"]`);
  });
  it("an unknown agent is bad usage", () => {
    const home = tempDir();
    const r = sheepdog(["init", join(home, "x"), "--agent", "gemini"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--agent: expected one of claude, codex, got "gemini"/);
  });
});

describe("save --transcript takes a rollout", () => {
  it("its context, 75 % of its model_context_window, and its rate limits recorded for the seat", () => {
    const s = initCodex();
    const rollout = join(
      s.home,
      "rollout-2026-12-03T13-27-15-01a23c16-78ce-7fd2-b992-3ec32ae887c4.jsonl",
    );
    writeFileSync(
      rollout,
      readFileSync(join(FIXTURES, "codex-0.171.0", "rollout-tool-turn.jsonl"), "utf8"),
    );
    const manager = sleeper();
    const pid = String(manager.pid);
    try {
      const r = sheepdog(["save", "--pid", pid, "--transcript", rollout, "--program", s.root], {
        env: s.env,
      });
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({
        context_tokens: 2600,
        hand_over: false,
        hand_over_at: 356_250,
        transcript: rollout,
      });
      const usage = JSON.parse(
        sheepdog(["usage", "--seat", s.codexHome, "--json"], { env: s.env }).stdout,
      );
      // The fixture's five-hour window (42.5 % then 43 %, resets hours after 2026-12-03) as read.
      expect(Object.keys(usage.seats[0].windows)).toEqual(["five_hour", "seven_day"]);
      const readings = readFileSync(
        join(
          s.env.SHEEPDOG_STATE_DIR,
          "usage",
          readdirSync(join(s.env.SHEEPDOG_STATE_DIR, "usage"))[0] as string,
        ),
        "utf8",
      );
      expect(readings).toMatch(
        /"source":"rollout","session":"01a23c16-78ce-7fd2-b992-3ec32ae887c4"/,
      );
    } finally {
      manager.kill("SIGKILL");
    }
  });
});

describe("check refuses what would fail at a start", () => {
  it.each([
    [["codex", "{prompt}"], /manager\.tmux\.command: expected --no-daemon before any subcommand/],
    [["claude", "{prompt}"], /manager\.agent: expected "claude"/],
  ])("%j: exit 2 naming the file and the field", (command, want) => {
    const s = initCodex();
    const file = join(s.root, "program.json");
    const config = JSON.parse(readFileSync(file, "utf8"));
    config.manager.tmux.command = command;
    writeFileSync(file, JSON.stringify(config));
    const r = sheepdog(["check", "--program", s.root], { env: s.env });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${file}: `);
    expect(r.stderr).toMatch(want);
  });

  it.each(["tmux", "herdr"])(
    "a codex program whose %s section is left out (the launcher runs codex's default) is not judged by Claude Code's checks",
    (launcher) => {
      const s = initCodex();
      const file = join(s.root, "program.json");
      const config = JSON.parse(readFileSync(file, "utf8"));
      config.manager.launcher = launcher;
      delete config.manager.tmux;
      delete config.manager.herdr;
      writeFileSync(file, JSON.stringify(config));
      // Claude Code settings in the folder (a person runs claude there too) are not the manager's.
      spawnSync("mkdir", ["-p", join(s.root, ".claude")]);
      writeFileSync(
        join(s.root, ".claude", "settings.json"),
        JSON.stringify({
          hooks: { Interrupt: [{ hooks: [{ type: "command", command: "true" }] }] },
        }),
      );
      const r = sheepdog(["check", "--program", s.root], { env: s.env });
      expect(r.stderr).not.toMatch(/Bash\(sheepdog|Claude Code/);
      expect(r.code, r.stderr).toBe(0);
    },
  );
});

describe.skipIf(skipWithout("codex", codex.why, CODEX_INSTALL))("doctor's Codex checks", () => {
  it("init's profile and the real 0.171.0: version, hooks, permissions and trust all ok", () => {
    const s = initCodex();
    symlinkSync(codex.path as string, join(s.bin, "codex"));
    const c = doctor(s);
    expect(c("codex-version")).toMatchObject({
      status: "ok",
      detail: expect.stringMatching(/codex-cli 0\.171\.0 \(a tested version\)/),
    });
    expect(c("codex-hooks")).toMatchObject({ status: "ok" });
    expect(c("codex-permissions")).toMatchObject({
      status: "ok",
      detail: expect.stringMatching(/approval_policy never .*sandbox_mode danger-full-access/),
    });
    expect(c("codex-trust")).toMatchObject({ status: "ok" });
    // Claude's settings are not looked for in a Codex program.
    expect(c("statusline")).toBeUndefined();
  });
  it("the hook untrusted fails; a person's approval policy fails; the root untrusted warns", () => {
    const s = initCodex();
    symlinkSync(codex.path as string, join(s.bin, "codex"));
    const text = readFileSync(s.profile, "utf8");
    writeFileSync(
      s.profile,
      text
        .replace(/trusted_hash = "[^"]*"/, 'trusted_hash = "sha256:stale"')
        .replace('approval_policy = "never"', 'approval_policy = "on-request"')
        .replace(/\[projects\.[^\n]*\]\ntrust_level = "trusted"\n/, ""),
    );
    const c = doctor(s);
    expect(c("codex-hooks")).toMatchObject({
      status: "fail",
      detail: expect.stringMatching(/not trusted .*skips it silently/),
    });
    expect(c("codex-permissions")).toMatchObject({
      status: "fail",
      detail: expect.stringMatching(/approval_policy on-request/),
    });
    expect(c("codex-trust")).toMatchObject({
      status: "warn",
      detail: expect.stringMatching(/Trust this folder\?/),
    });
  });
  it.each([
    ["0.170.0", "fail", /older than the oldest tested \(0\.171\.0\)/],
    ["0.172.0", "warn", /not a tested version .*the newest is 0\.171\.0/],
  ])("codex-cli %s: %s", (version, status, want) => {
    const s = initCodex();
    // Only the version line differs between releases here: a script that prints it.
    writeFileSync(join(s.bin, "codex"), `#!/bin/sh\necho "codex-cli ${version}"\n`);
    chmodSync(join(s.bin, "codex"), 0o755);
    expect(doctor(s)("codex-version")).toMatchObject({
      status,
      detail: expect.stringMatching(want),
    });
  });
});

describe("hook stop with Codex's Stop payload", () => {
  /** Runs `sheepdog hook stop` as Codex does (through a shell) from a node process standing in for it. */
  function runHook(payload: string, state: string): { pid: number; code: number; out: string } {
    const r = spawnSync(
      process.execPath,
      [
        "-e",
        `const c = require("node:child_process").spawnSync("sh", ["-c", process.argv[1] + " hook stop"], { input: process.argv[2], encoding: "utf8" }); process.stdout.write(JSON.stringify({ pid: process.pid, code: c.status, out: c.stdout }));`,
        `${process.execPath} ${CLI}`,
        payload,
      ],
      { encoding: "utf8", env: { ...process.env, SHEEPDOG_STATE_DIR: state } },
    );
    return JSON.parse(r.stdout);
  }
  const sessionFile = (state: string, pid: number) => join(state, "sessions", `${pid}.json`);

  it("records the hook and the rollout for the Codex process (the hook's nearest ancestor that is not a shell), silently", () => {
    const home = tempDir("sd-codex-hook-");
    const codexHome = join(home, ".codex");
    const state = join(home, ".state");
    const payload = readFileSync(join(FIXTURES, "codex-0.171.0", "hook-stop.json"), "utf8")
      .replaceAll("{CODEX_HOME}", codexHome)
      .replaceAll("{CWD}", join(home, "catalog"));
    const stop = JSON.parse(payload);
    const ran = runHook(payload, state);
    expect(ran).toMatchObject({ code: 0, out: "" });
    expect(JSON.parse(readFileSync(sessionFile(state, ran.pid), "utf8"))).toMatchObject({
      pid: ran.pid,
      transcript_path: stop.transcript_path,
      session_id: stop.session_id,
      seat: codexHome,
    });
    const record = JSON.parse(
      readFileSync(join(state, "hooks", `${stop.session_id}.stop.json`), "utf8"),
    );
    expect(record).toMatchObject({
      session_id: stop.session_id,
      transcript_path: stop.transcript_path,
    });
  });
  it("Claude Code's Stop is recorded as before, with no session map entry (its statusline makes that)", () => {
    const home = tempDir("sd-claude-hook-");
    const state = join(home, ".state");
    const payload = readFileSync(join(FIXTURES, "claude-2.1.328", "hook-stop.json"), "utf8");
    const ran = runHook(payload, state);
    expect(ran).toMatchObject({ code: 0, out: "" });
    expect(() => readFileSync(sessionFile(state, ran.pid))).toThrow();
  });
});
