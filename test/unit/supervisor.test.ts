// The pass supervisor (src/watchdog/pass/supervisor.ts): each pass its own signal and deadline, a
// failure mapped to its report once. Shutdown ends the process, so it is tested end to end
// (test/tick-signals.test.ts, test/watch.test.ts); here, what a pass sees and what comes back.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openProgramAt } from "../../src/config/context.js";
import { failureReport, PassOverdue, PassSupervisor } from "../../src/watchdog/pass/supervisor.js";
import { type ProgramReport, TickFailed } from "../../src/watchdog/pass/tick.js";
import { tempProgram } from "../helpers/cli.js";

const program = () => openProgramAt(tempProgram().root, { create: true });
const report = (name: string): ProgramReport => ({
  program: name,
  root: "/r",
  decision: "ok",
  reason: "fine",
  facts: null,
  actions: [],
});
const journal = (stateDir: string) =>
  readFileSync(join(stateDir, "journal.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));

describe("PassSupervisor.run", () => {
  it("a pass that finishes gives its report; one that throws, its failure report", async () => {
    const s = new PassSupervisor({
      command: "tick",
      overdue: { kind: "shutdown" },
      deadlineMs: 5000,
    });
    const p = program();
    expect(await s.run(p, async () => report("a"))).toEqual(report("a"));
    const failed = await s.run(p, async () => {
      throw new TickFailed(p, "the disk is full", null);
    });
    expect(failed).toMatchObject({
      program: p.name,
      decision: "tick_failed",
      reason: "the disk is full",
    });
    const odd = await s.run(p, async () => {
      throw new Error("odd");
    });
    expect(odd).toMatchObject({ program: p.name, decision: "error", reason: "odd" });
  });

  it("give_up: the overdue pass's signal is aborted, it is journaled once and reported; another pass goes on", async () => {
    const s = new PassSupervisor({
      command: "tick",
      overdue: { kind: "give_up", graceMs: 60_000 },
      deadlineMs: 100,
    });
    const slow = program();
    const other = program();
    let seen: AbortSignal | null = null;
    let release = () => {};
    const hung = new Promise<void>((r) => {
      release = r;
    });
    const a = s.run(slow, async (signal) => {
      seen = signal;
      await hung;
      signal.throwIfAborted(); // the effect it was in returns: it acts no more
      return report("late");
    });
    const given = await a;
    expect(given).toMatchObject({
      decision: "tick_failed",
      reason: "the tick passed its deadline (0s)",
      facts: null,
    });
    expect((seen as AbortSignal | null)?.aborted).toBe(true);
    expect((seen as AbortSignal | null)?.reason).toBeInstanceOf(PassOverdue);
    expect(s.gaveUp).toBe(true);
    expect(s.stopping).toBe(false);
    // The run goes on: the next pass has a signal of its own, not aborted.
    const b = await s.run(other, async (signal) => {
      await new Promise((r) => setTimeout(r, 20));
      return { ...report("other"), reason: String(signal.aborted) };
    });
    expect(b).toEqual({ ...report("other"), reason: "false" });
    release();
    expect(journal(slow.stateDir).filter((e) => e.type === "tick_failed")).toHaveLength(1);
  });
});

describe("failureReport", () => {
  it("a program that could not be opened is named by its folder", () => {
    expect(failureReport("/loops/catalog", new Error("bad json"))).toMatchObject({
      program: "catalog",
      decision: "error",
      reason: "bad json",
    });
  });
});
