// Simulated hosts on one machine, for the multi-host lease tests. Each host is a private mount
// namespace in which a file of its own is bound over /etc/machine-id, so the product (which has no
// identity override) really reads a different machine id there; everything else (the disk, /proc,
// the network, pids) is shared, as it is between the hosts and a common git remote. A long-lived
// anchor process keeps the namespace; `nsenter -m` runs programs in it. Killing every process in
// the namespace is the host dying: its ticks stop and its manager dies.
import { type ChildProcess, type StdioOptions, spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import { join, resolve } from "node:path";
import { runInThisContext } from "node:vm";
import { MessageChannel, receiveMessageOnPort, Worker } from "node:worker_threads";
import { sleepSync } from "../../src/util/jsonl.js";
import type { RunResult } from "./cli.js";
import { tempDir } from "./cli.js";

export interface RunOptions {
  /** Merged over process.env. */
  env?: NodeJS.ProcessEnv;
  /** Default: this process's cwd (nsenter would otherwise start the program in /). */
  cwd?: string;
  input?: string;
  /** Default 120 s; the program is killed after it. */
  timeoutMs?: number;
}

export interface Host {
  name: string;
  /** The 32 hex digits of this host's /etc/machine-id (no newline). */
  machineId: string;
  /** The anchor: a process inside the namespace, alive until kill(). */
  pid: number;
  run(argv: string[], opts?: RunOptions): RunResult;
  runAsync(argv: string[], opts?: RunOptions): Promise<RunResult>;
  /** A background process inside the namespace (own process group; stdio ignored by default). */
  spawnDetached(
    argv: string[],
    opts?: { env?: NodeJS.ProcessEnv; cwd?: string; stdio?: StdioOptions },
  ): ChildProcess;
  /** SIGKILLs every process in the namespace, the anchor last, and waits until they are gone. */
  kill(): void;
  stop(): void;
}

const SELF_NS = () => fs.readlinkSync("/proc/self/ns/mnt");
const nsOf = (pid: number | string): string | null => {
  try {
    return fs.readlinkSync(`/proc/${pid}/ns/mnt`);
  } catch {
    return null; // gone, or a zombie (a zombie has no namespaces)
  }
};

let available: { ok: true } | { ok: false; why: string } | undefined;

/** Whether hosts can be simulated here (tried once: a bind over /etc/machine-id in a namespace). */
export function namespacesAvailable(): { ok: true } | { ok: false; why: string } {
  available ??= probe();
  return available;
}

function probe(): { ok: true } | { ok: false; why: string } {
  if (process.platform !== "linux") return { ok: false, why: "not Linux" };
  if (process.getuid?.() !== 0) return { ok: false, why: "a mount namespace needs root" };
  for (const tool of ["unshare", "nsenter"])
    if (spawnSync("sh", ["-c", `command -v ${tool}`], { stdio: "ignore" }).status !== 0)
      return { ok: false, why: `${tool} is not installed` };
  if (!fs.existsSync("/etc/machine-id"))
    return { ok: false, why: "no /etc/machine-id to bind over" };
  const dir = tempDir("sheepdog-ns-probe-");
  const file = join(dir, "machine-id");
  const id = randomBytes(16).toString("hex");
  fs.writeFileSync(file, `${id}\n`);
  const r = spawnSync("unshare", bindThenExec("probe", file, "probe", ["cat", "/etc/machine-id"]), {
    encoding: "utf8",
    timeout: 10_000,
  });
  fs.rmSync(dir, { recursive: true, force: true });
  if (r.stdout?.trim() !== id)
    return {
      ok: false,
      why: `unshare --mount with a bind over /etc/machine-id failed: ${(r.stderr || r.error?.message || `exit ${r.status}`).trim()}`,
    };
  return { ok: true };
}

// unshare's arguments: in a new mount namespace, bind `file` over /etc/machine-id, and in a
// new UTS namespace name the host `hostname` (so leases and reasons name each host), then exec
// `command`. unshare execs sh and sh execs the command, so the pid unshare was started as is the
// one in the namespace throughout (briefly with the old id, before the mount).
const bindThenExec = (label: string, file: string, hostname: string, command: string[]) => [
  ...["--mount", "--uts", "--propagation", "private", "--", "sh", "-c"],
  'mount --bind "$1" /etc/machine-id || exit 1; hostname "$2" || exit 1; shift 2; exec "$@"',
  label,
  file,
  hostname,
  ...command,
];

const hosts = new Set<Host>();
let exitHook = false;

/**
 * Starts a host whose machine id is written to `dir/machine-id`; returns once the bind is seen.
 * `machineId` brings a host that was killed back as the same machine (a reboot); default new.
 */
export function startHost(
  name: string,
  dir: string,
  machineId = randomBytes(16).toString("hex"),
): Host {
  const avail = namespacesAvailable();
  if (!avail.ok) throw new Error(`cannot simulate hosts: ${avail.why}`);
  fs.mkdirSync(dir, { recursive: true });
  const idFile = join(dir, "machine-id");
  fs.rmSync(idFile, { force: true });
  fs.writeFileSync(idFile, `${machineId}\n`, { mode: 0o444 });
  // The anchor reads a pipe from this process (`cat`): when this process dies, even by SIGKILL,
  // the pipe closes and the anchor ends, so a crashed test run leaves no namespace behind.
  const errFile = join(dir, "anchor.err");
  const err = fs.openSync(errFile, "w");
  const anchor = spawn("unshare", bindThenExec(`host-${name}`, idFile, name, ["cat"]), {
    stdio: ["pipe", "ignore", err],
    detached: true,
  });
  fs.closeSync(err);
  anchor.on("error", () => {}); // seen below: the pid never enters a namespace
  anchor.unref();
  (anchor.stdin as unknown as { unref?: () => void }).unref?.();
  const pid = anchor.pid;
  if (pid === undefined) throw new Error(`host ${name}: unshare did not start`);

  // The namespace is ready when the anchor is in another namespace and sees the new id there
  // (between unshare() and the mount it is in the new namespace with the old id).
  const self = SELF_NS();
  const end = Date.now() + 10_000;
  let ns: string | null = null;
  for (;;) {
    ns = nsOf(pid);
    if (ns && ns !== self) {
      const r = spawnSync("nsenter", ["-t", String(pid), "-m", "--", "cat", "/etc/machine-id"], {
        encoding: "utf8",
      });
      if (r.stdout?.trim() === machineId) break;
    }
    if (ns === null || Date.now() > end) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {}
      const why = fs.readFileSync(errFile, "utf8").trim() || "timed out";
      throw new Error(`host ${name}: the namespace did not come up: ${why}`);
    }
    sleepSync(5);
  }
  // Held open, the namespace file keeps the namespace (and so its inode number, which the
  // kernel reuses once a namespace is freed) for as long as this host exists.
  const nsFd = fs.openSync(`/proc/${pid}/ns/mnt`, "r");
  const mntNs = ns;
  let dead = false;

  const nsArgs = (argv: string[], cwd?: string) => [
    "-t",
    String(pid),
    "-m",
    "-u",
    // Entering a mount namespace moves the cwd to its root; --wd is opened before entering.
    `--wd=${resolve(cwd ?? process.cwd())}`,
    "--",
    ...argv,
  ];
  const members = () =>
    fs
      .readdirSync("/proc")
      .filter((p) => /^\d+$/.test(p) && nsOf(p) === mntNs)
      .map(Number);

  const host: Host = {
    name,
    machineId,
    pid,
    run(argv, opts = {}) {
      const r = spawnSync("nsenter", nsArgs(argv, opts.cwd), {
        env: { ...process.env, ...opts.env },
        input: opts.input ?? "",
        encoding: "utf8",
        timeout: opts.timeoutMs ?? 120_000,
        killSignal: "SIGKILL",
        maxBuffer: 64 * 1024 * 1024,
      });
      return { code: r.status ?? -1, stdout: r.stdout ?? "", stderr: r.stderr ?? "" };
    },
    runAsync(argv, opts = {}) {
      return new Promise((done) => {
        const child = spawn("nsenter", nsArgs(argv, opts.cwd), {
          env: { ...process.env, ...opts.env },
          stdio: ["pipe", "pipe", "pipe"],
        });
        let stdout = "";
        let stderr = "";
        child.stdout.on("data", (d) => {
          stdout += d;
        });
        child.stderr.on("data", (d) => {
          stderr += d;
        });
        const timer = setTimeout(() => child.kill("SIGKILL"), opts.timeoutMs ?? 120_000);
        child.on("error", (e) => {
          stderr += String(e);
        });
        child.on("close", (code) => {
          clearTimeout(timer);
          done({ code: code ?? -1, stdout, stderr });
        });
        child.stdin.on("error", () => {}); // a program that exits without reading its input
        child.stdin.end(opts.input ?? "");
      });
    },
    spawnDetached(argv, opts = {}) {
      return spawn("nsenter", nsArgs(argv, opts.cwd), {
        env: { ...process.env, ...opts.env },
        stdio: opts.stdio ?? "ignore",
        detached: true,
      });
    },
    kill() {
      if (dead) return;
      dead = true;
      hosts.delete(host);
      // Rounds, since a process may fork while the others die; the anchor goes last.
      const end = Date.now() + 10_000;
      let left = members();
      while (left.length > 0 && Date.now() < end) {
        const others = left.filter((p) => p !== pid);
        for (const p of others.length > 0 ? others : [pid])
          try {
            process.kill(p, "SIGKILL");
          } catch {}
        sleepSync(5);
        left = members();
      }
      fs.closeSync(nsFd);
      if (left.length > 0) throw new Error(`host ${name}: still running after SIGKILL: ${left}`);
    },
    stop: () => host.kill(),
  };
  hosts.add(host);
  if (!exitHook) {
    exitHook = true;
    process.on("exit", () => {
      try {
        stopAllHosts();
      } catch {}
    });
  }
  return host;
}

