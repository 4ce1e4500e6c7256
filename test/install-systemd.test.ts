// `sheepdog install|uninstall systemd` with HOME in a temp dir and systemctl/loginctl stood in for.
import { spawnSync } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir, userInfo } from "node:os";
import { dirname, join, resolve } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { parseUnit, splitWords } from "../src/install/systemd.js";
import { CLI, sheepdog, sleeper, tempDir, tempProgram } from "./helpers/cli.js";
import { treeSnapshot } from "./helpers/install.js";
import { type StandIns, standIns } from "./helpers/standins.js";

const user = process.env.USER || userInfo().username;

let s: StandIns;
let p: ReturnType<typeof tempProgram>;
let home: string;
let env: NodeJS.ProcessEnv;
let unitDir: string;
let service: string;
let timer: string;

beforeEach(() => {
  s = standIns();
  s.answer("loginctl", { when: ["show-user"], stdout: "Linger=yes\n" });
  p = tempProgram("demo");
  home = tempDir("sheepdog-home-");
  env = {
    ...p.env,
    HOME: home,
    XDG_CONFIG_HOME: "",
    XDG_DATA_HOME: "",
    USER: user,
    PATH: `${s.bin}:${process.env.PATH}`,
  };
  unitDir = join(home, ".config", "systemd", "user");
  service = join(unitDir, "sheepdog-demo.service");
  timer = join(unitDir, "sheepdog-demo.timer");
});

const install = (...args: string[]) =>
  sheepdog(["install", "systemd", "--program", p.root, ...args], { env });

/** `systemd-analyze verify` as the brief asks (this machine's systemd 252 has --recursive-errors). */
function verify(files: string[]) {
  const runtime = mkdtempSync(join(tmpdir(), "xdg-runtime-")); // 0700, as systemd wants
  return spawnSync(
    "systemd-analyze",
    ["--user", "--man=no", "--recursive-errors=yes", "verify", ...files],
    {
      env: { ...process.env, XDG_RUNTIME_DIR: runtime, HOME: home },
      encoding: "utf8",
    },
  );
}

const one = (unit: ReturnType<typeof parseUnit>, section: string, key: string) =>
  unit.get(section)?.get(key);

/** A temp folder holding one stand-in executable named `tool`. */
function toolDir(tool: string): string {
  const dir = tempDir(`sheepdog-${tool}-`);
  writeFileSync(join(dir, tool), "#!/bin/sh\nexit 0\n", { mode: 0o755 });
  return dir;
}

/** The folders of the service's `Environment=PATH=…`. */
function unitPathDirs(): string[] {
  const envLines = one(parseUnit(readFileSync(service, "utf8")), "Service", "Environment") ?? [];
  const path = envLines.find((l) => l.startsWith("PATH="))?.slice(5);
  expect(path).toBeDefined();
  return (path ?? "").split(":");
}

