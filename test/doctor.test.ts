// `sheepdog doctor`: right statuses and exit codes, and not one byte or mode changed anywhere.
import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { sheepdog, tempDir, tempProgram } from "./helpers/cli.js";
import { treeSnapshot } from "./helpers/install.js";
import { type StandIns, standIns } from "./helpers/standins.js";

interface Report {
  checks: {
    program: string | null;
    check: string;
    status: string;
    detail: string;
    fix: string | null;
  }[];
  ok: boolean;
}

let s: StandIns;
let p: ReturnType<typeof tempProgram>;
let home: string;
let seat: string;
let tokenFile: string;
let env: NodeJS.ProcessEnv;

/** A program with everything in place: valid config, safe state, a recent tick, a timer. */
type Settings = Record<string, unknown>;
/** Rewrites the healthy seat's settings.json. */
function withSettings(change: (s: Settings) => Settings): void {
  const file = join(seat, "settings.json");
  writeFileSync(file, JSON.stringify(change(JSON.parse(readFileSync(file, "utf8")))));
}
/** Rewrites the healthy seat's hooks. */
function withHooks(change: (h: Settings) => Settings): void {
  withSettings((s) => ({ ...s, hooks: change(s.hooks as Settings) }));
}

function healthy(config: Record<string, unknown> = {}) {
  home = tempDir("sheepdog-home-");
  seat = join(home, ".claude-loop");
  tokenFile = join(home, "ntfy-token");
  p = tempProgram("demo", {
    manager: { launcher: "command", command: [process.execPath, "toy-manager.mjs", "{prompt}"] },
    usage: { seat },
    page: { ntfy: { server: "http://127.0.0.1:9", topic: "demo-pages", token_file: tokenFile } },
    ...config,
  });
  mkdirSync(seat);
  writeFileSync(
    join(seat, "settings.json"),
    JSON.stringify({
      statusLine: { type: "command", command: "sheepdog statusline" },
      hooks: {
        StopFailure: [
          {
            matcher: "rate_limit",
            hooks: [{ type: "command", command: "/opt/bin/sheepdog hook stop-failure" }],
          },
        ],
        Stop: [{ hooks: [{ type: "command", command: "/opt/bin/sheepdog hook stop" }] }],
        Notification: [{ hooks: [{ type: "command", command: "sheepdog hook notification" }] }],
      },
    }),
  );
  writeFileSync(tokenFile, "tk_secret_never_printed\n", { mode: 0o600 });
  mkdirSync(p.stateDir, { mode: 0o700 });
  chmodSync(p.stateDir, 0o700);
  writeFileSync(
    join(p.stateDir, "last-tick.json"),
    JSON.stringify({
      at: new Date(Date.now() - 60_000).toISOString(),
      decision: "ok",
      reason: "",
      facts: {},
    }),
    { mode: 0o600 },
  );
  env = { ...p.env, HOME: home, XDG_CONFIG_HOME: "", PATH: `${s.bin}:${process.env.PATH}` };
  expect(sheepdog(["install", "systemd", "--program", p.root], { env }).code).toBe(0);
}

/** Runs doctor and asserts it left HOME and the program tree exactly as they were. */
function doctor(...args: string[]) {
  const before = treeSnapshot(home, p.home);
  const human = sheepdog(["doctor", ...args], { env });
  const json = sheepdog(["doctor", "--json", ...args], { env });
  expect(treeSnapshot(home, p.home)).toEqual(before);
  expect(human.stdout + human.stderr + json.stdout).not.toContain("tk_secret");
  expect(json.code).toBe(human.code);
  return { human, code: json.code, report: JSON.parse(json.stdout) as Report };
}

const statusOf = (r: Report, check: string) => r.checks.find((c) => c.check === check)?.status;

beforeEach(() => {
  s = standIns();
  s.answer("loginctl", { when: ["show-user"], stdout: "Linger=yes\n" });
});

