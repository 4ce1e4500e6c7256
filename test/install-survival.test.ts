// A manager started by a tick must outlive the tick, the way the installed units run it:
// launchd and systemd start each tick as its own session/process group and, when it exits,
// clean up after it (launchd kills the job's process group unless AbandonProcessGroup is set;
// systemd's default KillMode=control-group kills everything the tick started). Here: run a real
// tick under setsid, kill its whole process group once it has exited, and check the manager lives.
import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { parseUnit, splitWords } from "../src/install/systemd.js";
import { sheepdog, tempDir, tempProgram } from "./helpers/cli.js";
import { parsePlistWithPython } from "./helpers/install.js";
import { alive } from "./helpers/launch.js";
import { standIns } from "./helpers/standins.js";
import { waitFor } from "./helpers/watchdog.js";

const started: number[] = [];

afterEach(() => {
  for (const pid of started.splice(0)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
});

/** Process group and session of a pid (Linux /proc), to show where the manager ended up. */
function groupOf(pid: number): { pgid: number; sid: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return { pgid: Number(fields[2]), sid: Number(fields[3]) };
}

/** The live processes of process group `pgid` (Linux /proc; zombies are gone already). */
function groupMembers(pgid: number): number[] {
  const out: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[2]) === pgid && fields[0] !== "Z" && fields[0] !== "X")
        out.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** The argv and environment an installed unit runs its tick with, read back from the unit. */
function unitCommand(scheduler: "launchd" | "systemd", home: string, label: string) {
  if (scheduler === "launchd") {
    const agent = parsePlistWithPython(
      join(home, "Library", "LaunchAgents", `dev.sheepdog.${label}.plist`),
    ) as {
      ProgramArguments: string[];
      EnvironmentVariables: Record<string, string>;
    };
    return { argv: agent.ProgramArguments, env: agent.EnvironmentVariables };
  }
  const unit = parseUnit(
    readFileSync(join(home, ".config", "systemd", "user", `sheepdog-${label}.service`), "utf8"),
  );
  const service = unit.get("Service");
  const env: Record<string, string> = {};
  for (const line of service?.get("Environment") ?? [])
    for (const a of splitWords(line, { dollar: false }))
      env[a.slice(0, a.indexOf("="))] = a.slice(a.indexOf("=") + 1);
  return { argv: splitWords(service?.get("ExecStart")?.[0] ?? ""), env };
}

it.skipIf(process.platform !== "linux").each(["systemd", "launchd"] as const)(
  "a manager started by a tick (%s unit's command and environment) survives the kill of the tick's process group",
  async (scheduler) => {
    const p = tempProgram("survivor");
    const home = tempDir("sheepdog-home-");
    const manager = join(p.root, "manager.mjs");
    const pidFile = join(p.root, "manager.pid");
    writeFileSync(
      manager,
      `import { writeFileSync } from "node:fs";\nwriteFileSync(${JSON.stringify(pidFile)}, String(process.pid));\nsetTimeout(() => {}, 300_000);\n`,
    );
    writeFileSync(
      join(p.root, "program.json"),
      JSON.stringify({
        name: "survivor",
        manager: { launcher: "command", command: [process.execPath, manager, "{prompt}"] },
      }),
    );
    const s = standIns();
    const installed = sheepdog(["install", scheduler, "--program", p.root], {
      env: { ...p.env, HOME: home, XDG_CONFIG_HOME: "", PATH: `${s.bin}:${process.env.PATH}` },
    });
    expect(installed.code, installed.stderr).toBe(0);
    const unit = unitCommand(scheduler, home, "survivor");

    // setsid: the tick leads its own session and process group, as launchd and systemd run it;
    // its environment is only what the unit gives it (plus HOME, which both schedulers set)
    const tick = spawn("setsid", unit.argv, {
      env: { ...unit.env, HOME: home },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    tick.stdout.on("data", (d) => {
      output += d;
    });
    tick.stderr.on("data", (d) => {
      output += d;
    });
    const tickPid = tick.pid as number;
    const code = await new Promise<number | null>((done) => tick.on("close", done));
    expect(code, output).toBe(0);

    const managerPid = await waitFor(
      "the manager's pid file",
      () => (existsSync(pidFile) && Number(readFileSync(pidFile, "utf8"))) || null,
      10_000,
      50,
    );
    started.push(managerPid);
    expect(alive(managerPid)).toBe(true);
    // the manager left the tick's process group (the command launcher starts it in its own session)
    expect(groupOf(managerPid).pgid).not.toBe(tickPid);

    // what the scheduler would do after the tick's exit without our settings
    try {
      process.kill(-tickPid, "SIGKILL");
    } catch (err) {
      // ESRCH: nothing is left in the tick's group, which is just what we want
      expect((err as NodeJS.ErrnoException).code).toBe("ESRCH");
    }
    // The kill has landed once nothing of the tick's group runs: then the manager must.
    await waitFor(
      "the tick's process group to be empty",
      () => groupMembers(tickPid).length === 0,
      10_000,
      20,
    );
    expect(alive(managerPid)).toBe(true);
    expect(readFileSync(join(p.stateDir, "journal.jsonl"), "utf8")).toContain('"manager_started"');
  },
);

it.skipIf(process.platform !== "linux")(
  "control: a child left in the tick's process group dies by the same kill",
  async () => {
    // the same method against a "tick" that starts its child without a session of its own:
    // proves the group kill above would have caught a manager that did not get out
    const dir = tempProgram("control").root;
    const pidFile = join(dir, "child.pid");
    const fakeTick = join(dir, "fake-tick.mjs");
    writeFileSync(
      fakeTick,
      [
        'import { spawn } from "node:child_process";',
        'import { writeFileSync } from "node:fs";',
        `const c = spawn(process.execPath, ["-e", "setTimeout(() => {}, 300000)"], { stdio: "ignore" });`,
        `writeFileSync(${JSON.stringify(pidFile)}, String(c.pid));`,
        "c.unref();",
      ].join("\n"),
    );
    const tick = spawn("setsid", [process.execPath, fakeTick], { stdio: "ignore" });
    const tickPid = tick.pid as number;
    expect(await new Promise((done) => tick.on("close", done))).toBe(0);
    const childPid = Number(readFileSync(pidFile, "utf8"));
    started.push(childPid);
    expect(alive(childPid)).toBe(true);
    expect(groupOf(childPid).pgid).toBe(tickPid);
    process.kill(-tickPid, "SIGKILL");
    await waitFor("the child to die", () => !alive(childPid), 10_000, 50);
  },
);
