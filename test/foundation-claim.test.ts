import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { sheepdog, tempProgram } from "./helpers/cli.js";
import { journalLines, killAll, procState, raceAt, track, waitFor } from "./helpers/foundation.js";

/** Light stand-ins for managers: real, distinct, live processes. */
function managers(n: number): ChildProcess[] {
  return Array.from({ length: n }, () =>
    track(spawn("sleep", ["600"], { stdio: "ignore", detached: false })),
  );
}

function holderPid(stateDir: string): number {
  return JSON.parse(readFileSync(join(stateDir, "claim", "holder.json"), "utf8")).pid;
}

describe("claim acquire under contention", () => {
  let racers: ChildProcess[];
  beforeAll(() => {
    racers = managers(40);
  });
  afterAll(killAll);

  // Every round holds all 40 acquirers at the step just before the claim's rename and lets them
  // go at once (raceAt), so each round is a true 40-way race on the rename itself, not 40
  // processes starting one after another; 4 such rounds are a harder test than 20 without it.
  it("40 acquirers released together at the rename: exactly one wins (exit 0), 39 are refused (exit 3); 4 rounds", async () => {
    let p = tempProgram("race");
    for (let round = 0; round < 4; round++) {
      // Even rounds start from a fresh program, odd rounds from a just-released claim.
      if (round % 2 === 0) p = tempProgram("race");
      const results = await raceAt(
        "claim.before-rename",
        racers.map((r) => ["claim", "acquire", "--pid", String(r.pid)]),
        p.env,
      );
      const codes = results.map((r) => r.code);
      const winners = codes.filter((c) => c === 0).length;
      const refused = codes.filter((c) => c === 3).length;
      expect(
        { round, winners, refused },
        results
          .filter((r) => r.code !== 3)
          .map((r) => r.stderr)
          .join("\n"),
      ).toEqual({ round, winners: 1, refused: 39 });
      const winner = racers[codes.indexOf(0)] as ChildProcess;
      expect(holderPid(p.stateDir)).toBe(winner.pid);
      for (const r of results.filter((x) => x.code === 3)) {
        expect(r.stderr).toMatch(new RegExp(`claim held by pid ${winner.pid} on .* \\(alive\\)`));
      }
      // A claim appears whole: no temp directories are left behind.
      const leftovers = readdirSync(p.stateDir).filter((n) => n.startsWith(".claim"));
      expect(leftovers).toEqual([]);
      const claimed = journalLines(p.stateDir).filter((e) => e.type === "claimed");
      expect(claimed).toHaveLength(round % 2 === 0 ? 1 : 2);
      expect(claimed.at(-1)?.pid).toBe(winner.pid);
      if (round % 2 === 0) {
        const rel = sheepdog(["claim", "release", "--pid", String(winner.pid)], { env: p.env });
        expect(rel.code, rel.stderr).toBe(0);
        expect(existsSync(join(p.stateDir, "claim"))).toBe(false);
      }
    }
  }, 600_000);

  it("20 --break-stale acquirers released together at the break: one breaks and wins; 3 rounds", async () => {
    const breakers = racers.slice(0, 20);
    for (let round = 0; round < 3; round++) {
      const p = tempProgram("breakers");
      // A holder that was alive when it claimed and is now gone.
      const live = managers(1)[0] as ChildProcess;
      expect(sheepdog(["claim", "acquire", "--pid", String(live.pid)], { env: p.env }).code).toBe(
        0,
      );
      live.kill("SIGKILL");
      await waitFor("the holder to die", () => procState(live.pid as number) === null);

      const results = await raceAt(
        "claim.break.before-mutex",
        breakers.map((r) => ["claim", "acquire", "--break-stale", "--pid", String(r.pid)]),
        p.env,
      );
      const codes = results.map((r) => r.code);
      expect(
        {
          round,
          winners: codes.filter((c) => c === 0).length,
          refused: codes.filter((c) => c === 3).length,
        },
        results
          .filter((r) => r.code !== 3)
          .map((r) => r.stderr)
          .join("\n"),
      ).toEqual({ round, winners: 1, refused: 19 });
      const winner = breakers[codes.indexOf(0)] as ChildProcess;
      expect(holderPid(p.stateDir)).toBe(winner.pid);
      const broken = journalLines(p.stateDir).filter((e) => e.type === "claim_broken");
      expect(broken).toHaveLength(1);
      expect(broken[0]).toMatchObject({ pid: live.pid, holder_state: "dead" });
    }
  }, 300_000);
});

