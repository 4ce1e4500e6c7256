import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { lazyChildProcess } from "../util/lazy.js";
import { sha256Hex } from "../util/sha256.js";

/** Runs a macOS tool and returns its output as text (Linux reads /proc instead). */
function execFileSync(
  file: string,
  args: string[],
  opts: { env?: NodeJS.ProcessEnv; stdio?: ("ignore" | "pipe")[]; encoding?: "utf8" } = {},
): string {
  return lazyChildProcess().execFileSync(file, args, { ...opts, encoding: "utf8" });
}

/** A process is pid + exact OS start time + machine id (DESIGN §3), never pid alone. */
export interface ProcessIdentity {
  pid: number;
  start_time: string;
  machine_id: string;
}

export interface ProcessInfo {
  pid: number;
  ppid: number;
  /** Process group id: equal to `pid` when the process leads its own group (setsid/setpgid). */
  pgid: number;
  /** One-letter state: R, S, D, T, Z, X… */
  state: string;
  /** Exact, opaque, compared as a string. */
  startTime: string;
  comm: string;
  argv: string[];
}

const isMac = process.platform === "darwin";
let bootIdCache: string | undefined;
let machineIdCache: string | undefined;

function bootId(): string {
  if (bootIdCache === undefined) {
    if (isMac) {
      // `{ sec = 1700000000, usec = 12345 } Tue Nov 14 …`
      const out = execFileSync("sysctl", ["-n", "kern.boottime"], { encoding: "utf8" });
      const m = /sec = (\d+), usec = (\d+)/.exec(out);
      bootIdCache = m ? `${m[1]}.${m[2]}` : out.trim();
    } else {
      bootIdCache = readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
    }
  }
  return bootIdCache;
}

/** A hash of the OS machine id (not the hostname: renaming a host changes nothing). */
export function machineId(): string {
  if (machineIdCache !== undefined) return machineIdCache;
  let raw = "";
  if (isMac) {
    const out = execFileSync("ioreg", ["-rd1", "-c", "IOPlatformExpertDevice"], {
      encoding: "utf8",
    });
    raw = /"IOPlatformUUID" = "([^"]+)"/.exec(out)?.[1] ?? "";
  } else {
    for (const file of ["/etc/machine-id", "/var/lib/dbus/machine-id"]) {
      try {
        raw = readFileSync(file, "utf8").trim();
        if (raw) break;
      } catch {
        // try the next
      }
    }
  }
  if (!raw) throw new Error("cannot read this machine's id (/etc/machine-id or IOPlatformUUID)");
  machineIdCache = sha256Hex(`sheepdog:${raw}`).slice(0, 16);
  return machineIdCache;
}

function linuxInfo(pid: number): ProcessInfo | null {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return null;
  }
  // The command name may hold spaces and parentheses: fields are counted after the last `)`.
  const close = stat.lastIndexOf(")");
  const comm = stat.slice(stat.indexOf("(") + 1, close);
  const fields = stat.slice(close + 2).split(" ");
  // fields[0] is field 3 (state), fields[2] field 5 (pgrp); field 22 (starttime, clock ticks
  // since boot) is fields[19].
  const state = fields[0] ?? "?";
  const ppid = Number(fields[1]);
  const pgid = Number(fields[2]);
  const ticks = fields[19] ?? "";
  let argv: string[] = [];
  try {
    argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean);
  } catch {
    // a zombie has no command line
  }
  return { pid, ppid, pgid, state, startTime: `linux:${bootId()}:${ticks}`, comm, argv };
}

function macInfo(pid: number): ProcessInfo | null {
  let out: string;
  try {
    out = execFileSync("ps", ["-o", "ppid=,pgid=,stat=,lstart=,comm=", "-p", String(pid)], {
      encoding: "utf8",
      env: { ...process.env, LC_ALL: "C", TZ: "UTC" },
      stdio: ["ignore", "pipe", "ignore"],
    });
  } catch {
    return null;
  }
  // ` 1234  1234 Ss   Tue Nov 14 09:01:02 2026     /usr/bin/claude`
  const m = /^\s*(\d+)\s+(\d+)\s+(\S+)\s+(\w{3} \w{3}\s+\d+ [\d:]+ \d{4})\s+(.*)$/.exec(
    out.trimEnd(),
  );
  if (!m) return null;
  const [, ppid, pgid, stat, lstart, comm] = m as unknown as string[];
  let argv: string[] = [];
  try {
    argv = execFileSync("ps", ["-o", "command=", "-p", String(pid)], { encoding: "utf8" })
      .trim()
      .split(/\s+/);
  } catch {
    // gone meanwhile
  }
  return {
    pid,
    ppid: Number(ppid),
    pgid: Number(pgid),
    state: (stat as string).charAt(0),
    startTime: `darwin:${bootId()}:${(lstart as string).replace(/\s+/g, " ")}`,
    comm: (comm as string).split("/").pop() ?? "",
    argv,
  };
}

