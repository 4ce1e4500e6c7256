// One program staged on several simulated hosts (helpers/hosts.ts) against one remote over git's
// smart HTTP (helpers/git-http.ts): what lease-hosts.test.ts and the two-host soak share. Each
// host has its own $SHEEPDOG_HOME, state folder, copy of the program and clone of the ledger,
// its own clock offset (the clock-step hook), and ticks in a loop as its timer would.

import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { CLI, tempDir } from "./cli.js";
import { type GitHttp, startGitHttp } from "./git-http.js";
import { census, type Host, type InvariantReport, startHost, watchInvariant } from "./hosts.js";
import { bareRemote, gitEnv, gitOut, workRepo } from "./manager-side.js";
import { waitFor } from "./poll.js";
import { type Event, events, FAKE_MANAGER, type TickProgram } from "./watchdog.js";

export const REF = "refs/sheepdog/lease/catalog";

export interface LeaseTimes {
  ttlMs: number;
  marginMs: number;
  intervalMs: number;
  /** More of program.json's `watchdog` (the soak lifts the crash-loop guard). */
  watchdog?: Record<string, unknown>;
}

export interface SimHost {
  name: string;
  /** The host now (a reboot makes a new one, the same machine). */
  host: Host;
  stateDir: string;
  env: NodeJS.ProcessEnv;
  reports: TickProgram[];
  tick(): Promise<TickProgram>;
  /** Ticks every interval, as its timer would, until stopped. */
  start(): void;
  stop(): Promise<void>;
  /** Its ticks stop and every process on it dies (a power cut). */
  kill(): Promise<void>;
  /** Back as the same machine, ticking again. */
  boot(): void;
  readonly up: boolean;
  journal(type?: string): Event[];
  /** Its clock's offset (ms), through the clock-step hook. */
  setSkew(ms: number): void;
}

export interface LeaseWorld {
  hosts: SimHost[];
  http: GitHttp;
  remote: string;
  genv: NodeJS.ProcessEnv;
  /** Stops the census; its report (violations: moments two managers were alive at once). */
  check(): InvariantReport;
  /** The program's live managers now, on any host (the census). */
  managers(): number[];
  /** The lease JSON on the remote now. */
  onRemote(): { machine_id: string; hostname: string; epoch: number; renewed_at: string } | null;
  close(): Promise<void>;
}

let worlds = 0;

/** The program staged on `names`; `skew` sets each host's clock offset (ms). */
export async function leaseWorld(
  names: string[],
  times: LeaseTimes,
  skew: Record<string, number> = {},
): Promise<LeaseWorld> {
  const base = tempDir("sheepdog-hosts-");
  const genv = gitEnv(base);
  const remote = bareRemote(genv);
  const http = await startGitHttp(remote);
  const marker = `--sheepdog-lease-hosts-${process.pid}-${worlds++}`;
  const hosts = names.map((name) =>
    simHost(name, join(base, name), { marker, times, genv, http, skew: skew[name] ?? 0 }),
  );
  const invariant = watchInvariant(marker);
  let report: InvariantReport | null = null;
  const check = () => {
    report ??= invariant.stop();
    return report;
  };
  return {
    hosts,
    http,
    remote,
    genv,
    check,
    managers: () => census(marker),
    onRemote: () => JSON.parse(gitOut(remote, ["log", "-1", "--format=%B", REF], genv) || "null"),
    async close() {
      for (const h of hosts) await h.stop();
      check();
      await http.close();
    },
  };
}

function simHost(
  name: string,
  dir: string,
  w: { marker: string; times: LeaseTimes; genv: NodeJS.ProcessEnv; http: GitHttp; skew: number },
): SimHost {
  const home = join(dir, "home");
  const root = join(home, "catalog");
  const first = startHost(name, dir);
  workRepo(join(root, "ledger"), w.genv, w.http.urlFor(name));
  writeFileSync(
    join(root, "program.json"),
    JSON.stringify({
      name: "catalog",
      manager: {
        launcher: "command",
        // The marker in argv alone: the census counts the manager, not the CLI it runs.
        command: [process.execPath, FAKE_MANAGER, "--save-every", "30", w.marker, "{prompt}"],
        env: { SHEEPDOG_CLI: CLI },
      },
      watchdog: {
        interval: `${w.times.intervalMs / 1000}s`,
        stale_after: "1h",
        claim_grace: "1h",
        ...w.times.watchdog,
      },
      lease: {
        repo: "ledger",
        ttl: `${w.times.ttlMs / 1000}s`,
        margin: `${w.times.marginMs / 1000}s`,
      },
    }),
  );
  const clock = join(dir, "clock-step");
  writeFileSync(clock, String(w.skew));
  const env = {
    ...w.genv,
    SHEEPDOG_HOME: home,
    SHEEPDOG_STATE_DIR: join(home, ".state"),
    SHEEPDOG_PROGRAM: root,
    SHEEPDOG_CLOCK_FILE: clock,
    SHEEPDOG_GIT_TIMEOUT_MS: "5000",
  };
  const stateDir = join(root, ".sheepdog");
  const reports: TickProgram[] = [];
  let running: Promise<void> | null = null;
  let on = false;
  let up = true;
  const sim: SimHost = {
    name,
    host: first,
    stateDir,
    env,
    reports,
    get up() {
      return up;
    },
    async tick() {
      const r = await sim.host.runAsync([process.execPath, CLI, "tick", "--json"], { env });
      if (r.code !== 0) throw new Error(`${name}: tick exited ${r.code}: ${r.stderr}`);
      const report = (JSON.parse(r.stdout) as { programs: TickProgram[] })
        .programs[0] as TickProgram;
      reports.push(report);
      return report;
    },
    start() {
      if (on) return;
      on = true;
      running = (async () => {
        while (on) {
          await sim.tick().catch(() => {}); // a host being killed fails its last tick
          if (on) await sleep(w.times.intervalMs);
        }
      })();
    },
    async stop() {
      on = false;
      await running;
    },
    async kill() {
      on = false;
      up = false;
      sim.host.kill();
      await running;
    },
    boot() {
      sim.host = startHost(name, dir, sim.host.machineId);
      up = true;
      sim.start();
    },
    journal: (type) => events(stateDir).filter((e) => !type || e.type === type),
    setSkew: (ms) => writeFileSync(clock, String(ms)),
  };
  return sim;
}

/** waitFor with the time a lease world needs (ticks under load take seconds). */
export const until = <T>(what: string, probe: () => T | null | undefined | false, ms = 45_000) =>
  waitFor(what, probe, ms);