describe("doctor", () => {
  it("a healthy program: every check ok, exit 0", () => {
    healthy();
    const { human, code, report } = doctor();
    expect(report.checks.filter((c) => c.status !== "ok")).toEqual([]);
    expect(report.ok).toBe(true);
    expect(code).toBe(0);
    expect(report.checks.map((c) => c.check)).toEqual([
      "node",
      "host_folders",
      "config",
      "folder",
      "state",
      "timer",
      "cadence",
      "activity",
      "last_tick",
      "watcher",
      "tool:sheepdog",
      `tool:${process.execPath}`,
      "statusline",
      "stop_failure_hook",
      "stop_hook",
      "notification_hook",
      "hook_events",
      "pages",
    ]);
    expect(report.checks[0]?.program).toBeNull();
    expect(report.checks[1]?.program).toBeNull();
    for (const c of report.checks.slice(2)) expect(c.program).toBe("demo");
    for (const c of report.checks)
      expect(Object.keys(c)).toEqual(["program", "check", "status", "detail", "fix"]);
    // aligned: the detail column starts at the same place on every check line
    const lines = human.stdout.split("\n").filter((l) => /^(ok|warn|fail) /.test(l));
    expect(new Set(lines.map((l) => l.indexOf(l.split(/\s{2,}/)[3] ?? ""))).size).toBe(1);
    expect(human.stdout).toContain("all 18 checks ok");
  });

  it("a broken config: config fails, exit 1, and the state is still checked", () => {
    healthy();
    writeFileSync(
      join(p.root, "program.json"),
      '{"name": "demo", "watchdog": {"intervl": "5m"}}\n',
    );
    const { code, report } = doctor();
    expect(code).toBe(1);
    expect(report.ok).toBe(false);
    const config = report.checks.find((c) => c.check === "config");
    expect(config?.status).toBe("fail");
    expect(config?.detail).toContain("intervl");
    expect(config?.fix).toContain("sheepdog check");
    expect(statusOf(report, "state")).toBe("ok");
  });

  it("a world-writable state dir: state fails with the chmod that fixes it, exit 1", () => {
    healthy();
    chmodSync(p.stateDir, 0o777);
    const { code, report, human } = doctor();
    expect(code).toBe(1);
    const state = report.checks.find((c) => c.check === "state");
    expect(state?.status).toBe("fail");
    expect(state?.detail).toContain("world-writable");
    expect(state?.fix).toBe(`chmod 700 ${p.stateDir}`);
    expect(human.stdout).toMatch(/^fail\s+demo\s+state\s+/m);
    expect(human.stdout).toContain(`fix: chmod 700 ${p.stateDir}`);
  });

  it.each([
    {
      name: "no timer installed",
      breakIt: () => {
        expect(sheepdog(["uninstall", "systemd", "--program", p.root], { env }).code).toBe(0);
      },
      check: "timer",
      status: "warn",
    },
    {
      name: "a tick older than two intervals",
      breakIt: () =>
        writeFileSync(
          join(p.stateDir, "last-tick.json"),
          JSON.stringify({ at: new Date(Date.now() - 11 * 60_000).toISOString(), decision: "ok" }),
        ),
      check: "last_tick",
      status: "warn",
    },
    {
      name: "no tick ever",
      breakIt: () => rmSync(join(p.stateDir, "last-tick.json")),
      check: "last_tick",
      status: "warn",
    },
    // doctor must not create the state dir it finds missing (the tree snapshot would show it)
    {
      name: "no state dir yet",
      breakIt: () => rmSync(p.stateDir, { recursive: true }),
      check: "last_tick",
      status: "warn",
    },
    {
      name: "no statusLine in the seat's settings",
      breakIt: () => withSettings(({ statusLine: _, ...rest }) => rest),
      check: "statusline",
      status: "warn",
    },
    {
      name: "no StopFailure hook in the seat's settings",
      breakIt: () => withHooks(({ StopFailure: _, ...rest }) => rest),
      check: "stop_failure_hook",
      status: "warn",
    },
    {
      name: "no Stop hook in the seat's settings",
      breakIt: () => withHooks(({ Stop: _, ...rest }) => rest),
      check: "stop_hook",
      status: "warn",
    },
    {
      name: "a Stop hook that runs the StopFailure command is not sheepdog's Stop hook",
      breakIt: () =>
        withHooks((h) => ({
          ...h,
          Stop: [{ hooks: [{ type: "command", command: "sheepdog hook stop-failure" }] }],
        })),
      check: "stop_hook",
      status: "warn",
    },
    {
      name: "no Notification hook in the seat's settings",
      breakIt: () => withHooks(({ Notification: _, ...rest }) => rest),
      check: "notification_hook",
      status: "warn",
    },
    {
      name: "a token file readable by others",
      breakIt: () => chmodSync(tokenFile, 0o644),
      check: "pages",
      status: "fail",
    },
    {
      name: "a missing token file",
      breakIt: () => rmSync(tokenFile),
      check: "pages",
      status: "fail",
    },
  ])("$name → $check is $status", ({ breakIt, check, status }) => {
    healthy();
    breakIt();
    const { code, report } = doctor();
    expect(statusOf(report, check)).toBe(status);
    expect(report.checks.filter((c) => c.check !== check).every((c) => c.status === "ok")).toBe(
      true,
    );
    expect(code).toBe(status === "fail" ? 1 : 0);
  });

  it("with none in settings.json, every check shows the one snippet to merge in", () => {
    healthy();
    writeFileSync(join(seat, "settings.json"), "{}");
    const { report } = doctor();
    for (const name of ["statusline", "stop_failure_hook", "stop_hook", "notification_hook"]) {
      const c = report.checks.find((x) => x.check === name);
      expect(c?.status).toBe("warn");
      const snippet = JSON.parse(String(c?.fix).replace(/^merge into [^:]+: /, ""));
      // each with "timeout": 10 (DESIGN §18: hot commands never hang)
      const run = (command: string) => ({ type: "command", command, timeout: 10 });
      expect(snippet).toEqual({
        statusLine: run("sheepdog statusline"),
        hooks: {
          StopFailure: [{ matcher: "rate_limit", hooks: [run("sheepdog hook stop-failure")] }],
          Stop: [{ hooks: [run("sheepdog hook stop")] }],
          Notification: [{ hooks: [run("sheepdog hook notification")] }],
        },
      });
    }
  });

  it("the human report shows that snippet once, and names the check it is under", () => {
    healthy();
    writeFileSync(join(seat, "settings.json"), "{}");
    const { human } = doctor();
    expect(human.stdout.split('"statusLine"').length - 1).toBe(1);
    expect(human.stdout.match(/fix: the same as for statusline above/g)).toHaveLength(3);
  });

  it("a tmux manager running claude: fails when its settings leave sheepdog to a person, with the fix (issue 33)", () => {
    healthy({
      manager: { launcher: "tmux", tmux: { session: "demo", command: ["claude", "{prompt}"] } },
    });
    const check = () => doctor().report.checks.find((c) => c.check === "claude-permissions");
    const fix = `add "Bash(sheepdog:*)" to permissions.allow in ${join(p.root, ".claude", "settings.json")}`;
    // No rule anywhere: auto mode asks a person.
    expect(check()).toMatchObject({ status: "fail", fix: expect.stringContaining(fix) });
    expect(check()?.detail).toMatch(
      /sheepdog claim acquire` would not run without a person: auto mode asks/,
    );
    expect(doctor().code).toBe(1);
    // A rule for the whole tool in the seat: auto mode sets it aside.
    withSettings((x) => ({ ...x, permissions: { allow: ["Bash"] } }));
    expect(check()?.detail).toMatch(/auto mode sets aside Bash/);
    // What init writes: ok, and it says which file allows it.
    mkdirSync(join(p.root, ".claude"));
    writeFileSync(
      join(p.root, ".claude", "settings.json"),
      JSON.stringify({ permissions: { allow: ["Bash(sheepdog:*)"] } }),
    );
    expect(check()).toMatchObject({ status: "ok", fix: null });
    expect(check()?.detail).toContain(join(p.root, ".claude", "settings.json"));
    // A command launcher running something else: no check.
    healthy();
    expect(doctor().report.checks.some((c) => c.check === "claude-permissions")).toBe(false);
  });

  it("a token only in an env var fails: the timer's environment does not carry it", () => {
    healthy({ page: { ntfy: { topic: "demo-pages", token_env: "SHEEPDOG_TEST_TOKEN" } } });
    const { code, report } = doctor();
    expect(statusOf(report, "pages")).toBe("fail");
    expect(code).toBe(1);
  });

  it("herdr matters only for a herdr program; a missing one fails on the timer's PATH", () => {
    healthy({ manager: { launcher: "herdr", herdr: { workspace: "demo" } } });
    const { report } = doctor();
    const herdr = report.checks.find((c) => c.check === "tool:herdr");
    expect(herdr?.status).toBe("fail");
    expect(herdr?.detail).toContain("sheepdog-demo");
  });

  it("warns when the seat's Claude config does not trust the program root, and never edits it", () => {
    healthy({
      manager: {
        launcher: "herdr",
        env: { CLAUDE_CONFIG_DIR: join(tempDir(), "claude-dir") },
        herdr: { workspace: "demo" },
      },
    });
    const cfg = readFileSync(join(p.root, "program.json"), "utf8");
    const dir = JSON.parse(cfg).manager.env.CLAUDE_CONFIG_DIR as string;
    const file = join(dir, ".claude.json");
    const trust = () => doctor().report.checks.find((c) => c.check === "claude-trust");
    // No .claude.json at all: Claude will ask.
    expect(trust()).toMatchObject({ status: "warn" });
    expect(trust()?.detail).toContain(`${file} does not record ${p.root} as trusted`);
    expect(trust()?.fix).toContain(`claude\` once in ${p.root}`);
    expect(trust()?.fix).toContain("accept_trust_dialog: true");
    // Another folder trusted only.
    mkdirSync(dir, { recursive: true });
    const other = JSON.stringify({ projects: { "/elsewhere": { hasTrustDialogAccepted: true } } });
    writeFileSync(file, other);
    expect(trust()?.status).toBe("warn");
    expect(readFileSync(file, "utf8")).toBe(other);
    // An ancestor of the root trusted: Claude's trust covers the folders under it.
    writeFileSync(
      file,
      JSON.stringify({ projects: { [dirname(p.root)]: { hasTrustDialogAccepted: true } } }),
    );
    expect(trust()).toMatchObject({ status: "ok", fix: null });
    // A command launcher runs no Claude of ours: no check.
    healthy();
    expect(doctor().report.checks.some((c) => c.check === "claude-trust")).toBe(false);
  });

  it("a unit installed with another SHEEPDOG_STATE_DIR than this shell's warns (the tick would miss the readings)", () => {
    healthy();
    // installed from this shell: same folder, no warning
    expect(doctor().report.checks.find((c) => c.check === "timer")?.status).toBe("ok");
    const installedWith = env.SHEEPDOG_STATE_DIR as string;
    env = { ...env, SHEEPDOG_STATE_DIR: join(home, "other-state") };
    const { code, report } = doctor();
    const timer = report.checks.find((c) => c.check === "timer");
    expect(timer?.status).toBe("warn");
    expect(timer?.detail).toContain(`SHEEPDOG_STATE_DIR=${installedWith}`);
    expect(timer?.detail).toContain(join(home, "other-state"));
    expect(timer?.fix).toBe(
      `reinstall it from this shell: sheepdog install systemd --program ${p.root}`,
    );
    expect(code).toBe(0);
    // unset in this shell: the default differs from the installed folder too
    env = { ...env, SHEEPDOG_STATE_DIR: "" };
    const unset = doctor().report.checks.find((c) => c.check === "timer");
    expect(unset?.status).toBe("warn");
    expect(unset?.detail).toContain(`${join(home, ".local", "state", "sheepdog")} (the default)`);
    // a unit without the variable (installed when it was unset) matches an unset shell
    expect(sheepdog(["install", "systemd", "--program", p.root], { env }).code).toBe(0);
    expect(doctor().report.checks.find((c) => c.check === "timer")?.status).toBe("ok");
  });

  it("a tmux program: the unit carries this shell's SHEEPDOG_TMUX_SOCKET, and doctor warns when the shell's differs (issue 33)", () => {
    healthy({ manager: { launcher: "tmux", tmux: { session: "demo", command: ["true"] } } });
    const unit = join(home, ".config", "systemd", "user", "sheepdog-demo.service");
    const tmux = () => doctor().report.checks.find((c) => c.check === "tmux");
    // Installed with none, none here: the same (tmux's default) server.
    expect(readFileSync(unit, "utf8")).not.toContain("SHEEPDOG_TMUX_SOCKET");
    expect(tmux()).toMatchObject({ status: "ok" });
    // This shell talks to a server of its own now: the timer's managers are elsewhere.
    env = { ...env, SHEEPDOG_TMUX_SOCKET: "loops" };
    expect(tmux()).toMatchObject({ status: "warn" });
    expect(tmux()?.detail).toMatch(
      /runs with SHEEPDOG_TMUX_SOCKET=unset, but this shell has loops/,
    );
    expect(tmux()?.fix).toContain(`sheepdog install systemd --program ${p.root}`);
    // Reinstalled from here: the unit carries it, and they agree.
    expect(sheepdog(["install", "systemd", "--program", p.root], { env }).code).toBe(0);
    expect(readFileSync(unit, "utf8")).toMatch(/SHEEPDOG_TMUX_SOCKET=loops/);
    expect(tmux()).toMatchObject({
      status: "ok",
      detail: expect.stringContaining("tmux -L loops"),
    });
    // A command program has no such check.
    healthy();
    expect(doctor().report.checks.some((c) => c.check === "tmux")).toBe(false);
  });

  it("the cadence check (DESIGN §6): a timer slower than the interval warns, and so does a stale_after under two cadences", () => {
    healthy();
    const cadence = () => doctor().report.checks.find((c) => c.check === "cadence");
    expect(cadence()?.detail).toBe("ticked every 5m; watchdog.interval 5m");
    expect(
      sheepdog(["install", "systemd", "--program", p.root, "--interval", "15m"], { env }).code,
    ).toBe(0);
    const slow = cadence();
    expect(slow?.status).toBe("warn");
    expect(slow?.detail).toMatch(
      /sheepdog-demo\.timer ticks every 15m, but watchdog\.interval is 5m/,
    );
    expect(slow?.fix).toContain(`sheepdog install systemd --program ${p.root} --interval 5m`);
    // the tick reads that cadence from its unit: the last tick 14m ago is on time, not late
    expect(sheepdog(["install", "systemd", "--program", p.root], { env }).code).toBe(0);
    const config = JSON.parse(readFileSync(join(p.root, "program.json"), "utf8"));
    config.watchdog = { ...config.watchdog, stale_after: "8m" };
    writeFileSync(join(p.root, "program.json"), JSON.stringify(config));
    const short = cadence();
    expect(short?.status).toBe("warn");
    expect(short?.detail).toMatch(/stale_after \(8m\) is under twice the cadence .*\(5m\)/);
    // check says the same, on stderr, and still exits 0 (tests tick by hand with short settings)
    const check = sheepdog(["check", "--program", p.root], { env });
    expect(check.code).toBe(0);
    expect(check.stderr).toMatch(
      /^warning: .*program\.json: watchdog\.stale_after \(8m\) is under twice/,
    );
    const json = JSON.parse(sheepdog(["check", "--program", p.root, "--json"], { env }).stdout);
    // and the activity rules get no window under an 8m stale_after (quiet_after is 10m)
    expect(json.warnings).toEqual([
      expect.stringMatching(/stale_after \(8m\) is under twice/),
      expect.stringMatching(/quiet_after \(10m\) is not under watchdog\.stale_after \(8m\)/),
    ]);
  });

  it("the cadence check with a lease: a timer too slow for lease.ttl fails (another host could take over before a renewal)", () => {
    healthy();
    const cadence = () => doctor().report.checks.find((c) => c.check === "cadence");
    const config = JSON.parse(readFileSync(join(p.root, "program.json"), "utf8"));
    writeFileSync(
      join(p.root, "program.json"),
      JSON.stringify({ ...config, lease: { repo: ".", ttl: "15m", margin: "2m" } }),
    );
    expect(cadence()?.status).toBe("ok");
    expect(
      sheepdog(["install", "systemd", "--program", p.root, "--interval", "15m"], { env }).code,
    ).toBe(0);
    const slow = cadence();
    expect(slow?.status).toBe("fail");
    expect(slow?.detail).toMatch(
      /ticks every 15m, too seldom for lease\.ttl 15m: another host may take the lease over before this one renews it \(it needs ttl ≥ 2 × margin \+ the cadence, 19m\)/,
    );
    expect(slow?.fix).toContain("raise lease.ttl to 19m on every host");
  });

  it("the activity check: quiet_after (+ nudge_wait) at or past stale_after warns, in doctor and check", () => {
    healthy();
    const activity = () => doctor().report.checks.find((c) => c.check === "activity");
    expect(activity()).toMatchObject({ status: "ok" });
    expect(activity()?.detail).toMatch(
      /judged after 10m, .* restarted 3m after its nudge, .* stale_after 45m/,
    );
    const config = JSON.parse(readFileSync(join(p.root, "program.json"), "utf8"));
    const write = (w: Record<string, string>) =>
      writeFileSync(
        join(p.root, "program.json"),
        JSON.stringify({ ...config, watchdog: { ...config.watchdog, ...w } }),
      );
    write({ quiet_after: "45m" });
    expect(activity()).toMatchObject({ status: "warn" });
    expect(activity()?.detail).toMatch(
      /quiet_after \(45m\) is not under watchdog\.stale_after \(45m\): the activity rules never run/,
    );
    write({ quiet_after: "40m", nudge_wait: "5m" });
    expect(activity()?.detail).toMatch(/quiet_after \+ nudge_wait \(45m\) is not under .*\(45m\)/);
    const check = sheepdog(["check", "--program", p.root], { env });
    expect(check.code).toBe(0);
    expect(check.stderr).toMatch(/^warning: .*program\.json: watchdog\.quiet_after \+ nudge_wait/m);
  });

  it("a unit whose PATH has no sheepdog fails: its managers could not run sheepdog claim or save (issue 18)", () => {
    healthy();
    expect(doctor().report.checks.find((c) => c.check === "tool:sheepdog")?.status).toBe("ok");
    const unit = join(home, ".config", "systemd", "user", "sheepdog-demo.service");
    const text = readFileSync(unit, "utf8");
    writeFileSync(unit, text.replace(/^Environment=PATH=.*$/m, "Environment=PATH=/usr/bin:/bin"));
    const { code, report } = doctor();
    const check = report.checks.find((c) => c.check === "tool:sheepdog");
    expect(check?.status).toBe("fail");
    expect(check?.detail).toBe("sheepdog is not on the PATH of sheepdog-demo: /usr/bin:/bin");
    expect(check?.fix).toContain(`sheepdog install systemd --program ${p.root}`);
    expect(code).toBe(1);
  });

  it("a unit whose node or CLI no longer exists fails with the reinstall command", () => {
    healthy();
    const unit = join(home, ".config", "systemd", "user", "sheepdog-demo.service");
    const text = readFileSync(unit, "utf8");
    writeFileSync(unit, text.replace(/^ExecStart=\S+/m, "ExecStart=/nonexistent/node"));
    const { code, report } = doctor();
    const timer = report.checks.find((c) => c.check === "timer");
    expect(timer?.status).toBe("fail");
    expect(timer?.fix).toContain(`sheepdog install systemd --program ${p.root}`);
    expect(code).toBe(1);
  });

  it.skipIf(process.platform !== "linux")(
    "the timer check: an --all timer covers the program; two units warn; a launchd agent is inert on Linux",
    () => {
      healthy();
      const timer = () => doctor().report.checks.find((c) => c.check === "timer");
      expect(sheepdog(["install", "systemd", "--all"], { env }).code).toBe(0);
      expect(timer()?.status).toBe("warn");
      expect(timer()?.detail).toContain("ticked by 2 units");
      expect(sheepdog(["uninstall", "systemd", "--program", p.root], { env }).code).toBe(0);
      expect(timer()?.status).toBe("ok");
      expect(timer()?.detail).toContain("sheepdog.timer");
      expect(sheepdog(["uninstall", "systemd", "--all"], { env }).code).toBe(0);
      expect(sheepdog(["install", "launchd", "--program", p.root], { env }).code).toBe(0);
      expect(timer()?.status).toBe("warn");
      expect(timer()?.detail).toContain("which linux does not run");
    },
  );

  it("no --program and no resolvable program: every program under $SHEEPDOG_HOME", () => {
    healthy();
    const other = join(p.home, "other");
    mkdirSync(other);
    writeFileSync(join(other, "program.json"), '{"name": "other"}\n');
    const cwd = tempDir();
    const r = sheepdog(["doctor", "--json"], { env: { ...env, SHEEPDOG_PROGRAM: "" }, cwd });
    const report = JSON.parse(r.stdout) as Report;
    expect([...new Set(report.checks.map((c) => c.program))]).toEqual([null, "demo", "other"]);
  });
});