describe("install systemd", () => {
  it("writes a oneshot service and a persistent calendar timer that systemd-analyze verifies", () => {
    const r = install();
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const v = verify([service, timer]);
    expect(v.stderr).toBe("");
    expect(v.status).toBe(0);

    const svc = parseUnit(readFileSync(service, "utf8"));
    expect(one(svc, "Service", "Type")).toEqual(["oneshot"]);
    expect(splitWords(one(svc, "Service", "ExecStart")?.[0] ?? "")).toEqual([
      process.execPath,
      realpathSync(CLI),
      "tick",
      "--program",
      p.root,
      // the tick judges gaps against how often it really runs (DESIGN §6)
      "--every",
      "5m",
    ]);
    // longer than the tick's own 4-min deadline, so the tick fails (and pages) before systemd
    expect(one(svc, "Service", "TimeoutStartSec")).toEqual(["5min"]);
    expect(one(svc, "Service", "KillMode")).toEqual(["process"]);
    expect(one(svc, "Service", "Restart")).toBeUndefined();
    const envLines = one(svc, "Service", "Environment") ?? [];
    expect(envLines).toContain(`SHEEPDOG_HOME=${p.home}`);
    // statuslines write usage readings there: the scheduled tick must read the same folder
    expect(envLines).toContain(`SHEEPDOG_STATE_DIR=${p.env.SHEEPDOG_STATE_DIR}`);
    const path = envLines.find((l) => l.startsWith("PATH="))?.slice(5) ?? "";
    const dirs = path.split(":");
    expect(path).not.toMatch(/[$~]/);
    expect(new Set(dirs).size).toBe(dirs.length);
    expect(dirs[0]).toBe(dirname(process.execPath));
    for (const d of dirs) expect(d.startsWith("/")).toBe(true);
    for (const d of ["/usr/local/bin", "/usr/bin", "/bin"]) expect(dirs).toContain(d);

    const tmr = parseUnit(readFileSync(timer, "utf8"));
    expect(one(tmr, "Timer", "OnCalendar")).toEqual(["*:0/5"]);
    expect(one(tmr, "Timer", "Persistent")).toEqual(["true"]);
    expect(one(tmr, "Timer", "AccuracySec")).toEqual(["15s"]);
    expect(one(tmr, "Timer", "OnBootSec")).toBeUndefined();
    expect(one(tmr, "Timer", "OnUnitActiveSec")).toBeUndefined();
    expect(one(tmr, "Install", "WantedBy")).toEqual(["timers.target"]);

    for (const f of [service, timer]) expect(statSync(f).mode & 0o777).toBe(0o644);
    expect(s.argvOf("systemctl")).toEqual([
      ["--user", "daemon-reload"],
      ["--user", "enable", "--now", "sheepdog-demo.timer"],
    ]);
    expect(s.argvOf("loginctl")).toEqual([["show-user", user, "--property=Linger"]]);
  });

  it.each([
    ["15m", "*:0/15"],
    ["1h", "0/1:00"],
    ["2h", "0/2:00"],
  ])("--interval %s → OnCalendar=%s", (interval, onCalendar) => {
    expect(install("--interval", interval).code).toBe(0);
    expect(one(parseUnit(readFileSync(timer, "utf8")), "Timer", "OnCalendar")).toEqual([
      onCalendar,
    ]);
    expect(verify([service, timer]).status).toBe(0);
  });

  it("PATH finds herdr and claude where they were found at install time", () => {
    // Each in its own folder, neither on the system PATH: only a lookup of that tool adds it.
    const herdrDir = toolDir("herdr");
    const claudeDir = toolDir("claude");
    env.PATH = `${s.bin}:${herdrDir}:${claudeDir}:${process.env.PATH}`;
    const r = install();
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const dirs = unitPathDirs();
    expect(dirs).toContain(herdrDir);
    expect(dirs).toContain(claudeDir);
    expect(verify([service, timer]).status).toBe(0);
  });

  it("PATH finds sheepdog: the npm prefix's bin/ it was found in, else a launcher of this CLI (issue 18)", () => {
    const unitSheepdog = () =>
      spawnSync("sh", ["-c", "command -v sheepdog && sheepdog --version"], {
        env: { PATH: unitPathDirs().join(":") },
        encoding: "utf8",
      });
    const version = JSON.parse(readFileSync("package.json", "utf8")).version as string;
    // Not on the installing shell's PATH (a clone run as node dist/cli.cjs): a launcher in the
    // host state dir, 0755, runs this CLI.
    const noSheepdog = standIns(["systemctl", "loginctl"], { sheepdog: false });
    env.PATH = `${noSheepdog.bin}:${process.env.PATH}`;
    expect(install().code).toBe(0);
    const shim = join(env.SHEEPDOG_STATE_DIR as string, "bin", "sheepdog");
    expect(statSync(shim).mode & 0o777).toBe(0o755);
    const viaShim = unitSheepdog();
    expect(viaShim.stdout).toBe(`${shim}\nsheepdog ${version}\n`);
    // Found as an npm prefix installs it (bin/sheepdog → the package's bin/sheepdog.cjs): that
    // folder goes on the PATH, and no launcher is written.
    const prefixBin = tempDir("sheepdog-prefix-bin-");
    symlinkSync(resolve("bin/sheepdog.cjs"), join(prefixBin, "sheepdog"));
    rmSync(shim);
    env.PATH = `${prefixBin}:${env.PATH}`;
    expect(install().code).toBe(0);
    expect(unitPathDirs()).toContain(prefixBin);
    expect(existsSync(shim)).toBe(false);
    expect(unitSheepdog().stdout).toBe(`${join(prefixBin, "sheepdog")}\nsheepdog ${version}\n`);
  });

  it("PATH without herdr or claude anywhere: the install still succeeds", () => {
    const bare = toolDir("not-a-tool");
    env.PATH = `${s.bin}:${bare}:/usr/bin:/bin`;
    for (const tool of ["herdr", "claude"]) {
      const found = spawnSync("sh", ["-c", `command -v ${tool}`], { env: { PATH: env.PATH } });
      expect(found.status).not.toBe(0);
    }
    const r = install();
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const dirs = unitPathDirs();
    expect(dirs[0]).toBe(dirname(process.execPath));
    expect(dirs).not.toContain(bare);
    for (const d of ["/usr/bin", "/bin"]) expect(dirs).toContain(d);
    expect(verify([service, timer]).status).toBe(0);
  });

  it("--interval 7m: exit 2 naming the interval and what is accepted, nothing written", () => {
    const before = treeSnapshot(home);
    const r = install("--interval", "7m");
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--interval 7m");
    expect(r.stderr).toMatch(/minutes that divide an hour .*5m.* hours that divide a day .*1h/);
    expect(treeSnapshot(home)).toEqual(before);
    expect(s.calls()).toEqual([]);
  });

  it("a CLI path with a space, % and $ is quoted so systemd reads it back exactly", () => {
    const odd = join(tempDir(), "my tools 100%", "dist$x");
    cpSync(dirname(realpathSync(CLI)), odd, { recursive: true });
    const spawned = spawnSync(
      process.execPath,
      [join(odd, "cli.cjs"), "install", "systemd", "--program", p.root],
      {
        env: { ...process.env, ...env },
        encoding: "utf8",
      },
    );
    expect(spawned.stderr).toBe("");
    expect(spawned.status).toBe(0);
    const exec = one(parseUnit(readFileSync(service, "utf8")), "Service", "ExecStart")?.[0] ?? "";
    expect(exec).toContain('"');
    expect(splitWords(exec)[1]).toBe(join(odd, "cli.cjs"));
    const v = verify([service, timer]);
    expect(v.stderr).toBe("");
    expect(v.status).toBe(0);
  });

  it("warns when lingering is off, naming the command that turns it on", () => {
    s.answer("loginctl", { when: ["show-user"], stdout: "Linger=no\n" });
    const r = install();
    expect(r.code).toBe(0);
    expect(r.stderr).toContain("lingering is off");
    expect(r.stderr).toContain(`loginctl enable-linger ${user}`);
  });

  it("--all installs sheepdog.service/.timer ticking every program", () => {
    const r = sheepdog(["install", "systemd", "--all"], { env });
    expect(r.code).toBe(0);
    const svc = parseUnit(readFileSync(join(unitDir, "sheepdog.service"), "utf8"));
    const exec = one(svc, "Service", "ExecStart");
    expect(splitWords(exec?.[0] ?? "").slice(2)).toEqual(["tick", "--all", "--every", "5m"]);
    // each program pass has its own 4-min deadline: the whole run gets longer, never infinity
    expect(one(svc, "Service", "TimeoutStartSec")).toEqual(["30min"]);
    expect(one(svc, "Service", "Environment")).toContain(
      `SHEEPDOG_STATE_DIR=${p.env.SHEEPDOG_STATE_DIR}`,
    );
    const v = verify([join(unitDir, "sheepdog.service"), join(unitDir, "sheepdog.timer")]);
    expect(v.stderr).toBe("");
    expect(v.status).toBe(0);
    expect(s.argvOf("systemctl")[1]).toEqual(["--user", "enable", "--now", "sheepdog.timer"]);
  });

  it("SHEEPDOG_STATE_DIR is written absolute when set (a relative or ~ one resolved), left out when unset", () => {
    expect(
      sheepdog(["install", "systemd", "--program", p.root], {
        env: { ...env, SHEEPDOG_STATE_DIR: "~/sd state" },
      }).code,
    ).toBe(0);
    const envOf = () => one(parseUnit(readFileSync(service, "utf8")), "Service", "Environment");
    expect(envOf()).toContain(`"SHEEPDOG_STATE_DIR=${join(home, "sd state")}"`);
    expect(verify([service, timer]).status).toBe(0);
    expect(
      sheepdog(["install", "systemd", "--program", p.root], {
        env: { ...env, SHEEPDOG_STATE_DIR: "" },
      }).code,
    ).toBe(0);
    expect((envOf() ?? []).some((l) => l.includes("SHEEPDOG_STATE_DIR"))).toBe(false);
  });

  it("a second install replaces the first: one copy, same content", () => {
    expect(install().code).toBe(0);
    const first = [readFileSync(service, "utf8"), readFileSync(timer, "utf8")];
    expect(install().code).toBe(0);
    expect(readdirSync(unitDir).sort()).toEqual(["sheepdog-demo.service", "sheepdog-demo.timer"]);
    expect([readFileSync(service, "utf8"), readFileSync(timer, "utf8")]).toEqual(first);
  });

  it("a failing systemctl: exit 1 naming the files written and the commands to run by hand", () => {
    s.answer("systemctl", {
      when: ["--user", "daemon-reload"],
      exit: 1,
      stderr: "Failed to connect to bus: No medium found\n",
    });
    const r = install();
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("Failed to connect to bus");
    expect(r.stderr).toContain(`files written:\n  ${service}\n  ${timer}`);
    expect(r.stderr).toContain(
      "run by hand:\n  systemctl --user daemon-reload\n  systemctl --user enable --now sheepdog-demo.timer",
    );
  });

  it("a systemctl that fails: exit 1 naming the files and the commands left", () => {
    s.answer("systemctl", {
      when: ["--user", "enable"],
      exit: 1,
      stderr: "Failed to connect to bus\n",
    });
    const r = install();
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("Failed to connect to bus");
    expect(r.stderr).toContain(`files written:\n  ${service}\n  ${timer}`);
    expect(r.stderr).toContain("systemctl --user enable --now sheepdog-demo.timer");
  });

  it("no systemctl on PATH: exit 2 before anything is written (DESIGN §16)", () => {
    const onlyLoginctl = standIns(["loginctl"]);
    const before = treeSnapshot(home, p.home);
    const r = sheepdog(["install", "systemd", "--program", p.root], {
      env: { ...env, PATH: onlyLoginctl.bin },
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      "systemctl is not on PATH, so this host does not run systemd; nothing was written",
    );
    expect(treeSnapshot(home, p.home)).toEqual(before);
  });

  it("--dry-run writes nothing, runs nothing, and prints both units and the commands", () => {
    const before = treeSnapshot(home, p.home);
    const dry = install("--dry-run");
    expect(dry.code).toBe(0);
    expect(treeSnapshot(home, p.home)).toEqual(before);
    expect(s.calls()).toEqual([]);
    expect(install().code).toBe(0);
    for (const f of [service, timer])
      expect(dry.stdout).toContain(`==> ${f} (mode 0644) <==\n${readFileSync(f, "utf8")}<== end`);
    expect(dry.stdout).toContain("$ systemctl --user daemon-reload\n");
    expect(dry.stdout).toContain("$ systemctl --user enable --now sheepdog-demo.timer\n");
  });
});

describe("uninstall systemd", () => {
  it("disables and removes only our units; foreign files stay", () => {
    expect(install().code).toBe(0);
    expect(sheepdog(["install", "systemd", "--all"], { env }).code).toBe(0);
    const foreign = {
      "other.service": "[Service]\nExecStart=/bin/true\n",
      // our naming pattern without our marker: not ours
      "sheepdog-lookalike.timer": "[Timer]\nOnCalendar=daily\n",
    };
    for (const [name, text] of Object.entries(foreign)) writeFileSync(join(unitDir, name), text);
    mkdirSync(join(unitDir, "timers.target.wants"), { recursive: true });
    s.reset();
    const r = sheepdog(["uninstall", "systemd", "--program", p.root], { env });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(s.argvOf("systemctl")).toEqual([
      ["--user", "disable", "--now", "sheepdog-demo.timer"],
      ["--user", "daemon-reload"],
    ]);
    expect(readdirSync(unitDir).sort()).toEqual([
      "other.service",
      "sheepdog-lookalike.timer",
      "sheepdog.service",
      "sheepdog.timer",
      "timers.target.wants",
    ]);
    for (const [name, text] of Object.entries(foreign))
      expect(readFileSync(join(unitDir, name), "utf8")).toBe(text);

    expect(sheepdog(["uninstall", "systemd", "--all"], { env }).code).toBe(0);
    expect(readdirSync(unitDir).sort()).toEqual([
      "other.service",
      "sheepdog-lookalike.timer",
      "timers.target.wants",
    ]);
  });

  it("removes the timer's stamp file (Persistent= leaves it), only its own", () => {
    expect(install().code).toBe(0);
    const timers = join(home, ".local", "share", "systemd", "timers");
    mkdirSync(timers, { recursive: true });
    const stamp = join(timers, "stamp-sheepdog-demo.timer");
    const other = join(timers, "stamp-sheepdog.timer");
    for (const f of [stamp, other]) writeFileSync(f, "");
    const dry = sheepdog(["uninstall", "systemd", "--program", p.root, "--dry-run"], { env });
    expect(dry.stdout).toContain(`rm -f ${stamp}`);
    expect(existsSync(stamp)).toBe(true);
    const r = sheepdog(["uninstall", "systemd", "--program", p.root], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`removed ${stamp}`);
    expect(existsSync(stamp)).toBe(false);
    expect(existsSync(other)).toBe(true);
  });

  it("says when it leaves a manager running with nothing to supervise it (and not when another timer still ticks it)", () => {
    expect(install().code).toBe(0);
    const manager = sleeper();
    try {
      const claimed = sheepdog(
        ["claim", "acquire", "--pid", String(manager.pid), "--program", p.root],
        {
          env,
        },
      );
      expect(claimed.code, claimed.stderr).toBe(0);
      const dry = sheepdog(["uninstall", "systemd", "--program", p.root, "--dry-run"], { env });
      expect(dry.stderr).toContain(
        `its manager (pid ${manager.pid}) would be left running with nothing to supervise it`,
      );
      const json = sheepdog(["uninstall", "systemd", "--program", p.root, "--dry-run", "--json"], {
        env,
      });
      expect(JSON.parse(json.stdout).unsupervised).toEqual([{ root: p.root, pid: manager.pid }]);
      // An --all timer still ticks it: nothing is said.
      expect(sheepdog(["install", "systemd", "--all"], { env }).code).toBe(0);
      const covered = sheepdog(["uninstall", "systemd", "--program", p.root, "--dry-run"], { env });
      expect(covered.stderr).toBe("");
      expect(sheepdog(["uninstall", "systemd", "--all"], { env }).code).toBe(0);
      const r = sheepdog(["uninstall", "systemd", "--program", p.root], { env });
      expect(r.code).toBe(0);
      expect(r.stderr).toContain(
        `its manager (pid ${manager.pid}) is left running with nothing to supervise it`,
      );
      expect(r.stderr).toContain(`sheepdog install systemd --program ${p.root}`);
    } finally {
      manager.kill("SIGKILL");
    }
  });

  it("uninstall works for a program whose config has since broken", () => {
    expect(install().code).toBe(0);
    writeFileSync(join(p.root, "program.json"), "{ not json");
    const r = sheepdog(["uninstall", "systemd", "--program", p.root], { env });
    expect(r.code).toBe(0);
    expect(existsSync(service) || existsSync(timer)).toBe(false);
  });

  it("a failing disable keeps the units and says what to run by hand", () => {
    expect(install().code).toBe(0);
    s.answer("systemctl", {
      when: ["--user", "disable"],
      exit: 1,
      stderr: "Failed to connect to bus\n",
    });
    const r = sheepdog(["uninstall", "systemd", "--program", p.root], { env });
    expect(r.code).toBe(1);
    expect(existsSync(service) && existsSync(timer)).toBe(true);
    expect(r.stderr).toContain(
      `run by hand:\n  systemctl --user disable --now sheepdog-demo.timer\n  rm -f ${service}\n  rm -f ${timer}\n  systemctl --user daemon-reload`,
    );
  });
});
