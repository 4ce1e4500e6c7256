// The herdr launcher through real `sheepdog tick` processes, against the Herdr stand-in
// (test/bin/herdr) in each of the ways real Herdr (0.8.2, and 0.9.3 where it differs or matters)
// makes a start hard: a new pane's shell still busy, Claude's folder-trust dialog, a busy agent
// on the alternate screen, a prompt left in the composer, a start that times out and clears the
// agent's name, a server that is down or speaks another protocol (either side the older), prose
// Herdr takes for a dialog, a manager that claims though its prompt was never seen.
import { spawnSync } from "node:child_process";
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { CLI, sheepdog, sheepdogAsync, sleeper, tempDir, tempProgram } from "./helpers/cli.js";
import { STANDIN_VERSIONS } from "./helpers/herdr-testbed.js";
import { killGroup, standinLog, TEST_BIN } from "./helpers/launch.js";
import { type NtfyServer, ntfyServer } from "./helpers/ntfy-server.js";
import {
  type Event,
  FAKE_MANAGER,
  isAlive,
  killStarted,
  ofType,
  waitFor,
} from "./helpers/watchdog.js";

const cleanups: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

interface Setup {
  root: string;
  stateDir: string;
  seat: string;
  env: NodeJS.ProcessEnv;
  standinState: string;
  standinLog: string;
}

/**
 * A herdr program whose agent (`claude` on PATH) is the fake manager with `flags`; the stand-in's
 * state and log are the test's own. `modes` are the stand-in's HERDR_STANDIN_* variables. The
 * manager claims once its prompt is in its transcript, as a manager claims because its prompt
 * says so; `claimAtOnce` makes it claim as soon as it runs.
 */
function herdrProgram(
  modes: Record<string, string> = {},
  herdr: Record<string, unknown> = {},
  extra: Record<string, unknown> = {},
  flags: string[] = ["--hang-after", "1000"],
  claimAtOnce = false,
): Setup {
  const dir = tempDir();
  const seat = join(dir, "seat");
  const bin = join(dir, "bin");
  mkdirSync(bin, { recursive: true });
  // Claude stands in as the fake manager (exec'd: one pid): it claims with its own pid and saves.
  const untilPrompted = claimAtOnce
    ? ""
    : `until grep -rqs '"type":"user"' "$CLAUDE_CONFIG_DIR/projects"; do sleep 0.1; done\n`;
  writeFileSync(
    join(bin, "claude"),
    `#!/bin/sh\n${untilPrompted}exec ${JSON.stringify(process.execPath)} ${JSON.stringify(FAKE_MANAGER)} "$@"\n`,
    { mode: 0o755 },
  );
  const p = tempProgram("catalog", {
    manager: {
      launcher: "herdr",
      env: { CLAUDE_CONFIG_DIR: seat, SHEEPDOG_CLI: CLI },
      herdr: { args: flags, ...herdr },
    },
    watchdog: { interval: "1h", stale_after: "1h", claim_grace: "1h" },
    ...extra,
  });
  const standinState = join(dir, "herdr-state.json");
  const log = join(dir, "herdr-log.jsonl");
  const env = {
    ...p.env,
    PATH: `${TEST_BIN}:${bin}:${process.env.PATH}`,
    HERDR_STANDIN_STATE: standinState,
    HERDR_STANDIN_LOG: log,
    SHEEPDOG_HERDR_ARRIVAL_MS: "1500",
    SHEEPDOG_HERDR_START_MS: "5000",
    // Herdr's 5 s prompt effect gate, shortened (its answers still say 5000 ms).
    HERDR_STANDIN_EFFECT_MS: "300",
    ...modes,
  };
  cleanups.push(() => {
    killStarted(p.stateDir);
    if (!existsSync(standinState)) return;
    const s = JSON.parse(readFileSync(standinState, "utf8")) as { agents: { pid: number }[] };
    for (const a of s.agents) killGroup(a.pid);
  });
  return { root: p.root, stateDir: p.stateDir, seat, env, standinState, standinLog: log };
}

interface Report {
  decision: string;
  reason: string;
  actions: string[];
}

async function tick(env: NodeJS.ProcessEnv): Promise<Report> {
  const r = await sheepdogAsync(["tick", "--json"], { env });
  expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(0);
  return (JSON.parse(r.stdout) as { programs: Report[] }).programs[0] as Report;
}