/** Kills every host still running (for afterEach). */
export function stopAllHosts(): void {
  const failures: unknown[] = [];
  for (const h of [...hosts])
    try {
      h.kill();
    } catch (e) {
      failures.push(e);
    }
  if (failures.length > 0) throw failures[0];
}

// Plain JavaScript so the sampler thread below runs the very same code as census(). A process
// counts when its argv or its environment holds the marker (so does every child that inherits
// that environment), it is not a zombie, and its parent does not count (a family is one). Reads into one buffer, and the state only of a
// match: a census of ~80 processes takes ~2 ms, not the ~6 of readFileSync on three files each.
const CENSUS_JS = `(() => {
  const buf = Buffer.alloc(1 << 21);
  const read = (fs, path) => {
    let fd;
    try {
      fd = fs.openSync(path, "r");
      let n = 0;
      for (let r; (r = fs.readSync(fd, buf, n, buf.length - n, null)) > 0; ) n += r;
      return buf.subarray(0, n);
    } catch {
      return null;
    } finally {
      if (fd !== undefined) fs.closeSync(fd);
    }
  };
  return (fs, marker, self) => {
    const found = [];
    for (const name of fs.readdirSync("/proc")) {
      if (!/^[0-9]+$/.test(name) || Number(name) === self) continue;
      const dir = "/proc/" + name + "/";
      if (!read(fs, dir + "cmdline")?.includes(marker) && !read(fs, dir + "environ")?.includes(marker))
        continue;
      const stat = read(fs, dir + "stat")?.toString("latin1");
      const rest = stat?.slice(stat.lastIndexOf(")") + 2).split(" ");
      const state = rest?.[0];
      if (state !== undefined && state !== "Z" && state !== "X")
        found.push({ pid: Number(name), ppid: Number(rest[1]) });
    }
    // A marked process's own child (between its fork and its exec it still shows the parent's
    // argv) is that process, not a second one: only the topmost of a family counts.
    const pids = new Set(found.map((p) => p.pid));
    return found.filter((p) => !pids.has(p.ppid)).map((p) => p.pid);
  };
})()`;
const censusWith = runInThisContext(CENSUS_JS) as (
  f: typeof fs,
  marker: string,
  self: number,
) => number[];

