// `sheepdog install|uninstall launchd` with HOME in a temp dir and launchctl stood in for.
import { spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { CLI, sheepdog, tempDir, tempProgram } from "./helpers/cli.js";
import { parsePlistWithPython, plistTypesWithPython, treeSnapshot } from "./helpers/install.js";
import { type StandIns, standIns } from "./helpers/standins.js";

const uid = process.getuid?.() ?? 0;

interface Agent {
  Label: string;
  ProgramArguments: string[];
  StartCalendarInterval?: { Minute: number; Hour?: number }[];
  StartInterval?: number;
  RunAtLoad: boolean;
  ProcessType: string;
  AbandonProcessGroup: boolean;
  KeepAlive?: unknown;
  StandardOutPath: string;
  StandardErrorPath: string;
  EnvironmentVariables: { PATH: string; SHEEPDOG_HOME?: string; SHEEPDOG_STATE_DIR?: string };
}

function which(tool: string, path = process.env.PATH): string | null {
  const r = spawnSync("sh", ["-c", `command -v ${tool}`], {
    encoding: "utf8",
    env: { ...process.env, PATH: path },
  });
  return r.status === 0 ? r.stdout.trim() : null;
}

/** A temp folder holding one stand-in executable named `tool`. */
function toolDir(tool: string): string {
  const dir = tempDir(`sheepdog-${tool}-`);
  writeFileSync(join(dir, tool), "#!/bin/sh\nexit 0\n", { mode: 0o755 });
  return dir;
}

let s: StandIns;
let p: ReturnType<typeof tempProgram>;
let home: string;
let env: NodeJS.ProcessEnv;
let plist: string;

beforeEach(() => {
  s = standIns();
  p = tempProgram("demo");
  home = tempDir("sheepdog-home-");
  env = { ...p.env, HOME: home, XDG_CONFIG_HOME: "", PATH: `${s.bin}:${process.env.PATH}` };
  plist = join(home, "Library", "LaunchAgents", "dev.sheepdog.demo.plist");
});

const install = (...args: string[]) =>
  sheepdog(["install", "launchd", "--program", p.root, ...args], { env });

describe("install launchd on a host without launchctl (issue 18)", () => {
  it.skipIf(which("launchctl") !== null)(
    "refuses before writing anything, and uninstall still removes what an earlier install wrote",
    () => {
      const bare = { ...env, PATH: process.env.PATH };
      const before = treeSnapshot(home, p.home);
      const r = sheepdog(["install", "launchd", "--program", p.root], { env: bare });
      expect(r.code).toBe(2);
      expect(r.stderr).toBe(
        "sheepdog: install launchd: launchctl is not on PATH, so this host does not run launchd; nothing was written (on this host: sheepdog install systemd, or sheepdog watch)\n",
      );
      expect(treeSnapshot(home, p.home)).toEqual(before);
      expect(existsSync(join(home, "Library"))).toBe(false);
      // a dry run still shows what it would write
      const dry = sheepdog(["install", "launchd", "--program", p.root, "--dry-run"], { env: bare });
      expect(dry.code).toBe(0);
      expect(dry.stdout).toContain(plist);
      // a plist left by an install elsewhere (here: with the stand-in) goes on uninstall
      expect(install().code).toBe(0);
      expect(existsSync(plist)).toBe(true);
      const un = sheepdog(["uninstall", "launchd", "--program", p.root], { env: bare });
      expect(un.stderr).toBe("");
      expect(un.code).toBe(0);
      expect(un.stdout).toContain("launchctl is not on this host, so nothing was loaded");
      expect(existsSync(plist)).toBe(false);
    },
  );
});

describe("install launchd", () => {
  it("writes a plist that plistlib parses, with every key of the right type and value", () => {
    const r = install();
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const agent = parsePlistWithPython(plist) as Agent;
    expect(agent.Label).toBe("dev.sheepdog.demo");
    expect(agent.ProgramArguments).toEqual([
      process.execPath,
      realpathSync(CLI),
      "tick",
      "--program",
      p.root,
      "--every",
      "5m",
    ]);
    for (const arg of agent.ProgramArguments.slice(0, 2)) expect(arg.startsWith("/")).toBe(true);
    expect(agent.StartCalendarInterval).toEqual(
      [0, 5, 10, 15, 20, 25, 30, 35, 40, 45, 50, 55].map((Minute) => ({ Minute })),
    );
    expect(agent.StartInterval).toBeUndefined();
    expect(agent.RunAtLoad).toBe(true);
    expect(agent.ProcessType).toBe("Background");
    expect(agent.AbandonProcessGroup).toBe(true);
    expect("KeepAlive" in agent).toBe(false);
    const logs = join(home, "Library", "Logs", "sheepdog");
    expect(agent.StandardOutPath).toBe(join(logs, "dev.sheepdog.demo.out.log"));
    expect(agent.StandardErrorPath).toBe(join(logs, "dev.sheepdog.demo.err.log"));
    expect(statSync(logs).isDirectory()).toBe(true);
    expect(agent.EnvironmentVariables.SHEEPDOG_HOME).toBe(p.home);
    // statuslines write usage readings there: the scheduled tick must read the same folder
    expect(agent.EnvironmentVariables.SHEEPDOG_STATE_DIR).toBe(p.env.SHEEPDOG_STATE_DIR);

    // PATH: a literal list of absolute directories, no $PATH or ~, no duplicates
    const dirs = agent.EnvironmentVariables.PATH.split(":");
    expect(agent.EnvironmentVariables.PATH).not.toMatch(/[$~]/);
    for (const d of dirs) expect(d.startsWith("/")).toBe(true);
    expect(new Set(dirs).size).toBe(dirs.length);
    expect(dirs[0]).toBe(dirname(process.execPath));
    for (const tool of ["git", "tmux"]) {
      const found = which(tool);
      if (found) expect(dirs).toContain(dirname(found));
    }
    for (const d of [
      "/opt/homebrew/bin",
      "/usr/local/bin",
      "/usr/bin",
      "/bin",
      "/usr/sbin",
      "/sbin",
    ])
      expect(dirs).toContain(d);

    // the types plistlib sees, not only the values
    expect(plistTypesWithPython(plist)).toEqual({
      AbandonProcessGroup: "bool",
      EnvironmentVariables: "dict{PATH:str,SHEEPDOG_HOME:str,SHEEPDOG_STATE_DIR:str}",
      Label: "str",
      ProcessType: "str",
      ProgramArguments: "list[str]",
      RunAtLoad: "bool",
      StandardErrorPath: "str",
      StandardOutPath: "str",
      StartCalendarInterval: "list[dict{Minute:int}]",
    });

    expect(statSync(plist).mode & 0o777).toBe(0o644);
    expect(s.argvOf("launchctl")).toEqual([
      ["bootout", `gui/${uid}/dev.sheepdog.demo`],
      ["bootstrap", `gui/${uid}`, plist],
    ]);
  });

  it.each([
    ["7m", { StartInterval: 420 }, "StartInterval:int"],
    ["90s", { StartInterval: 90 }, "StartInterval:int"],
    [
      "1h",
      { StartCalendarInterval: [{ Minute: 0 }] },
      "StartCalendarInterval:list[dict{Minute:int}]",
    ],
    [
      "6h",
      { StartCalendarInterval: [0, 6, 12, 18].map((Hour) => ({ Hour, Minute: 0 })) },
      "StartCalendarInterval:list[dict{Hour:int,Minute:int}]",
    ],
  ])("--interval %s → %j", (interval, keys, type) => {
    expect(install("--interval", interval).code).toBe(0);
    const agent = parsePlistWithPython(plist) as Agent;
    expect({
      StartInterval: agent.StartInterval,
      StartCalendarInterval: agent.StartCalendarInterval,
    }).toEqual({
      StartInterval: undefined,
      StartCalendarInterval: undefined,
      ...keys,
    });
    const [key, t] = type.split(/:(.*)/) as [string, string];
    expect(plistTypesWithPython(plist)[key]).toBe(t);
  });

  it("PATH finds herdr and claude where they were found at install time", () => {
    // Each in its own folder, neither on the system PATH: only a lookup of that tool adds it.
    const herdrDir = toolDir("herdr");
    const claudeDir = toolDir("claude");
    env.PATH = `${s.bin}:${herdrDir}:${claudeDir}:${process.env.PATH}`;
    const r = install();
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const dirs = (parsePlistWithPython(plist) as Agent).EnvironmentVariables.PATH.split(":");
    expect(dirs).toContain(herdrDir);
    expect(dirs).toContain(claudeDir);
  });

  it("PATH without herdr or claude anywhere: the install still succeeds", () => {
    const bare = toolDir("not-a-tool");
    env.PATH = `${s.bin}:${bare}:/usr/bin:/bin`;
    for (const tool of ["herdr", "claude"]) expect(which(tool, env.PATH)).toBeNull();
    const r = install();
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const path = (parsePlistWithPython(plist) as Agent).EnvironmentVariables.PATH;
    const dirs = path.split(":");
    expect(dirs[0]).toBe(dirname(process.execPath));
    expect(dirs).not.toContain(bare);
    for (const d of ["/usr/bin", "/bin"]) expect(dirs).toContain(d);
  });

  it("--all installs dev.sheepdog ticking every program", () => {
    const r = sheepdog(["install", "launchd", "--all"], { env });
    expect(r.code).toBe(0);
    const agent = parsePlistWithPython(
      join(home, "Library", "LaunchAgents", "dev.sheepdog.plist"),
    ) as Agent;
    expect(agent.Label).toBe("dev.sheepdog");
    expect(agent.ProgramArguments.slice(2)).toEqual(["tick", "--all", "--every", "5m"]);
  });

  it("a second install replaces the first: one file, same content", () => {
    expect(install().code).toBe(0);
    const first = readFileSync(plist, "utf8");
    expect(install().code).toBe(0);
    expect(readdirSync(dirname(plist))).toEqual(["dev.sheepdog.demo.plist"]);
    expect(readFileSync(plist, "utf8")).toBe(first);
    expect(s.argvOf("launchctl")).toHaveLength(4);
  });

  it("a bootout of an agent that is not loaded is not a failure", () => {
    s.answer("launchctl", {
      when: ["bootout"],
      exit: 3,
      stderr: "Boot-out failed: 3: No such process\n",
    });
    const r = install();
    expect(r.code).toBe(0);
    expect(s.argvOf("launchctl").map((a) => a[0])).toEqual(["bootout", "bootstrap"]);
  });

  it("a failing launchctl: exit 1 naming the file written and the commands to run by hand", () => {
    s.answer("launchctl", {
      when: ["bootstrap"],
      exit: 5,
      stderr: "Bootstrap failed: 5: Input/output error\n",
    });
    const r = install();
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("Bootstrap failed: 5");
    expect(r.stderr).toContain(`files written:\n  ${plist}`);
    expect(r.stderr).toContain(`run by hand:\n  launchctl bootstrap gui/${uid} ${plist}`);
    expect(existsSync(plist)).toBe(true);
  });

  it("a launchctl that fails: exit 1 naming the file and every command left", () => {
    s.answer("launchctl", {
      when: ["bootstrap"],
      exit: 5,
      stderr: "Bootstrap failed: 5: Input/output error\n",
    });
    const r = install();
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("Bootstrap failed: 5");
    expect(r.stderr).toContain(`files written:\n  ${plist}`);
    expect(r.stderr).toContain(`run by hand:\n  launchctl bootstrap gui/${uid} ${plist}`);
  });

  it("no launchctl on PATH: exit 2 before anything is written", () => {
    const noLaunchctl = standIns(["systemctl"]);
    const before = treeSnapshot(home, p.home);
    const r = sheepdog(["install", "launchd", "--program", p.root], {
      env: { ...env, PATH: noLaunchctl.bin },
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("launchctl is not on PATH");
    expect(treeSnapshot(home, p.home)).toEqual(before);
  });

  it("--dry-run writes nothing, runs nothing, and prints the full plist and the commands", () => {
    const before = treeSnapshot(home, p.home);
    const dry = install("--dry-run");
    expect(dry.code).toBe(0);
    expect(treeSnapshot(home, p.home)).toEqual(before);
    expect(s.calls()).toEqual([]);
    expect(install().code).toBe(0);
    const content = readFileSync(plist, "utf8");
    expect(dry.stdout).toContain(`==> ${plist} (mode 0644) <==\n${content}<== end`);
    expect(dry.stdout).toContain(`$ launchctl bootout gui/${uid}/dev.sheepdog.demo\n`);
    expect(dry.stdout).toContain(`$ launchctl bootstrap gui/${uid} ${plist}\n`);
  });

  it.each([["0s"], ["soon"], ["5"]])("--interval %s: exit 2, nothing written", (interval) => {
    const before = treeSnapshot(home);
    const r = install("--interval", interval);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--interval");
    expect(treeSnapshot(home)).toEqual(before);
  });

  it("a broken program config: exit 2, nothing written", () => {
    writeFileSync(join(p.root, "program.json"), '{"name": "demo", "watchdog": {"intervl": "5m"}}');
    const before = treeSnapshot(home);
    const r = install();
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("program.json");
    expect(treeSnapshot(home)).toEqual(before);
  });

  it("refuses (exit 3) to overwrite a plist of that name that sheepdog did not write", () => {
    mkdirSync(dirname(plist), { recursive: true });
    writeFileSync(plist, "<plist>someone else's</plist>\n");
    const r = install();
    expect(r.code).toBe(3);
    expect(readFileSync(plist, "utf8")).toBe("<plist>someone else's</plist>\n");
    expect(s.calls()).toEqual([]);
  });

  it("a renamed program's old agent is replaced, not left running beside the new one", () => {
    expect(install().code).toBe(0);
    writeFileSync(join(p.root, "program.json"), '{"name": "demo2"}\n');
    s.reset();
    expect(install().code).toBe(0);
    expect(readdirSync(dirname(plist))).toEqual(["dev.sheepdog.demo2.plist"]);
    expect(s.argvOf("launchctl")).toEqual([
      ["bootout", `gui/${uid}/dev.sheepdog.demo`],
      ["bootout", `gui/${uid}/dev.sheepdog.demo2`],
      ["bootstrap", `gui/${uid}`, join(dirname(plist), "dev.sheepdog.demo2.plist")],
    ]);
  });
});

describe("uninstall launchd", () => {
  it("boots out and removes only our agent; foreign files stay", () => {
    expect(install().code).toBe(0);
    expect(sheepdog(["install", "launchd", "--all"], { env }).code).toBe(0);
    const dir = dirname(plist);
    const foreign = {
      "com.example.other.plist": "<plist>other</plist>\n",
      // our naming pattern but not our marker: not ours
      "dev.sheepdog.lookalike.plist": "<plist>not ours</plist>\n",
    };
    for (const [name, text] of Object.entries(foreign)) writeFileSync(join(dir, name), text);
    s.reset();
    const r = sheepdog(["uninstall", "launchd", "--program", p.root], { env });
    expect(r.code).toBe(0);
    expect(s.argvOf("launchctl")).toEqual([["bootout", `gui/${uid}/dev.sheepdog.demo`]]);
    expect(readdirSync(dir).sort()).toEqual([
      "com.example.other.plist",
      "dev.sheepdog.lookalike.plist",
      "dev.sheepdog.plist",
    ]);
    for (const [name, text] of Object.entries(foreign))
      expect(readFileSync(join(dir, name), "utf8")).toBe(text);

    expect(sheepdog(["uninstall", "launchd", "--all"], { env }).code).toBe(0);
    expect(readdirSync(dir).sort()).toEqual([
      "com.example.other.plist",
      "dev.sheepdog.lookalike.plist",
    ]);
  });

  it("uninstall when nothing is installed changes nothing and says so", () => {
    const before = treeSnapshot(home);
    const r = sheepdog(["uninstall", "launchd", "--program", p.root], { env });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("nothing");
    expect(treeSnapshot(home)).toEqual(before);
    expect(s.calls()).toEqual([]);
  });

  it("a failing bootout keeps the plist and says what to run by hand", () => {
    expect(install().code).toBe(0);
    s.answer("launchctl", {
      when: ["bootout"],
      exit: 1,
      stderr: "Boot-out failed: 1: Operation not permitted\n",
    });
    const r = sheepdog(["uninstall", "launchd", "--program", p.root], { env });
    expect(r.code).toBe(1);
    expect(existsSync(plist)).toBe(true);
    expect(r.stderr).toContain(
      `run by hand:\n  launchctl bootout gui/${uid}/dev.sheepdog.demo\n  rm -f ${plist}`,
    );
  });
});
