// Clock steps (issue 14): the wall clock stepped back an hour or forward a day between ticks, for
// every sheepdog process of the test at once (SHEEPDOG_CLOCK_FILE, read by each CLI start: the
// ticks and the saves of the manager they started). No false restart, and no pause that never ends.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { gapsToRecord } from "../src/watchdog/rules/decide.js";
import { sheepdog } from "./helpers/cli.js";
import { startWatch } from "./helpers/watch.js";
import { cleanedUp, ofType, tick, waitFor, waitForClaimBy } from "./helpers/watchdog.js";

const { program, cleanups } = cleanedUp();
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function clocked() {
  return managerClocked(["--save-every", "1"], {
    // The defaults' proportions (5m / 45m), shortened: stale_after spans many intervals. Each
    // jump costs one interval of the heartbeat's gap credit (a tick is expected once per
    // interval), so four jumps in a row cost 40 s here: 2m leaves room for a loaded machine.
    interval: "10s",
    stale_after: "2m",
    claim_grace: "2m",
  });
}

/** A program whose processes all read one clock-step file. */
function managerClocked(flags: string[], watchdog: Record<string, string>) {
  const p = program(flags, watchdog);
  const clockFile = join(p.home, "clock-step");
  writeFileSync(clockFile, "0");
  const env = { ...p.env, SHEEPDOG_CLOCK_FILE: clockFile };
  const step = (ms: number) => writeFileSync(clockFile, String(ms));
  const saves = () => ofType(p.stateDir, "saved").length;
  return { ...p, env, step, saves };
}

/** The manager started by the first tick has claimed and saved. */
async function healthyStart(p: ReturnType<typeof clocked>): Promise<number> {
  expect(tick(p.env).report.decision).toBe("start");
  const pid = ofType(p.stateDir, "manager_started")[0]?.pid as number;
  await waitForClaimBy(p.stateDir, pid);
  await waitFor("a save", () => p.saves() > 0);
  return pid;
}

/** Ticks, and waits for a save by the manager in between: every decision must be `ok`. */
async function ticksStayOk(p: ReturnType<typeof clocked>, n: number): Promise<string[]> {
  const decisions: string[] = [];
  for (let i = 0; i < n; i++) {
    const r = tick(p.env);
    expect(r.code, r.stderr).toBe(0);
    decisions.push(r.report.decision);
    const before = p.saves();
    await waitFor("the next save", () => p.saves() > before);
  }
  return decisions;
}

describe("clock steps between ticks (all processes' clocks stepped together)", () => {
  it("back an hour, then forward a day: the healthy manager is never restarted", async () => {
    const p = clocked();
    const pid = await healthyStart(p);
    p.step(-HOUR);
    expect(await ticksStayOk(p, 3)).toEqual(["ok", "ok", "ok"]);
    p.step(DAY);
    // The first tick after the jump sees a day since the last tick and the last save: a gap, not
    // a stuck manager.
    expect(await ticksStayOk(p, 3)).toEqual(["ok", "ok", "ok"]);
    p.step(0);
    expect(await ticksStayOk(p, 2)).toEqual(["ok", "ok"]);
    expect(ofType(p.stateDir, "manager_started")).toHaveLength(1);
    expect(ofType(p.stateDir, "manager_stopped")).toHaveLength(0);
    expect(ofType(p.stateDir, "claim_broken")).toHaveLength(0);
    expect(ofType(p.stateDir, "manager_started")[0]?.pid).toBe(pid);
  });

  it("a pause ends when its time comes, whichever way the clock stepped meanwhile", async () => {
    const p = clocked();
    await healthyStart(p);
    expect(sheepdog(["pause", "--until", "2m"], { env: p.env }).code).toBe(0);
    p.step(-HOUR); // an hour back: still paused, nothing restarted
    expect(tick(p.env).report.decision).toBe("wait_pause");
    p.step(3 * 60_000); // three minutes on from the real time: the pause is over
    const over = tick(p.env);
    expect(over.report.decision).toBe("ok");
    expect(over.report.actions).toContain("pause over");
    expect(ofType(p.stateDir, "unpaused")).toHaveLength(1);

    // A pause taken under a clock a day fast ends once that clock passes it, and stays ended
    // when the clock is put right (an hour's pause does not come back as 25 hours).
    p.step(DAY);
    expect(sheepdog(["pause", "--until", "1h"], { env: p.env }).code).toBe(0);
    expect(tick(p.env).report.decision).toBe("wait_pause");
    p.step(DAY + 2 * HOUR);
    expect(tick(p.env).report.actions).toContain("pause over");
    p.step(0);
    await sleep(1500);
    const after = tick(p.env);
    expect(after.report.decision).not.toBe("wait_pause");
    expect(ofType(p.stateDir, "manager_started")).toHaveLength(1);
  });
});

