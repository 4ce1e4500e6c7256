// `install launchd|systemd --watch`: the watcher's unit beside the timer, verified by
// systemd-analyze and re-parsed by plistlib; `uninstall` removes both. launchctl/systemctl are
// stood in for here; test/watch-systemd-real.test.ts runs the service under a real user manager.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, realpathSync } from "node:fs";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { parseUnit, splitWords } from "../src/install/systemd.js";
import { CLI, sheepdog, tempDir, tempProgram } from "./helpers/cli.js";
import { parsePlistWithPython } from "./helpers/install.js";
import { type StandIns, standIns } from "./helpers/standins.js";

let s: StandIns;
let p: ReturnType<typeof tempProgram>;
let home: string;
let env: NodeJS.ProcessEnv;

beforeEach(() => {
  s = standIns();
  s.answer("loginctl", { when: ["show-user"], stdout: "Linger=yes\n" });
  p = tempProgram("demo");
  home = tempDir("sheepdog-home-");
  env = {
    ...p.env,
    HOME: home,
    XDG_CONFIG_HOME: "",
    USER: process.env.USER || userInfo().username,
    PATH: `${s.bin}:${process.env.PATH}`,
  };
});

const units = () => join(home, ".config", "systemd", "user");

describe("install systemd --watch", () => {
  it("writes a Restart=always watcher service beside the timer; systemd-analyze verifies it", () => {
    const r = sheepdog(["install", "systemd", "--program", p.root, "--watch"], { env });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const watch = join(units(), "sheepdog-demo.watch.service");
    const files = [
      join(units(), "sheepdog-demo.service"),
      join(units(), "sheepdog-demo.timer"),
      watch,
    ];
    for (const f of files) expect(existsSync(f)).toBe(true);
    const runtime = mkdtempSync(join(tmpdir(), "xdg-runtime-"));
    const v = spawnSync("systemd-analyze", ["--user", "--man=no", "verify", ...files], {
      env: { ...process.env, XDG_RUNTIME_DIR: runtime, HOME: home },
      encoding: "utf8",
    });
    expect(v.stderr).toBe("");
    expect(v.status).toBe(0);
    const svc = parseUnit(readFileSync(watch, "utf8"));
    const one = (section: string, key: string) => svc.get(section)?.get(key);
    expect(one("Service", "Type")).toEqual(["simple"]);
    expect(one("Service", "Restart")).toEqual(["always"]);
    expect(one("Service", "KillMode")).toEqual(["process"]);
    expect(one("Unit", "StartLimitIntervalSec")).toEqual(["0"]);
    expect(one("Install", "WantedBy")).toEqual(["default.target"]);
    expect(splitWords(one("Service", "ExecStart")?.[0] ?? "")).toEqual([
      process.execPath,
      realpathSync(CLI),
      "watch",
      "--program",
      p.root,
    ]);
    expect(s.argvOf("systemctl")).toContainEqual([
      "--user",
      "enable",
      "sheepdog-demo.watch.service",
    ]);
    expect(s.argvOf("systemctl")).toContainEqual([
      "--user",
      "restart",
      "sheepdog-demo.watch.service",
    ]);
    expect(r.stdout).toContain("installed systemd watcher sheepdog-demo.watch.service");

    // uninstall removes the timer and the watcher, stopping the watcher first
    s.reset();
    const u = sheepdog(["uninstall", "systemd", "--program", p.root, "--json"], { env });
    expect(u.code).toBe(0);
    for (const f of files) expect(existsSync(f)).toBe(false);
    expect(s.argvOf("systemctl")).toContainEqual([
      "--user",
      "disable",
      "--now",
      "sheepdog-demo.watch.service",
    ]);
    expect(JSON.parse(u.stdout).found).toEqual(["sheepdog-demo", "sheepdog-demo.watch.service"]);
  });

  it("--all: sheepdog.watch.service runs watch --all; --dry-run --json writes nothing", () => {
    const r = sheepdog(["install", "systemd", "--all", "--watch", "--dry-run", "--json"], { env });
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(doc.watch).toBe(true);
    const file = doc.files.find((f: { path: string }) => f.path.endsWith("sheepdog.watch.service"));
    expect(file.content).toMatch(/ExecStart=\S+ \S+ watch --all\n/);
    expect(existsSync(units())).toBe(false);
    expect(s.calls()).toEqual([]);
  });

  it("a program named like the watcher cannot collide with it", () => {
    const watchNamed = tempProgram("watch");
    sheepdog(["install", "systemd", "--program", watchNamed.root], { env });
    sheepdog(["install", "systemd", "--all", "--watch"], { env });
    expect(existsSync(join(units(), "sheepdog-watch.service"))).toBe(true);
    expect(existsSync(join(units(), "sheepdog.watch.service"))).toBe(true);
    // uninstalling --all leaves the program named "watch" installed
    sheepdog(["uninstall", "systemd", "--all"], { env });
    expect(existsSync(join(units(), "sheepdog.watch.service"))).toBe(false);
    expect(existsSync(join(units(), "sheepdog-watch.service"))).toBe(true);
  });
});

describe("install launchd --watch", () => {
  it("writes a KeepAlive agent beside the timer's; plistlib re-parses it; uninstall removes both", () => {
    const r = sheepdog(["install", "launchd", "--program", p.root, "--watch"], { env });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const agents = join(home, "Library", "LaunchAgents");
    const plist = join(agents, "dev.sheepdog-watch.demo.plist");
    const agent = parsePlistWithPython(plist) as Record<string, unknown>;
    expect(agent).toMatchObject({
      Label: "dev.sheepdog-watch.demo",
      ProgramArguments: [process.execPath, realpathSync(CLI), "watch", "--program", p.root],
      RunAtLoad: true,
      KeepAlive: true,
      AbandonProcessGroup: true,
      ThrottleInterval: 5,
    });
    expect(existsSync(join(agents, "dev.sheepdog.demo.plist"))).toBe(true);
    const uid = process.getuid?.() ?? 0;
    expect(s.argvOf("launchctl")).toContainEqual(["bootstrap", `gui/${uid}`, plist]);
    const u = sheepdog(["uninstall", "launchd", "--program", p.root], { env });
    expect(u.code).toBe(0);
    expect(existsSync(plist)).toBe(false);
    expect(existsSync(join(agents, "dev.sheepdog.demo.plist"))).toBe(false);
    expect(s.argvOf("launchctl")).toContainEqual(["bootout", `gui/${uid}/dev.sheepdog-watch.demo`]);
  });
});