/** Ticks every 300 ms until one decides `decision`; every earlier one must be `ok`. */
async function tickUntil(env: NodeJS.ProcessEnv, decision: string): Promise<Report> {
  const seen: string[] = [];
  for (let i = 0; i < 60; i++) {
    const r = await tick(env);
    if (r.decision === decision) return r;
    seen.push(`${r.decision}: ${r.reason}`);
    if (r.decision !== "ok") break;
    await new Promise((res) => setTimeout(res, 300));
  }
  throw new Error(`expected ${decision}; the ticks said:\n${seen.join("\n")}`);
}

const calls = (s: Setup, sub: string) =>
  standinLog(s.standinLog).filter((c) => c.argv.slice(0, 2).join(" ") === sub);

/** Every user entry of the program's transcripts (the stand-in writes them as Claude would). */
function userEntries(s: Setup): string[] {
  const dir = join(s.seat, "projects", s.root.replace(/[^A-Za-z0-9]/g, "-"));
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((f) =>
    readFileSync(join(dir, f), "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { type: string; message: { content: string } })
      .filter((e) => e.type === "user")
      .map((e) => e.message.content),
  );
}

const started = (s: Setup) =>
  ofType(s.stateDir, "manager_started") as (Event & { pid?: number; start_time?: string })[];

async function ntfy(): Promise<NtfyServer> {
  const server = await ntfyServer();
  cleanups.push(() => server.stop());
  return server;
}

for (const version of STANDIN_VERSIONS) {
  describe(`herdr through real ticks (the stand-in as Herdr ${version})`, () => {
    const release = { HERDR_STANDIN_VERSION: version };

    it("Claude's folder-trust dialog, not opted in: the start fails with the screen and the fix, and pages", async () => {
      const server = await ntfy();
      const s = herdrProgram(
        { HERDR_STANDIN_TRUST_DIALOG: "1", ...release },
        {},
        {
          page: { ntfy: { server: server.url, topic: "catalog" } },
        },
      );
      const r = await tick(s.env);
      expect(r.actions.join("\n")).toMatch(/^start failed: .*held at a dialog/m);
      const [failed] = ofType(s.stateDir, "manager_start_failed");
      expect(failed?.launcher).toBe("herdr");
      expect(String(failed?.reason)).toContain(`run \`claude\` once in ${s.root}`);
      expect(String(failed?.reason)).toContain("manager.herdr.accept_trust_dialog: true");
      expect(String(failed?.screen)).toContain("Is this a project you created or one you trust?");
      expect(String(failed?.screen)).toContain("Enter to confirm · Esc to cancel");
      expect(started(s)).toEqual([]);
      // The dialog was read (visible screen), never answered; the pane it made is closed.
      expect(calls(s, "agent send-keys")).toEqual([]);
      expect(calls(s, "agent read").at(-1)?.argv).toContain("visible");
      expect(calls(s, "pane close")).toHaveLength(1);
      expect(existsSync(join(s.seat, ".claude.json"))).toBe(false);
      expect(server.received.map((m) => m.title)).toEqual(["catalog: the manager did not start"]);
      expect(server.received[0]?.message).toContain(
        "Is this a project you created or one you trust?",
      );
      expect(server.received[0]?.message).toContain(`run \`claude\` once in ${s.root}`);
    });

    it("Claude's folder-trust dialog with accept_trust_dialog: answered once, and the manager starts", async () => {
      const s = herdrProgram(
        { HERDR_STANDIN_TRUST_DIALOG: "1", ...release },
        { accept_trust_dialog: true },
      );
      const r = await tick(s.env);
      expect(r.decision).toBe("start");
      expect(ofType(s.stateDir, "manager_start_failed")).toEqual([]);
      expect(started(s)).toHaveLength(1);
      // 2.1.328 selects "No, exit" first (a lone Enter would end Claude): Down to Yes, then Enter.
      expect(calls(s, "agent send-keys").map((c) => c.argv)).toEqual([
        ["agent", "send-keys", "manager", "down"],
        ["agent", "send-keys", "manager", "enter"],
      ]);
      // Claude recorded the folder as trusted; the prompt arrived once.
      const trust = JSON.parse(readFileSync(join(s.seat, ".claude.json"), "utf8"));
      expect(trust.projects[s.root].hasTrustDialogAccepted).toBe(true);
      expect(userEntries(s)).toHaveLength(1);
    });

    it("the ≤ 2.0 trust dialog (Yes selected first) with accept_trust_dialog: Enter alone", async () => {
      const s = herdrProgram(
        { HERDR_STANDIN_TRUST_DIALOG: "1", HERDR_STANDIN_TRUST_DIALOG_STYLE: "2.0", ...release },
        { accept_trust_dialog: true },
      );
      expect((await tick(s.env)).decision).toBe("start");
      expect(calls(s, "agent send-keys").map((c) => c.argv.slice(3))).toEqual([["enter"]]);
      const trust = JSON.parse(readFileSync(join(s.seat, ".claude.json"), "utf8"));
      expect(trust.projects[s.root].hasTrustDialogAccepted).toBe(true);
    });

    it("a prompt left in the composer arrives once (Enter, never a second copy)", async () => {
      const s = herdrProgram({ HERDR_STANDIN_COMPOSER: "1", ...release });
      expect((await tick(s.env)).decision).toBe("start");
      expect(started(s)).toHaveLength(1);
      expect(calls(s, "agent prompt")).toHaveLength(1);
      expect(calls(s, "agent send-keys").map((c) => c.argv.slice(3))).toEqual([["enter"]]);
      const entries = userEntries(s);
      expect(entries).toHaveLength(1);
      expect(entries[0]).toBe(calls(s, "agent prompt")[0]?.argv[3]);
    });
  });
}

describe("herdr through real ticks (the stand-in as Herdr v0.8.2)", () => {
  it("a new pane's busy shell: agent start is retried until the shell is free, then succeeds", async () => {
    const s = herdrProgram({ HERDR_STANDIN_SHELL_BUSY_MS: "3000" });
    const r = await tick(s.env);
    expect(r.decision).toBe("start");
    const starts = calls(s, "agent start");
    expect(starts.length).toBeGreaterThan(1);
    expect(starts.slice(0, -1).every((c) => c.exit === 1)).toBe(true);
    expect(starts.at(-1)?.exit).toBe(0);
    const [m] = started(s);
    expect(m).toMatchObject({ launcher: "herdr", agent: "manager", pid: expect.any(Number) });
    // The pid is the agent's, from `pane process-info`, and it claims with it.
    expect(isAlive(m?.pid as number, m?.start_time as string)).toBe(true);
    await waitFor("the agent to claim", () => ofType(s.stateDir, "claimed").length === 1);
    expect(ofType(s.stateDir, "claimed")[0]?.pid).toBe(m?.pid);
  });

  it("Herdr 0.8.0 (the start returns with the agent blocked): the dialog is still caught", async () => {
    const s = herdrProgram({ HERDR_STANDIN_TRUST_DIALOG: "1", HERDR_STANDIN_VERSION: "0.8.0" });
    await tick(s.env);
    expect(calls(s, "agent start").at(-1)?.exit).toBe(0);
    const [failed] = ofType(s.stateDir, "manager_start_failed");
    expect(String(failed?.screen)).toContain("Is this a project you created or one you trust?");
    expect(calls(s, "agent prompt")).toEqual([]);
  });

  it("three failed starts, then one stand-down with one urgent page", async () => {
    const server = await ntfy();
    const s = herdrProgram(
      { HERDR_STANDIN_TRUST_DIALOG: "1" },
      {},
      {
        page: { ntfy: { server: server.url, topic: "catalog" } },
      },
    );
    for (let n = 0; n < 3; n++) expect((await tick(s.env)).decision).toBe("start");
    const fourth = await tick(s.env);
    expect(fourth.decision).toBe("stand_down");
    expect(fourth.reason).toMatch(/held at a dialog.*crash loop: 3 unplanned starts/);
    expect((await tick(s.env)).decision).toBe("hold");
    expect(ofType(s.stateDir, "manager_start_failed")).toHaveLength(3);
    expect(calls(s, "agent start")).toHaveLength(3);
    expect(server.received.map((m) => [m.title, m.priority])).toEqual([
      ["catalog: the manager did not start", 4],
      ["catalog stood down", 5],
    ]);
  });

  it("a stuck manager busy on the alternate screen: its evidence holds its visible screen", async () => {
    const s = herdrProgram(
      { HERDR_STANDIN_ALT_SCREEN: "1" },
      {},
      { watchdog: { interval: "1h", stale_after: "2s", claim_grace: "1h" } },
      ["--hang-after", "1"],
    );
    await tick(s.env);
    const [m] = started(s);
    await waitFor(
      "the agent to claim and save once",
      () => ofType(s.stateDir, "saved").length >= 1,
    );
    // Real Herdr refuses `recent` here: the agent is busy and the pane has 40 rows.
    const recent = spawnSync(
      join(TEST_BIN, "herdr"),
      ["agent", "read", "manager", "--source", "recent", "--lines", "60"],
      {
        env: { ...process.env, ...s.env },
        encoding: "utf8",
      },
    );
    expect(recent.status).toBe(1);
    expect(JSON.parse(recent.stderr).error.code).toBe("agent_not_idle");
    await waitFor("the heartbeat to go stale", () => {
      const r = sheepdog(["tick", "--dry-run", "--json"], { env: s.env });
      return JSON.parse(r.stdout).programs[0].decision === "restart_stuck";
    });
    const r = await tick(s.env);
    expect(r.decision).toBe("restart_stuck");
    const [stopped] = ofType(s.stateDir, "manager_stopped");
    expect(stopped?.pid).toBe(m?.pid);
    const screen = readFileSync(join(String(stopped?.evidence), "screen.txt"), "utf8");
    expect(screen).toContain("Read ");
    expect(screen).toContain("status: working");
    expect(isAlive(m?.pid as number, m?.start_time as string)).toBe(false);
  });

  it("an idle manager is nudged through `herdr agent prompt`, then restarted when the turn ends again with no save", async () => {
    const s = herdrProgram(
      {},
      {},
      {
        watchdog: {
          interval: "1h",
          stale_after: "1h",
          claim_grace: "1h",
          quiet_after: "2s",
          nudge_wait: "2s",
        },
      },
      ["--hang-after", "1"],
    );
    await tick(s.env);
    const [m] = started(s);
    await waitFor(
      "the agent to claim and save once",
      () => ofType(s.stateDir, "saved").length >= 1,
    );
    // The turn ends as Claude Code 2.1.328 ends one: a turn_duration entry after the answer.
    const dir = join(s.seat, "projects", s.root.replace(/[^A-Za-z0-9]/g, "-"));
    const [file] = readdirSync(dir).filter((f) => f.endsWith(".jsonl"));
    const transcript = join(dir, String(file));
    const endTurn = () =>
      appendFileSync(
        transcript,
        `${JSON.stringify({ type: "system", subtype: "turn_duration", durationMs: 900, timestamp: new Date().toISOString(), isSidechain: false })}\n`,
      );
    endTurn();
    const nudge = await tickUntil(s.env, "nudge");
    expect(nudge.reason).toMatch(/idle: the turn ended .* nothing will wake it/);
    const [nudged] = ofType(s.stateDir, "nudged");
    expect(nudged).toMatchObject({
      pid: m?.pid,
      via: expect.stringMatching(/^herdr agent prompt \S+ \(pane /),
    });
    // The line went to the start's agent, by its id, as one line, and arrived as a user turn.
    const prompts = calls(s, "agent prompt");
    expect(prompts.at(-1)?.argv).toContain(String(nudged?.text));
    expect(String(nudged?.text)).not.toContain("\n");
    expect(userEntries(s).some((u) => /this session has been idle for/.test(u))).toBe(true);
    // The model answers the nudge without saving: once nudge_wait has passed, it is replaced.
    endTurn();
    const restart = await tickUntil(s.env, "restart_idle");
    expect(restart.reason).toMatch(/nudged .* ago \(nudge_wait 2s\) with no save since/);
    expect(ofType(s.stateDir, "nudged")).toHaveLength(1);
    expect(ofType(s.stateDir, "manager_stopped")[0]).toMatchObject({
      pid: m?.pid,
      decision: "restart_idle",
    });
    expect(isAlive(m?.pid as number, m?.start_time as string)).toBe(false);
    expect(calls(s, "pane close").length).toBeGreaterThanOrEqual(1);
  });

  it("a reason with a newline reaches Herdr as one line", async () => {
    const s = herdrProgram();
    const holder = sleeper();
    cleanups.push(() => void holder.kill("SIGKILL"));
    const pid = String(holder.pid);
    expect(sheepdog(["claim", "acquire", "--pid", pid], { env: s.env }).code).toBe(0);
    const note = "context full\nnext: the\tparser";
    const h = sheepdog(["hand-over", "--pid", pid, "--note", note], { env: s.env });
    expect(h.code, h.stderr).toBe(0);
    const r = await tick(s.env);
    expect(r.decision).toBe("start_after_hand_over");
    const [prompt] = calls(s, "agent prompt");
    const text = String(prompt?.argv[3]);
    expect(text).toContain("context full next: the parser");
    expect([...text].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f)).toBe(false);
    expect(started(s)).toHaveLength(1);
    expect(userEntries(s)).toEqual([text]);
  });

  it("a start that times out clears the agent's name: its screen is read by pane", async () => {
    const s = herdrProgram({ HERDR_STANDIN_START_TIMEOUT: "1", SHEEPDOG_HERDR_START_MS: "3500" });
    await tick(s.env);
    const [failed] = ofType(s.stateDir, "manager_start_failed");
    expect(String(failed?.reason)).toMatch(/agent start manager: Herdr error timeout/);
    expect(String(failed?.screen)).toContain("agent (unnamed) in pane");
    const read = calls(s, "agent read").at(-1);
    expect(read?.argv[2]).toMatch(/^w\d+:p\d+$/);
    expect(read?.exit).toBe(0);
  });

  for (const [mode, env, fix] of [
    ["server_not_running", { HERDR_STANDIN_STATE: "" }, /server is not running: start it/],
    [
      "protocol_mismatch",
      { HERDR_STANDIN_PROTOCOL: "19" },
      /Herdr's running server \(protocol 19\) is older .*quit Herdr and start it again/,
    ],
  ] as const) {
    it(`${mode}: a failed start that says what to run`, async () => {
      const s = herdrProgram(env);
      await tick(s.env);
      const [failed] = ofType(s.stateDir, "manager_start_failed");
      expect(String(failed?.reason)).toContain(`Herdr error ${mode}`);
      expect(String(failed?.reason)).toMatch(fix);
    });
  }

  it("a stale herdr earlier on PATH than Herdr 0.9.3's server: the page says to replace it, not to restart Herdr", async () => {
    const server = await ntfy();
    const s = herdrProgram(
      { HERDR_STANDIN_PROTOCOL: "22" },
      {},
      { page: { ntfy: { server: server.url, topic: "catalog" } } },
    );
    await tick(s.env);
    const [failed] = ofType(s.stateDir, "manager_start_failed");
    const reason = String(failed?.reason);
    expect(reason).toContain("client protocol 20 is older than server protocol 22");
    expect(reason).toContain(`the herdr on PATH (${join(TEST_BIN, "herdr")}, protocol 20)`);
    expect(reason).toContain("upgrade or replace that herdr");
    expect(reason).not.toMatch(/quit Herdr|run `herdr` again/);
    expect(server.received[0]?.message).toContain("upgrade or replace that herdr");
    expect(server.received[0]?.message).not.toMatch(/quit Herdr/);
  });
});

describe("herdr through real ticks: what a start must not count as a failure", () => {
  for (const version of STANDIN_VERSIONS)
    it(`a manager that claimed though its prompt was never seen is started, not failed, and keeps running (Herdr ${version})`, async () => {
      // Before: the arrival check failed, the tick closed the pane of a manager that had claimed.
      const s = herdrProgram(
        { HERDR_STANDIN_DROP_PROMPTS: "3", HERDR_STANDIN_VERSION: version },
        {},
        {},
        ["--hang-after", "1000"],
        true,
      );
      const r = await tick(s.env);
      expect(r.decision).toBe("start");
      expect(ofType(s.stateDir, "manager_start_failed")).toEqual([]);
      const [m] = started(s);
      expect(m).toMatchObject({ launcher: "herdr", agent: "manager", pid: expect.any(Number) });
      expect(ofType(s.stateDir, "claimed")[0]?.pid).toBe(m?.pid);
      expect(calls(s, "pane close")).toEqual([]);
      expect(isAlive(m?.pid as number, m?.start_time as string)).toBe(true);
      // The next tick finds it holding the claim: nothing to do.
      expect((await tick(s.env)).decision).toBe("ok");
    });

  it("Herdr 0.9.3 calls the new manager blocked from prose alone: it starts, nobody is paged", async () => {
    const server = await ntfy();
    const s = herdrProgram(
      { HERDR_STANDIN_QUESTION_PROSE: "1", HERDR_STANDIN_VERSION: "0.9.3" },
      {},
      { page: { ntfy: { server: server.url, topic: "catalog" } } },
    );
    expect((await tick(s.env)).decision).toBe("start");
    expect(ofType(s.stateDir, "manager_start_failed")).toEqual([]);
    expect(started(s)).toHaveLength(1);
    expect(userEntries(s)).toEqual([calls(s, "agent prompt")[0]?.argv[3]]);
    await waitFor("the manager to claim", () => ofType(s.stateDir, "claimed").length === 1);
    expect(server.received).toEqual([]);
  });
});
