// Under a real systemd user manager (test/helpers/real-systemd.ts): the installed timer fires by
// itself, its tick starts a manager in a transient scope of its own, the tick's service holds
// nothing once the tick is done (no "left-over process" in the manager's log), and the manager
// outlives the service and `uninstall`, which leaves no timer stamp behind. Skips, saying why,
// where no user manager can run (not root, no unshare, cgroups not writable); in CI it fails.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { identityOf } from "../src/process/identity.js";
import { sheepdog, tempDir } from "./helpers/cli.js";
import {
  REAL_SYSTEMD_INSTALL,
  type RealSystemd,
  realSystemdUnavailable,
  startRealSystemd,
} from "./helpers/real-systemd.js";
import { skipWithout } from "./helpers/tools.js";
import { isAlive, killStarted, managerProgram, ofType, waitFor } from "./helpers/watchdog.js";

const unavailable = realSystemdUnavailable();
const skipped = skipWithout("real systemd", unavailable, REAL_SYSTEMD_INSTALL);
let sd: RealSystemd | null = null;
let skip: string | null = unavailable;

beforeAll(async () => {
  if (skipped) return;
  const started = await startRealSystemd();
  // A host that looked able and is not: outside CI said and skipped, in CI a failure.
  if ("skip" in started) {
    if (process.env.CI) throw new Error(`CI: a real systemd user manager: ${started.skip}`);
    process.stderr.write(`skipped: the real systemd tests (${started.skip})\n`);
    skip = started.skip;
  } else sd = started;
}, 60_000);

afterAll(async () => {
  await sd?.stop();
}, 60_000);

/** Polls `probe` every 500 ms until it holds or `ms` pass (a timer under load can be late). */
const until = <T>(what: string, probe: () => T | null | undefined | false, ms: number) =>
  waitFor(what, probe, ms, 500);

