// The watchdog's tick with the tmux launcher, end to end: the real CLI, real fake managers in
// windows of a real tmux server of the test's own (`$SHEEPDOG_TMUX_SOCKET` + `$TMUX_TMPDIR`).
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  cleanUpTmux,
  lastStart,
  panes,
  screenOf,
  server,
  starts,
  tmuxProgram,
  windows,
} from "./helpers/tmux-world.js";
import {
  dueFor,
  events,
  graceDue,
  holder,
  isAlive,
  ofType,
  staleDue,
  tick,
  waitFor,
  waitForClaimBy,
} from "./helpers/watchdog.js";

afterEach(cleanUpTmux);

describe("tick with the tmux launcher (real tmux, real processes)", () => {
  it("a stuck manager in a tmux window: evidence with its transcript tail and screen, stopped by pid, its pane closed, a new window started", async () => {
    const s = server();
    // The fake manager writes a Claude-shaped transcript under the program's seat.
    const p = tmuxProgram(s, (seat) => ["--hang-after", "2", "--transcript-in", seat], {
      stale_after: "3s",
    });

    const first = tick(p.env);
    expect(first.code, first.stderr).toBe(0);
    expect(first.report.decision).toBe("start");
    const a = lastStart(p.stateDir);
    expect(a).toMatchObject({ launcher: "tmux", planned: true });
    expect(a.pane).toMatch(/^%\d+$/);
    expect(a.window).toMatch(/^demo:@\d+$/);
    expect(panes(s)).toContain(a.pane);
    // The session sheepdog made holds the manager's window alone: no stray `0: bash` beside it.
    expect(windows(s).filter((w) => w.startsWith("demo:"))).toEqual([a.window]);
    await waitForClaimBy(p.stateDir, a.pid);
    // It saves twice, then hangs: alive, saving no more. (SIGSTOP cannot make a pane's process
    // stuck: tmux sends SIGCONT to a stopped pane process, and the kernel discards SIGTTIN and
    // SIGTTOU, the stops tmux leaves alone, in the pane's orphaned process group.)
    const screenLine = `fake-manager ${a.pid}: hanging after 2 saves`;
    await waitFor("the pane to show the manager's output", () =>
      screenOf(s, a.pane).includes(screenLine),
    );
    const transcriptDir = join(p.seat, "projects", p.root.replace(/[^a-zA-Z0-9]/g, "-"));
    const transcript = join(transcriptDir, `fake-session-${a.pid}.jsonl`);
    await waitFor("the manager's transcript", () => existsSync(transcript));

    await dueFor(p.env, "restart_stuck", staleDue(p.stateDir, 3000));
    const r = tick(p.env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.report.decision).toBe("restart_stuck");
    expect(r.report.reason).toMatch(
      new RegExp(`^pid ${a.pid}: no save for \\d+s \\(stale after 3s\\)$`),
    );

    // Stopped by its exact pid, and the pane it ran in closed (remain-on-exit would keep it).
    expect(isAlive(a.pid, a.start_time)).toBe(false);
    expect(panes(s)).not.toContain(a.pane);
    expect(windows(s)).not.toContain(a.window);
    const [stopped] = ofType(p.stateDir, "manager_stopped");
    expect(stopped).toMatchObject({
      pid: a.pid,
      start_time: a.start_time,
      decision: "restart_stuck",
      outcome: "term",
    });
    expect(r.report.actions.join("; ")).toContain("closed its tmux pane");

    // The evidence: the transcript's tail (found under the seat for the pane's cwd) and the screen.
    const evidence = String(stopped?.evidence);
    expect(evidence.startsWith(join(p.stateDir, "evidence", ""))).toBe(true);
    const tail = readFileSync(join(evidence, "transcript-tail.jsonl"), "utf8");
    expect(tail).toContain(`fake transcript of pid ${a.pid}: working on it`);
    expect(tail).toContain(`fake transcript of pid ${a.pid}: still working`);
    expect(tail).toBe(readFileSync(transcript, "utf8"));
    expect(readFileSync(join(evidence, "screen.txt"), "utf8")).toContain(screenLine);
    const readme = readFileSync(join(evidence, "README.txt"), "utf8");
    expect(readme).toContain(`transcript: ${transcript}`);
    expect(readme).toContain("screen: screen.txt");
    expect(readme).toMatch(/process: state [RS];/); // alive, idle: not stopped

    // The claim broken, then a new manager in a new window of the same session.
    const types = events(p.stateDir).map((e) => e.type);
    const at = types.lastIndexOf("manager_stopped");
    expect(types.indexOf("claim_broken", at)).toBeGreaterThan(at);
    expect(types.indexOf("manager_started", at)).toBeGreaterThan(types.indexOf("claim_broken", at));
    const b = lastStart(p.stateDir);
    expect(starts(p.stateDir)).toHaveLength(2);
    expect(b).toMatchObject({ launcher: "tmux", planned: false });
    expect(b.pid).not.toBe(a.pid);
    expect(b.pane).not.toBe(a.pane);
    expect(b.window).not.toBe(a.window);
    expect(b.window).toMatch(/^demo:@\d+$/);
    expect(panes(s)).toContain(b.pane);
    await waitForClaimBy(p.stateDir, b.pid);
  });

  it("a tmux start that never claims: after claim_grace its pid is stopped and its pane closed before the next start", async () => {
    const s = server();
    // Long enough for a loaded machine to show the pane's first line before the grace ends.
    const p = tmuxProgram(s, ["--never-claim"], { claim_grace: "6s" });
    expect(tick(p.env).report.decision).toBe("start");
    const a = lastStart(p.stateDir);
    expect(a.pane).toMatch(/^%\d+$/);
    await waitFor("the manager to run", () =>
      screenOf(s, a.pane).includes(`fake-manager ${a.pid}: started`),
    );
    expect(tick(p.env).report.decision).toBe("starting");
    expect(panes(s)).toContain(a.pane);
    await dueFor(p.env, "start", graceDue(p.stateDir, 6000));
    const r = tick(p.env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.report.decision).toBe("start");
    expect(r.report.reason).toMatch(new RegExp(`pid ${a.pid}\\) never claimed`));
    expect(isAlive(a.pid, a.start_time)).toBe(false);
    expect(panes(s)).not.toContain(a.pane);
    expect(windows(s)).not.toContain(a.window);
    expect(ofType(p.stateDir, "manager_stopped")).toEqual([
      expect.objectContaining({
        pid: a.pid,
        start_time: a.start_time,
        pane: a.pane,
        window: a.window,
        who: "leftover",
        evidence: expect.stringContaining(join(p.stateDir, "evidence")),
        outcome: "term",
        decision: "start",
      }),
    ]);
    // Its screen was kept before its pane was closed (issue 33): what it showed, and why.
    const kept = String(ofType(p.stateDir, "manager_stopped")[0]?.evidence);
    expect(readFileSync(join(kept, "screen.txt"), "utf8")).toContain(
      `fake-manager ${a.pid}: started`,
    );
    expect(readFileSync(join(kept, "README.txt"), "utf8")).toMatch(/never claimed/);
    const types = events(p.stateDir).map((e) => e.type);
    expect(types.lastIndexOf("manager_stopped")).toBeLessThan(types.lastIndexOf("manager_started"));
    const b = lastStart(p.stateDir);
    expect(starts(p.stateDir)).toHaveLength(2);
    expect(b.pane).not.toBe(a.pane);
    expect(panes(s)).toContain(b.pane);
    expect(isAlive(b.pid, b.start_time)).toBe(true);
    expect(holder(p.stateDir)).toBeNull();
  });

  it("a tmux manager that handed over but lingers: stopped by exact pid and its pane closed before its successor starts", async () => {
    const s = server();
    const p = tmuxProgram(s, ["--hand-over-after", "1", "--linger"]);
    expect(tick(p.env).report.decision).toBe("start");
    const a = lastStart(p.stateDir);
    await waitFor(
      "a to hand over",
      () => ofType(p.stateDir, "hand_over").length === 1 && !holder(p.stateDir),
    );
    expect(isAlive(a.pid, a.start_time)).toBe(true); // it lingers, as a Claude session in a pane does
    expect(panes(s)).toContain(a.pane);
    const r = tick(p.env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.report.decision).toBe("start_after_hand_over");
    expect(isAlive(a.pid, a.start_time)).toBe(false);
    expect(panes(s)).not.toContain(a.pane);
    expect(windows(s)).not.toContain(a.window);
    expect(ofType(p.stateDir, "manager_stopped")).toEqual([
      expect.objectContaining({
        pid: a.pid,
        start_time: a.start_time,
        pane: a.pane,
        window: a.window,
        reason: "handed over; stopping it before its successor starts",
        evidence: null,
        outcome: "term",
        decision: "start_after_hand_over",
      }),
    ]);
    expect(r.report.actions.join("; ")).toContain(
      `stopped pid ${a.pid}, which had handed over (term), and closed its pane`,
    );
    const types = events(p.stateDir).map((e) => e.type);
    expect(types.lastIndexOf("manager_stopped")).toBeLessThan(types.lastIndexOf("manager_started"));
    const b = lastStart(p.stateDir);
    expect(b).toMatchObject({ launcher: "tmux", planned: true });
    expect(b.pid).not.toBe(a.pid);
    expect(b.pane).not.toBe(a.pane);
    expect(panes(s)).toContain(b.pane);
    await waitForClaimBy(p.stateDir, b.pid);
  });
});