/** Pids of live, non-zombie processes whose argv or environment contains `marker`. */
export function census(marker: string): number[] {
  return censusWith(fs, marker, process.pid);
}

export interface InvariantReport {
  /** The most marked processes seen at once. */
  max: number;
  /** Every sample that saw more than one. `at`: Date.now() of the sample. */
  violations: Array<{ at: number; pids: number[] }>;
  /** How many samples were taken. */
  samples: number;
}

// The sampler runs on a worker thread: a setInterval here would not fire while a test blocks in
// spawnSync (host.run, sheepdog()), which is exactly when two managers may overlap.
const SAMPLER_JS = `
const fs = require("node:fs");
const { workerData } = require("node:worker_threads");
const census = ${CENSUS_JS};
const { marker, self, everyMs, port, ready } = workerData;
const sample = () => port.postMessage({ at: Date.now(), pids: census(fs, marker, self) });
sample();
Atomics.store(ready, 0, 1);
Atomics.notify(ready, 0);
setInterval(sample, everyMs);
`;

/** Samples census(marker) every `everyMs` until stop(); sampling has begun when this returns. */
export function watchInvariant(marker: string, everyMs = 25): { stop(): InvariantReport } {
  const { port1, port2 } = new MessageChannel();
  const ready = new Int32Array(new SharedArrayBuffer(4));
  const worker = new Worker(SAMPLER_JS, {
    eval: true,
    workerData: { marker, self: process.pid, everyMs, port: port2, ready },
    transferList: [port2],
  });
  let failed: Error | undefined;
  worker.on("error", (e) => {
    failed = e;
  });
  worker.unref();
  if (Atomics.wait(ready, 0, 0, 10_000) === "timed-out")
    throw new Error(`watchInvariant(${marker}): the sampler did not start`);
  return {
    stop() {
      void worker.terminate();
      if (failed) throw failed;
      const report: InvariantReport = { max: 0, violations: [], samples: 0 };
      for (let m = receiveMessageOnPort(port1); m; m = receiveMessageOnPort(port1)) {
        const s = m.message as { at: number; pids: number[] };
        report.samples++;
        report.max = Math.max(report.max, s.pids.length);
        if (s.pids.length > 1) report.violations.push(s);
      }
      port1.close();
      return report;
    },
  };
}
