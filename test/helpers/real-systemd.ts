// A real systemd user manager for end-to-end tests, as the design notes (systemd-real.md) describe: in
// a private mount namespace (a tmpfs over /run/systemd, so the host is never told it booted
// with systemd), in cgroups of its own (`sheepdog-test-<pid>-<n>`), with scratch HOME and XDG
// folders, and a journald of its own for its log. `systemctl --user` reaches it from outside
// through `$XDG_RUNTIME_DIR/systemd/private`. Everything is stopped by exact pid: the manager,
// journald, then whatever is left in its cgroups (all started under it); the cgroups removed.

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
import { holdsWithin } from "./poll.js";

const SYSTEMD = "/usr/lib/systemd/systemd";
const JOURNALD = "/usr/lib/systemd/systemd-journald";
const CGROUP = "/sys/fs/cgroup";

/** The cgroup hierarchies to make a directory in: v1 hybrid (systemd + unified) or plain v2. */
function hierarchies(): string[] {
  if (existsSync(join(CGROUP, "unified", "cgroup.procs")))
    return [join(CGROUP, "systemd"), join(CGROUP, "unified")].filter((h) =>
      existsSync(join(h, "cgroup.procs")),
    );
  if (existsSync(join(CGROUP, "cgroup.controllers"))) return [CGROUP];
  return [];
}

function onPath(tool: string): boolean {
  return spawnSync("sh", ["-c", `command -v ${tool}`], { stdio: "ignore" }).status === 0;
}

/** Why a real user manager cannot run here, or null when it can be tried. */
export function realSystemdUnavailable(): string | null {
  if (process.platform !== "linux") return "not Linux";
  if (process.getuid?.() !== 0) return "needs root (mount namespace, tmpfs, cgroup directories)";
  for (const tool of ["unshare", "nsenter", "systemctl", "systemd-run"])
    if (!onPath(tool)) return `${tool} is not installed`;
  for (const bin of [SYSTEMD, JOURNALD]) if (!existsSync(bin)) return `${bin} is not installed`;
  const roots = hierarchies();
  if (roots.length === 0) return `no cgroup hierarchy under ${CGROUP}`;
  const unwritable = roots.find((h) => !writable(h));
  if (unwritable)
    return `the cgroup hierarchy ${unwritable} is not writable here (a read-only container?)`;
  return null;
}

/** Whether a cgroup directory can be made (and removed again) under `hierarchy`. */
function writable(hierarchy: string): boolean {
  const probe = join(hierarchy, `sheepdog-probe-${process.pid}`);
  try {
    mkdirSync(probe);
    rmdirSync(probe);
    return true;
  } catch {
    return false;
  }
}

/** What a host needs for the real-systemd tests (said when they skip, and in CI when they fail). */
export const REAL_SYSTEMD_INSTALL =
  "run as root on Linux with systemd (systemctl, systemd-run), util-linux (unshare, nsenter) and a writable /sys/fs/cgroup";

const SCRIPT = `set -e
name=$1; rt=$2; home=$3
for h in $4; do mkdir -p "$h/$name"; echo $$ > "$h/$name/cgroup.procs"; done
mount -t tmpfs tmpfs /run/systemd
mkdir -p /run/systemd/system /run/systemd/journald.conf.d
printf '[Journal]\\nStorage=volatile\\nReadKMsg=no\\n' > /run/systemd/journald.conf.d/sheepdog-test.conf
mount -t tmpfs tmpfs /run/log
env -i ${JOURNALD} </dev/null >/dev/null 2>&1 &
echo $! > "$rt/journald.pid"
for i in $(seq 100); do [ -S /run/systemd/journal/socket ] && break; sleep 0.05; done
exec env -i HOME="$home" USER=root XDG_RUNTIME_DIR="$rt" XDG_CONFIG_HOME="$home/.config" \\
  XDG_DATA_HOME="$home/.local/share" XDG_STATE_HOME="$home/.local/state" \\
  PATH=/usr/local/bin:/usr/bin:/bin SYSTEMD_LOG_TARGET=journal SYSTEMD_LOG_LEVEL=info \\
  ${SYSTEMD} --user
`;

export interface RealSystemd {
  /** The user manager's pid (inside the namespace; the same pid outside). */
  pid: number;
  home: string;
  runtimeDir: string;
  /** What `systemctl --user` and `sheepdog install systemd` need to reach this manager. */
  env: Record<string, string>;
  systemctl(args: string[]): { code: number; stdout: string; stderr: string };
  /** A unit property (`systemctl --user show -p NAME --value UNIT`). */
  show(unit: string, property: string): string;
  /** The pids in a unit's cgroup (and its children), empty when it has none. */
  unitPids(unit: string): number[];
  /** The user manager's log (its own journald, read from inside the namespace). */
  journal(): string;
  stop(): Promise<void>;
}