describe.skipIf(skipped)(
  `a real systemd user manager${skipped ? ` (skipped: ${unavailable})` : ""}`,
  () => {
    it("the timer fires by itself; the manager runs in its own scope and outlives the service and uninstall", async (ctx) => {
      if (!sd) return ctx.skip(skip ?? "no user manager");
      // No SHEEPDOG_CLI: the manager runs `sheepdog claim`/`save` by name, as a real one does, so
      // it must find sheepdog on the PATH the unit gives it (issue 18: it did not).
      const p = managerProgram(["--save-every", "1"], { interval: "1m" });
      const config = JSON.parse(readFileSync(join(p.root, "program.json"), "utf8"));
      config.manager.env = {};
      writeFileSync(join(p.root, "program.json"), JSON.stringify(config));
      const env = { ...p.env, ...sd.env };
      try {
        const inst = sheepdog(["install", "systemd", "--program", p.root], { env });
        expect(inst.code, `${inst.stdout}\n${inst.stderr}`).toBe(0);
        const service = "sheepdog-demo.service";
        expect(sd.show("sheepdog-demo.timer", "ActiveState")).toBe("active");

        // Nobody starts the service: the timer does (within a minute, plus AccuracySec).
        const [started] = await until(
          "the timer's tick to start a manager",
          () => {
            const s = ofType(p.stateDir, "manager_started");
            return s.length > 0 && s;
          },
          100_000,
        );
        const pid = started?.pid as number;
        const unit = String(started?.unit);
        expect(unit).toMatch(/^sheepdog-demo-manager-.+\.scope$/);
        expect(sd.show(unit, "ActiveState")).toBe("active");
        expect(sd.unitPids(unit)).toContain(pid);
        expect(readFileSync(`/proc/${pid}/cgroup`, "utf8")).toContain(unit);

        // The tick ends; its service's cgroup is empty, and systemd has nothing to complain about.
        await until(
          "the tick's service to finish",
          () => sd?.show(service, "ActiveState") === "inactive",
          60_000,
        );
        expect(sd.show(service, "Result")).toBe("success");
        expect(sd.unitPids(service)).toEqual([]);
        expect(isAlive(pid, String(started?.start_time))).toBe(true);
        await until("the manager to claim", () => ofType(p.stateDir, "claimed").length > 0, 30_000);
        const log = sd.journal();
        expect(log).toContain("sheepdog-demo.service");
        expect(log).not.toMatch(/left-over process|remains running after unit stopped/);

        // The timer kept its stamp (Persistent=true); uninstall removes it and stops no manager.
        const stamp = join(
          sd.home,
          ".local",
          "share",
          "systemd",
          "timers",
          "stamp-sheepdog-demo.timer",
        );
        expect(existsSync(stamp)).toBe(true);
        const un = sheepdog(["uninstall", "systemd", "--program", p.root], { env });
        expect(un.code, `${un.stdout}\n${un.stderr}`).toBe(0);
        expect(un.stdout).toContain(`removed ${stamp}`);
        expect(existsSync(stamp)).toBe(false);
        expect(sd.show("sheepdog-demo.timer", "LoadState")).toBe("not-found");
        expect(sd.show(service, "ActiveState")).toBe("inactive");
        expect(isAlive(pid, String(started?.start_time))).toBe(true);
        expect(sd.show(unit, "ActiveState")).toBe("active");
      } finally {
        killStarted(p.stateDir);
      }
    }, 180_000);

    it("a tmux server the tick had to start runs in a scope of its own, not in the tick's service", async (ctx) => {
      if (!sd) return ctx.skip(skip ?? "no user manager");
      // Our own tmux server on our own socket (never the default one), for this manager's units.
      const tmuxDir = tempDir("sheepdog-tmux-");
      const socket = `sd-real-${process.pid}`;
      const setEnv = sd.systemctl([
        "set-environment",
        `TMUX_TMPDIR=${tmuxDir}`,
        `SHEEPDOG_TMUX_SOCKET=${socket}`,
      ]);
      expect(setEnv.code, setEnv.stderr).toBe(0);
      const p = managerProgram([], {}, {}, "tmuxdemo");
      const config = JSON.parse(readFileSync(join(p.root, "program.json"), "utf8"));
      config.manager = {
        launcher: "tmux",
        env: config.manager.env,
        tmux: { command: [...config.manager.command] },
      };
      writeFileSync(join(p.root, "program.json"), JSON.stringify(config));
      const env = { ...p.env, ...sd.env };
      const tmuxEnv = { ...process.env, TMUX_TMPDIR: tmuxDir };
      let server = 0;
      let serverStart = "";
      try {
        expect(sheepdog(["install", "systemd", "--program", p.root], { env }).code).toBe(0);
        // `start` of a oneshot returns when the tick is done.
        const service = "sheepdog-tmuxdemo.service";
        const ran = sd.systemctl(["start", service]);
        expect(ran.code, ran.stderr).toBe(0);
        const [started] = ofType(p.stateDir, "manager_started");
        expect(started?.launcher).toBe("tmux");
        const unit = String(started?.unit);
        expect(unit).toMatch(/^sheepdog-tmuxdemo-tmux-.+\.scope$/);
        server = Number(
          spawnSync("tmux", ["-L", socket, "display-message", "-p", "#{pid}"], {
            env: tmuxEnv,
            encoding: "utf8",
          }).stdout.trim(),
        );
        expect(server).toBeGreaterThan(0);
        serverStart = identityOf(server)?.start_time ?? "";
        expect(sd.unitPids(unit)).toEqual(expect.arrayContaining([server, started?.pid as number]));
        expect(sd.show(service, "Result")).toBe("success");
        expect(sd.unitPids(service)).toEqual([]);
        expect(sd.journal()).not.toMatch(/left-over process|remains running after unit stopped/);
        expect(sheepdog(["uninstall", "systemd", "--program", p.root], { env }).code).toBe(0);
        expect(isAlive(started?.pid as number, String(started?.start_time))).toBe(true);
      } finally {
        killStarted(p.stateDir);
        // Our own server, on our own socket, by its exact pid and start time. It ends by itself
        // with its last window, which may be in the instant between the check and the kill.
        if (server > 0 && isAlive(server, serverStart))
          try {
            process.kill(server, "SIGTERM");
          } catch {
            // gone meanwhile (ESRCH): what was to be done is done
          }
      }
    }, 120_000);
  },
);
