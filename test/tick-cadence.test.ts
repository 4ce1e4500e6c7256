// The cadence rule (DESIGN §6, issue 18): a timer that ticks less often than the program's
// interval is not a sleep. Before `tick --every`, a 15-minute timer over a 5-minute program
// credited every wait as a "sleep gap", and a silent manager was restarted at 135 minutes
// instead of 45. Here, time is compressed with the clock file every sheepdog process reads.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { sheepdog } from "./helpers/cli.js";
import { cleanedUp, ofType, tick, waitFor, waitForClaimBy } from "./helpers/watchdog.js";

const { program } = cleanedUp();
const MIN = 60_000;

function slowTimer() {
  // interval 1m, stale_after 4m: the timer below runs every 5m (sharper than 15m over 5m, the
  // same shape); the manager saves once, then hangs, alive.
  const p = program(["--save-every", "1", "--hang-after", "1"], {
    interval: "1m",
    stale_after: "4m",
    claim_grace: "10m",
  });
  const clockFile = join(p.home, "clock-step");
  writeFileSync(clockFile, "0");
  const env = { ...p.env, SHEEPDOG_CLOCK_FILE: clockFile };
  const at = (ms: number) => writeFileSync(clockFile, String(ms));
  return { ...p, env, at };
}

async function hungManager(p: ReturnType<typeof slowTimer>): Promise<number> {
  expect(tick(p.env).report.decision).toBe("start");
  const pid = ofType(p.stateDir, "manager_started")[0]?.pid as number;
  await waitForClaimBy(p.stateDir, pid);
  await waitFor("its one save", () => ofType(p.stateDir, "saved").length > 0);
  return pid;
}

describe("tick --every: the cadence gaps are judged against", () => {
  it("a timer slower than the interval never slows a restart, and a hand tick between its runs agrees", async () => {
    const p = slowTimer();
    await hungManager(p);
    p.at(2.5 * MIN);
    const timer = tick(p.env, ["--every", "5m"]);
    expect(timer.report.decision).toBe("ok");
    expect(timer.report.facts?.last_tick_cadence_ms).toBe(MIN);
    // A person ticks by hand (no --every) 2.5 min after the timer: the timer's recorded cadence
    // says that wait was no sleep, so the silent manager is 5 min stale, past its 4m.
    p.at(5 * MIN);
    const byHand = tick(p.env);
    expect(byHand.report.decision).toBe("restart_stuck");
    expect(byHand.report.facts?.last_tick_cadence_ms).toBe(5 * MIN);
    expect(ofType(p.stateDir, "sleep_gap")).toEqual([]);
  });

  it("without --every the interval is the cadence: 2.5 minutes over a 1-minute program is a sleep, credited", async () => {
    const p = slowTimer();
    await hungManager(p);
    p.at(2.5 * MIN);
    expect(tick(p.env).report.decision).toBe("ok");
    p.at(5 * MIN);
    expect(tick(p.env).report.decision).toBe("ok");
    expect(ofType(p.stateDir, "sleep_gap").length).toBeGreaterThan(0);
  });

  it("refuses a zero or malformed --every with exit 2", () => {
    const p = slowTimer();
    for (const bad of ["0s", "soon"]) {
      const r = sheepdog(["tick", "--every", bad], { env: p.env });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(
        `--every: expected a positive duration such as 90s, 5m, 2h or 1d, got "${bad}"`,
      );
    }
  });
});
