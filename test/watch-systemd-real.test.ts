// The watcher installed by `install systemd --watch` under a real systemd user manager:
// it runs, replaces a killed manager, and systemd brings it back after `kill -9`.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { sheepdog } from "./helpers/cli.js";
import {
  REAL_SYSTEMD_INSTALL,
  type RealSystemd,
  realSystemdUnavailable,
  startRealSystemd,
} from "./helpers/real-systemd.js";
import { skipWithout } from "./helpers/tools.js";
import { cleanedUp, holder, isAlive, waitFor } from "./helpers/watchdog.js";

const why = realSystemdUnavailable();
const skipped = skipWithout("real systemd", why, REAL_SYSTEMD_INSTALL);
const t = cleanedUp();
let sd: RealSystemd | null = null;
afterEach(async () => {
  await sd?.stop();
  sd = null;
});

const UNIT = "sheepdog-demo.watch.service";
const unitDir = (s: RealSystemd) => join(s.home, ".config", "systemd", "user");

function mainPid(s: RealSystemd): number {
  return Number(
    /MainPID=(\d+)/.exec(s.systemctl(["show", "-p", "MainPID", UNIT]).stdout)?.[1] ?? 0,
  );
}

describe.skipIf(skipped)(
  `install systemd --watch under a real user manager${skipped ? ` (skipped: ${why})` : ""}`,
  () => {
    it("the watcher runs, replaces a killed manager, and restarts after kill -9", {
      timeout: 240_000,
    }, async () => {
      const started = await startRealSystemd();
      if ("skip" in started) throw new Error(`a real user manager did not start: ${started.skip}`);
      sd = started;
      const p = t.program();
      // the unit runs with the scratch HOME: keep the program's state dirs where the test made them
      const env = { ...p.env, ...sd.env };
      const r = sheepdog(
        ["install", "systemd", "--program", p.root, "--watch", "--interval", "1h"],
        { env },
      );
      expect(r.code, r.stderr).toBe(0);
      expect(existsSync(join(unitDir(sd), UNIT))).toBe(true);
      const s = sd;
      const first = await waitFor(
        "the watcher's first manager to claim",
        () => {
          const h = holder(p.stateDir);
          return h && isAlive(h.pid, h.start_time) ? h : null;
        },
        90_000,
      );
      const watcher = await waitFor("the watcher's MainPID", () => mainPid(s) || null, 30_000);
      process.kill(watcher, "SIGKILL");
      const again = await waitFor(
        "systemd to restart the watcher",
        () => {
          const pid = mainPid(s);
          return pid &&
            pid !== watcher &&
            s.systemctl(["is-active", UNIT]).stdout.trim() === "active"
            ? pid
            : null;
        },
        60_000,
      );
      expect(again).not.toBe(watcher);
      // the manager the first watcher started survived its watcher (KillMode=process) …
      expect(isAlive(first.pid, first.start_time)).toBe(true);
      // … and the restarted watcher replaces it when it dies
      process.kill(first.pid, "SIGKILL");
      await waitFor(
        "a new claim under the restarted watcher",
        () => {
          const h = holder(p.stateDir);
          return h && h.pid !== first.pid && isAlive(h.pid, h.start_time) ? h : null;
        },
        90_000,
      );
      const u = sheepdog(["uninstall", "systemd", "--program", p.root], { env });
      expect(u.code, u.stderr).toBe(0);
      expect(existsSync(join(unitDir(sd), UNIT))).toBe(false);
      expect(s.systemctl(["is-active", UNIT]).stdout.trim()).not.toBe("active");
    });
  },
);