let instances = 0;

function pidsUnder(dir: string): number[] {
  if (!existsSync(dir)) return [];
  const here = readFileSync(join(dir, "cgroup.procs"), "utf8")
    .split("\n")
    .filter(Boolean)
    .map(Number);
  const below = readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .flatMap((d) => pidsUnder(join(dir, d.name)));
  return [...here, ...below];
}

function removeTree(dir: string): void {
  if (!existsSync(dir)) return;
  for (const d of readdirSync(dir, { withFileTypes: true }))
    if (d.isDirectory()) removeTree(join(dir, d.name));
  try {
    rmdirSync(dir);
  } catch {
    // still busy: left for the host to see, never forced
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return false;
  }
}

function waitGone(pid: number, ms: number): Promise<boolean> {
  return holdsWithin(() => !alive(pid), ms);
}

/** Stops by exact pid: the manager (it stops its units), journald, then what is left in our cgroups. */
async function stopAll(pid: number, runtimeDir: string, roots: string[], name: string) {
  if (alive(pid)) {
    process.kill(pid, "SIGTERM");
    if (!(await waitGone(pid, 10_000))) process.kill(pid, "SIGKILL");
  }
  let jpid = 0;
  try {
    jpid = Number(readFileSync(join(runtimeDir, "journald.pid"), "utf8").trim());
  } catch {
    // never started
  }
  if (jpid > 0 && alive(jpid)) {
    process.kill(jpid, "SIGTERM");
    await waitGone(jpid, 5_000);
  }
  // Everything still in our cgroups was started under this manager.
  for (const root of roots)
    for (const p of pidsUnder(join(root, name))) {
      try {
        process.kill(p, "SIGKILL");
      } catch {
        // gone
      }
    }
  // A cgroup directory goes once its processes have: wait for the kills to land.
  await holdsWithin(() => roots.every((root) => pidsUnder(join(root, name)).length === 0), 5_000);
  for (const root of roots) removeTree(join(root, name));
}

function handleOf(pid: number, home: string, runtimeDir: string, roots: string[], name: string) {
  const env = {
    HOME: home,
    XDG_RUNTIME_DIR: runtimeDir,
    XDG_CONFIG_HOME: join(home, ".config"),
    XDG_DATA_HOME: join(home, ".local", "share"),
    XDG_STATE_HOME: join(home, ".local", "state"),
    DBUS_SESSION_BUS_ADDRESS: "",
  };
  const systemctl = (args: string[]) => {
    const r = spawnSync("systemctl", ["--user", ...args], {
      env: { ...process.env, ...env },
      encoding: "utf8",
      timeout: 30_000,
    });
    return { code: r.status ?? -1, stdout: r.stdout ?? "", stderr: r.stderr ?? "" };
  };
  const show = (unit: string, property: string) =>
    systemctl(["show", "-p", property, "--value", unit]).stdout.trim();
  const handle: RealSystemd = {
    pid,
    home,
    runtimeDir,
    env,
    systemctl,
    show,
    unitPids: (unit) => {
      const path = show(unit, "ControlGroup");
      return path ? pidsUnder(join(roots[roots.length - 1] as string, path)) : [];
    },
    journal: () =>
      spawnSync("nsenter", ["-t", String(pid), "-m", "journalctl", "--no-pager", "-q"], {
        encoding: "utf8",
      }).stdout ?? "",
    stop: () => stopAll(pid, runtimeDir, roots, name),
  };
  return handle;
}

/** Starts a user manager, or says why it could not (the caller skips with that reason). */
export async function startRealSystemd(): Promise<RealSystemd | { skip: string }> {
  const unavailable = realSystemdUnavailable();
  if (unavailable) return { skip: unavailable };
  const base = tempDir("sheepdog-systemd-");
  const home = join(base, "home");
  const runtimeDir = join(base, "run");
  mkdirSync(home, { recursive: true });
  mkdirSync(runtimeDir, { mode: 0o700 });
  const name = `sheepdog-test-${process.pid}-${instances++}`;
  const roots = hierarchies();
  const script = join(base, "start.sh");
  writeFileSync(script, SCRIPT, { mode: 0o700 });
  // unshare execs sh, which execs systemd: the child's pid is the manager's.
  const child: ChildProcess = spawn(
    "unshare",
    ["--mount", "--propagation", "private", "sh", script, name, runtimeDir, home, roots.join(" ")],
    { stdio: "ignore", detached: true },
  );
  child.unref();
  const handle = handleOf(child.pid as number, home, runtimeDir, roots, name);
  const up = () => handle.systemctl(["is-active", "default.target"]).stdout.trim() === "active";
  if ((await holdsWithin(() => up() || !alive(handle.pid), 30_000, 100)) && up()) return handle;
  await handle.stop();
  return { skip: "systemd --user did not come up in a private mount namespace here" };
}