describe("a clock stepped back does not slow the time rules (issue 18)", () => {
  it("a manager that goes silent before the clock steps back an hour is restarted at stale_after, not an hour later", async () => {
    const p = managerClocked(["--save-every", "1", "--hang-after", "2"], {
      interval: "2s",
      stale_after: "6s",
      claim_grace: "1h",
    });
    expect(tick(p.env).report.decision).toBe("start");
    const pid = ofType(p.stateDir, "manager_started")[0]?.pid as number;
    await waitForClaimBy(p.stateDir, pid);
    await waitFor("its two saves", () => p.saves() >= 2);
    p.step(-HOUR);
    // By wall time alone its last save is an hour in the future: "fresh" for 1h6s. Monotonic
    // time says 6 s of silence.
    const decisions: string[] = [];
    const stuck = await waitFor(
      "restart_stuck",
      () => {
        const r = tick(p.env);
        decisions.push(r.report.decision);
        return r.report.decision === "restart_stuck" ? r : null;
      },
      30_000,
    );
    expect(decisions.slice(0, -1).every((d) => d === "ok")).toBe(true);
    expect(stuck.report.reason).toMatch(/the clock was stepped back (59m|1h)\S* since: counted/);
    expect(ofType(p.stateDir, "manager_stopped")[0]).toMatchObject({ pid });
  });
});

describe("clock steps under watch (the resident watcher reads the step again each pass)", () => {
  it("back an hour, then forward a day: the watcher's passes never restart the healthy manager", async () => {
    const p = clocked();
    const pid = await healthyStart(p);
    const w = startWatch(p.env, ["--json"], cleanups);
    const passesAfterSaves = async (n: number) => {
      const from = w.passes().length;
      for (let i = 0; i < n; i++) {
        const before = p.saves();
        await waitFor("the next save", () => p.saves() > before);
      }
      await waitFor("a pass after the saves", () => w.passes().length > from);
      return w.passes().slice(from);
    };
    await passesAfterSaves(1);
    p.step(-HOUR);
    const back = await passesAfterSaves(2);
    p.step(DAY);
    const forward = await passesAfterSaves(3);
    const decisions = [...back, ...forward].flatMap((x) => x.programs.map((r) => r.decision));
    expect(new Set(decisions)).toEqual(new Set(["ok"]));
    // The passes saw the stepped clock: the last one is stamped a day ahead.
    expect(Date.parse(forward.at(-1)?.at ?? "") - Date.now()).toBeGreaterThan(DAY - HOUR);
    expect(await w.stop()).toBe(0);
    expect(ofType(p.stateDir, "manager_started")).toHaveLength(1);
    expect(ofType(p.stateDir, "manager_stopped")).toHaveLength(0);
    expect(ofType(p.stateDir, "claim_broken")).toHaveLength(0);
    expect(ofType(p.stateDir, "manager_started")[0]?.pid).toBe(pid);
  });
});

describe("gaps kept in last-tick.json", () => {
  it("a second long sleep does not drop the first while a heartbeat from before both can be judged", () => {
    const policy = { staleAfter: 45 * 60_000, claimGrace: 10 * 60_000 };
    const cadence = 300_000;
    const t = (h: number) => Date.parse("2026-11-30T00:00:00Z") + h * HOUR;
    // Saved at 0h; slept 0h10–2h; a dark wake ticked at 2h; slept again until 26h.
    const first = { from: new Date(t(1 / 6)).toISOString(), to: new Date(t(2)).toISOString() };
    const kept = gapsToRecord(first.to, [first], t(26), policy, cadence);
    expect(kept).toContainEqual(first);
    expect(kept).toHaveLength(2);
    // With no gap after it, a gap is dropped once it can no longer matter (4 × stale_after).
    expect(gapsToRecord(new Date(t(5)).toISOString(), [first], t(5.1), policy, cadence)).toEqual(
      [],
    );
  });
});