describe("claim show, acquire and release", () => {
  afterEach(killAll);

  it("show --json: not held, then held by a live holder", () => {
    const p = tempProgram("show");
    const [m] = managers(1) as [ChildProcess];
    const empty = sheepdog(["claim", "show", "--json"], { env: p.env });
    expect(empty.code, empty.stderr).toBe(0);
    expect(JSON.parse(empty.stdout)).toEqual({
      held: false,
      holder: null,
      alive: null,
      foreign: false,
    });
    // show never creates state.
    expect(existsSync(p.stateDir)).toBe(false);

    const got = sheepdog(["claim", "acquire", "--pid", String(m.pid), "--json"], { env: p.env });
    expect(got.code, got.stderr).toBe(0);
    expect(JSON.parse(got.stdout)).toMatchObject({ acquired: true, holder: { pid: m.pid } });
    const shown = JSON.parse(sheepdog(["claim", "show", "--json"], { env: p.env }).stdout);
    expect(Object.keys(shown).sort()).toEqual(["alive", "foreign", "held", "holder"]);
    expect(shown).toMatchObject({ held: true, alive: true, foreign: false });
    expect(Object.keys(shown.holder).sort()).toEqual(
      ["claimed_at", "hostname", "machine_id", "pid", "start_time"].sort(),
    );
    expect(shown.holder).toMatchObject({ pid: m.pid, hostname: hostname() });
    expect(shown.holder.claimed_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(typeof shown.holder.start_time).toBe("string");

    const text = sheepdog(["claim", "show"], { env: p.env });
    expect(text.stdout).toMatch(
      new RegExp(`^show: held by pid ${m.pid} on ${hostname()}, claimed \\d+s ago \\(alive\\)\\n$`),
    );
  });

  it("acquire on a live holder's claim is refused with the holder's pid, host and age; --break-stale does not help", () => {
    const p = tempProgram("held");
    const [a, b] = managers(2) as [ChildProcess, ChildProcess];
    expect(sheepdog(["claim", "acquire", "--pid", String(a.pid)], { env: p.env }).code).toBe(0);
    const before = readFileSync(join(p.stateDir, "claim", "holder.json"), "utf8");
    for (const extra of [[], ["--break-stale"]]) {
      const r = sheepdog(["claim", "acquire", "--pid", String(b.pid), ...extra], { env: p.env });
      expect(r.code).toBe(3);
      expect(r.stderr).toMatch(
        new RegExp(
          `held: claim held by pid ${a.pid} on ${hostname()}, claimed \\d+s ago \\(alive\\)`,
        ),
      );
    }
    expect(readFileSync(join(p.stateDir, "claim", "holder.json"), "utf8")).toBe(before);
    expect(journalLines(p.stateDir).filter((e) => e.type === "claim_broken")).toEqual([]);
    // The holder acquiring again is not an error.
    const again = sheepdog(["claim", "acquire", "--pid", String(a.pid)], { env: p.env });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(/already held by this manager/);
  });

  it("release: only by the holder, or by a person with --force --note", () => {
    const p = tempProgram("rel");
    const [a, b] = managers(2) as [ChildProcess, ChildProcess];
    const notHeld = sheepdog(["claim", "release", "--pid", String(a.pid)], { env: p.env });
    expect(notHeld.code).toBe(3);
    expect(notHeld.stderr).toMatch(/not held; nothing to release/);

    expect(sheepdog(["claim", "acquire", "--pid", String(a.pid)], { env: p.env }).code).toBe(0);
    const other = sheepdog(["claim", "release", "--pid", String(b.pid)], { env: p.env });
    expect(other.code).toBe(3);
    expect(other.stderr).toMatch(new RegExp(`pid ${b.pid} is not the holder .*--force --note`));
    expect(holderPid(p.stateDir)).toBe(a.pid);

    for (const args of [["--force"], ["--force", "--note", "  "], ["--note", "why"]]) {
      const r = sheepdog(["claim", "release", ...args], { env: p.env });
      expect(r.code, args.join(" ")).toBe(2);
      expect(r.stderr).toMatch(/--note/);
      expect(holderPid(p.stateDir)).toBe(a.pid);
    }

    const mine = sheepdog(["claim", "release", "--pid", String(a.pid)], { env: p.env });
    expect(mine.code, mine.stderr).toBe(0);
    expect(existsSync(join(p.stateDir, "claim"))).toBe(false);
    expect(journalLines(p.stateDir).at(-1)).toMatchObject({ type: "released", pid: a.pid });

    expect(sheepdog(["claim", "acquire", "--pid", String(b.pid)], { env: p.env }).code).toBe(0);
    const forced = sheepdog(["claim", "release", "--force", "--note", "wedged since noon"], {
      env: p.env,
    });
    expect(forced.code, forced.stderr).toBe(0);
    expect(forced.stdout).toMatch(new RegExp(`claim removed by force \\(held by pid ${b.pid}`));
    expect(existsSync(join(p.stateDir, "claim"))).toBe(false);
    expect(journalLines(p.stateDir).at(-1)).toMatchObject({
      type: "released",
      forced: true,
      note: "wedged since noon",
      pid: b.pid,
    });
  });

  it("bad usage is exit 2", () => {
    const p = tempProgram("usage");
    for (const args of [
      ["claim"],
      ["claim", "grab"],
      ["claim", "show", "extra"],
      ["claim", "acquire", "--pid", "abc"],
      ["claim", "acquire", "--pid", "0"],
      ["claim", "show", "--bogus"],
    ]) {
      const r = sheepdog(args, { env: p.env });
      expect(r.code, args.join(" ")).toBe(2);
      expect(r.stderr).toMatch(/^sheepdog: /);
    }
  });
});
