import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmdirSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { tempDir } from "./cli.js";
import { waitFor } from "./watchdog.js";

/**
 * A real systemd user manager for one test (see systemd-real.md in the design notes): in a
 * private mount namespace with a tmpfs over /run/systemd (never the host's), in cgroups of its
 * own named sheepdog-watch-test-<pid>, with a scratch HOME, XDG_CONFIG_HOME and 0700
 * XDG_RUNTIME_DIR. `systemctl --user` reaches it through $XDG_RUNTIME_DIR/systemd/private.
 * Everything is ended by exact pid: the manager, then whatever is left in its cgroups.
 */
export interface RealSystemd {
  /** The env every sheepdog or systemctl call of the test runs with. */
  env: NodeJS.ProcessEnv;
  home: string;
  unitDir: string;
  systemctl(...args: string[]): { status: number | null; stdout: string; stderr: string };
  stop(): Promise<void>;
}

const SYSTEMD = "/usr/lib/systemd/systemd";

/** Why a real user manager cannot run here, or null when it can. */
export function realSystemdUnavailable(): string | null {
  if (process.platform !== "linux") return "not Linux";
  if (process.getuid?.() !== 0) return "not root (a private mount namespace and cgroups need it)";
  for (const tool of ["unshare", "systemctl"])
    if (spawnSync("sh", ["-c", `command -v ${tool}`]).status !== 0) return `no ${tool} on PATH`;
  if (!existsSync(SYSTEMD)) return `no ${SYSTEMD}`;
  if (!existsSync("/run/systemd")) return "no /run/systemd to mount a tmpfs over";
  if (cgroupRoots().length === 0) return "no writable cgroup hierarchy";
  return null;
}

/** The hierarchies to make our cgroup in: the named systemd one and the unified one (v1 hybrid), or plain v2. */
function cgroupRoots(): string[] {
  const v1 = ["/sys/fs/cgroup/systemd", "/sys/fs/cgroup/unified"].filter((d) =>
    existsSync(join(d, "cgroup.procs")),
  );
  if (v1.length) return v1;
  return existsSync("/sys/fs/cgroup/cgroup.controllers") ? ["/sys/fs/cgroup"] : [];
}

function pidsIn(dir: string): number[] {
  const out: number[] = [];
  const walk = (d: string) => {
    try {
      for (const line of readFileSync(join(d, "cgroup.procs"), "utf8").split("\n"))
        if (line.trim()) out.push(Number(line));
      for (const e of readdirSync(d, { withFileTypes: true }))
        if (e.isDirectory()) walk(join(d, e.name));
    } catch {
      // gone meanwhile
    }
  };
  walk(dir);
  return out;
}

function removeTree(dir: string): void {
  try {
    for (const e of readdirSync(dir, { withFileTypes: true }))
      if (e.isDirectory()) removeTree(join(dir, e.name));
    rmdirSync(dir);
  } catch {
    // still busy or gone: nothing more to do
  }
}

export async function startRealSystemd(): Promise<RealSystemd> {
  const name = `sheepdog-watch-test-${process.pid}-${Date.now().toString(36)}`;
  const scratch = tempDir("sheepdog-systemd-");
  const home = join(scratch, "home");
  const config = join(home, ".config");
  const runtime = join(scratch, "runtime");
  mkdirSync(config, { recursive: true });
  mkdirSync(runtime, { mode: 0o700 });
  const cgroups = cgroupRoots().map((root) => join(root, name));
  const script = join(scratch, "start.sh");
  writeFileSync(
    script,
    [
      "set -e",
      ...cgroups.map((d) => `mkdir -p '${d}' && echo $$ > '${d}/cgroup.procs'`),
      "mount -t tmpfs tmpfs /run/systemd",
      "mkdir -p /run/systemd/system",
      `exec env -i PATH='${process.env.PATH}' HOME='${home}' XDG_CONFIG_HOME='${config}' XDG_RUNTIME_DIR='${runtime}' SYSTEMD_LOG_TARGET=console SYSTEMD_LOG_LEVEL=warning ${SYSTEMD} --user`,
    ].join("\n"),
  );
  const child: ChildProcess = spawn(
    "unshare",
    ["--mount", "--propagation", "private", "sh", script],
    {
      stdio: ["ignore", "ignore", "pipe"],
    },
  );
  let log = "";
  child.stderr?.on("data", (d) => {
    log += d;
  });
  const env: NodeJS.ProcessEnv = {
    HOME: home,
    XDG_CONFIG_HOME: config,
    XDG_RUNTIME_DIR: runtime,
    DBUS_SESSION_BUS_ADDRESS: "",
  };
  const systemctl = (...args: string[]) => {
    const r = spawnSync("systemctl", ["--user", ...args], {
      env: { ...process.env, ...env },
      encoding: "utf8",
      timeout: 30_000,
    });
    return { status: r.status, stdout: r.stdout ?? "", stderr: r.stderr ?? "" };
  };
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM");
      const gone = await Promise.race([
        new Promise((r) => child.once("close", () => r(true))),
        new Promise((r) => setTimeout(() => r(false), 10_000)),
      ]);
      if (!gone) child.kill("SIGKILL");
    }
    // what the manager left (KillMode=process leaves a service's children): exactly these pids
    for (const dir of cgroups)
      for (const pid of pidsIn(dir))
        try {
          process.kill(pid, "SIGKILL");
        } catch {
          // gone meanwhile
        }
    await new Promise((r) => setTimeout(r, 200));
    for (const dir of cgroups) removeTree(dir);
  };
  try {
    await waitFor(
      "the user manager to come up",
      () => {
        if (child.exitCode !== null) throw new Error(`systemd --user exited: ${log}`);
        return systemctl("is-active", "default.target").stdout.trim() === "active";
      },
      60_000,
    );
  } catch (err) {
    await stop();
    throw err;
  }
  return { env, home, unitDir: join(config, "systemd", "user"), systemctl, stop };
}
