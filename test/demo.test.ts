import { readFileSync, rmSync } from "node:fs";
import { dirname } from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { livenessOf, machineId } from "../src/process/identity.js";
import { sheepdog } from "./helpers/cli.js";

// `npm run demo` is the README's first command: it must keep working, end to end.
describe("sheepdog demo", () => {
  it("walks every scenario with real ticks and leaves no manager running (--keep: its folder stays to read)", () => {
    const r = sheepdog(["demo", "--keep"]);
    expect(r.code, r.stderr).toBe(0);
    const decisions = [...r.stdout.matchAll(/tick → (\S+)/g)].map((m) => m[1]);
    for (const d of [
      "start",
      "ok",
      "start_after_hand_over",
      "restart_dead",
      "restart_stuck",
      "stand_down",
      "hold",
    ]) {
      expect(decisions).toContain(d);
    }
    // In that order: nothing stands down before the stuck manager was replaced.
    expect(decisions.indexOf("start_after_hand_over")).toBeLessThan(
      decisions.indexOf("restart_stuck"),
    );
    expect(decisions.indexOf("restart_stuck")).toBeLessThan(decisions.indexOf("stand_down"));
    // scene 8: the same kill and hand-over under `sheepdog watch`, with no tick run by hand
    expect(r.stdout).toMatch(/watch: replaced in \d+\.\ds: manager pid \d+ claimed/);
    expect(r.stdout).toMatch(/watch: successor started in \d+\.\ds/);
    expect(r.stdout).toMatch(/watch log: demo {2}restart_dead /);
    expect(r.stdout).toMatch(/watch log: demo {2}start_after_hand_over /);
    expect(r.stdout).toContain("the watcher stopped cleanly (exit 0)");
    const journal = /The journal: (\S+)/.exec(r.stdout)?.[1] as string;
    const events = readFileSync(journal, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l));
    const types = events.map((e) => e.type);
    for (const t of ["hand_over", "manager_stopped", "claim_broken", "stood_down", "cleared"]) {
      expect(types).toContain(t);
    }
    // It ends with the picture of what happened: a bar per manager the demo started.
    const report = /The report: (\S+)/.exec(r.stdout)?.[1] as string;
    onTestFinished(() =>
      rmSync(dirname(dirname(dirname(journal))), { recursive: true, force: true }),
    );
    expect(report).toMatch(/\/report-demo-\d{4}-\d{2}-\d{2}\.html$/);
    const html = readFileSync(report, "utf8");
    expect(html.match(/<g class="bar /g)).toHaveLength(
      events.filter((e) => e.type === "manager_started").length,
    );
    expect(html).toMatch(/<g class="bar ending-stuck_stopped"/);
    expect(html).toMatch(/<g class="span stood_down"/);
    const starts = events.filter((e) => e.type === "manager_started");
    expect(starts[0]).toMatchObject({ planned: true });
    // Every manager the demo's ticks started is gone.
    for (const s of starts) {
      expect(
        livenessOf({ pid: s.pid, start_time: s.start_time, machine_id: machineId() }),
      ).not.toBe("alive");
    }
  }, 120_000);
});