/** What the OS says about a pid now, or null when there is no such process. */
export function processInfo(pid: number): ProcessInfo | null {
  if (!Number.isInteger(pid) || pid <= 0) return null;
  return isMac ? macInfo(pid) : linuxInfo(pid);
}

export function isZombie(info: ProcessInfo): boolean {
  return info.state === "Z" || info.state === "X";
}

/** The identity of a running process, or null when it is gone or a zombie. */
export function identityOf(pid: number): ProcessIdentity | null {
  const info = processInfo(pid);
  if (!info || isZombie(info)) return null;
  return { pid, start_time: info.startTime, machine_id: machineId() };
}

export type Liveness = "alive" | "dead" | "reused" | "foreign";

/**
 * Whether a recorded process is still that process: `foreign` when it was recorded on
 * another machine (never judged here), `reused` when the pid now belongs to another
 * process, `dead` when gone or a zombie.
 */
export function livenessOf(id: { pid: number; start_time: string; machine_id: string }): Liveness {
  if (id.machine_id !== machineId()) return "foreign";
  const info = processInfo(id.pid);
  if (!info || isZombie(info)) return "dead";
  return info.startTime === id.start_time ? "alive" : "reused";
}

/** One row of the process table (Linux: /proc; macOS: `ps`). */
export interface ProcessRow {
  pid: number;
  ppid: number;
  pgid: number;
  /** One-letter state: R, S, D, T, Z, X… */
  state: string;
  /** The executable's name (`bash`, `node`). */
  comm: string;
  /** The command line, arguments joined by spaces; "" unless asked for on Linux. */
  args: string;
}

/** Whether a row is a zombie or dead: not a member of anything any more. */
export const isGone = (r: ProcessRow): boolean => r.state === "Z" || r.state === "X";

function macTable(): ProcessRow[] {
  let out: string;
  try {
    // No `comm=` column: a name with spaces would shift the ones after it.
    out = execFileSync("ps", ["-A", "-o", "pid=,ppid=,pgid=,stat=,args="], {
      encoding: "utf8",
      env: { ...process.env, LC_ALL: "C" },
      stdio: ["ignore", "pipe", "ignore"],
    });
  } catch {
    return [];
  }
  return out.split("\n").flatMap((line) => {
    const m = /^\s*(\d+)\s+(\d+)\s+(\d+)\s+(\S)\S*\s*(.*)$/.exec(line);
    if (!m) return [];
    const args = m[5] ?? "";
    const comm = (args.split(" ")[0] ?? "").split("/").pop() ?? "";
    return [
      { pid: Number(m[1]), ppid: Number(m[2]), pgid: Number(m[3]), state: m[4] ?? "?", comm, args },
    ];
  });
}

function linuxTable(withArgs: boolean): ProcessRow[] {
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return [];
  }
  const rows: ProcessRow[] = [];
  for (const name of entries) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const close = stat.lastIndexOf(")");
      const fields = stat.slice(close + 2).split(" ");
      const args = withArgs
        ? readFileSync(`/proc/${name}/cmdline`, "utf8").split("\0").join(" ").trim()
        : "";
      rows.push({
        pid: Number(name),
        ppid: Number(fields[1]),
        pgid: Number(fields[2]),
        state: fields[0] ?? "?",
        comm: stat.slice(stat.indexOf("(") + 1, close),
        args,
      });
    } catch {
      // gone meanwhile
    }
  }
  return rows;
}

/** Every process's row; `args` costs a file read per process on Linux, so it is asked for. */
export function processTable(o: { args?: boolean } = {}): ProcessRow[] {
  return isMac ? macTable() : linuxTable(o.args === true);
}

/**
 * The pids of the live (not zombie) members of process group `pgid`, leader included. Used
 * only after the leader was verified by start time: while a group has members its id cannot
 * be reused (POSIX), so these are the members of the very group that was verified.
 */
export function groupMembers(pgid: number): number[] {
  if (!Number.isInteger(pgid) || pgid <= 1) return [];
  return processTable()
    .filter((r) => r.pgid === pgid && !isGone(r))
    .map((r) => r.pid);
}

/** The working directory of a live process, when this OS lets us see it. */
export function cwdOf(pid: number): string | null {
  try {
    if (!isMac) return readlinkSync(`/proc/${pid}/cwd`);
    const out = execFileSync("lsof", ["-a", "-d", "cwd", "-p", String(pid), "-Fn"], {
      encoding: "utf8",
    });
    return /^n(.+)$/m.exec(out)?.[1] ?? null;
  } catch {
    return null;
  }
}
