// A manager held at a dialog, end to end (issue 33): real ticks, real tmux, real fake managers
// whose panes show a screen the real Claude Code 2.1.332 drew (auto mode's "can't check actions
// in this session", the permission prompt), and pages to a real HTTP ntfy stand-in. A start
// held before its claim is paged `blocked` once with its screen, said in status, its screen
// kept as evidence before it is replaced, and quoted by the crash-loop stand-down; an idle
// manager whose pane shows a dialog is never nudged into it. A Codex manager's pane is read by
// Codex's rules (its 0.171.0 "Hooks need review" screen), not Claude Code's; the resume line after
// a Codex pause a person ended is typed once, and never into a dialog either.
import { mkdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { appendEvent } from "../src/journal/journal.js";
import { sheepdog } from "./helpers/cli.js";
import { useNtfyServer } from "./helpers/ntfy-server.js";
import { cleanUpTmux, lastStart, screenOf, server, tmuxProgram } from "./helpers/tmux-world.js";
import { isAlive, ofType, tick, tickAsync, waitFor, waitForClaimBy } from "./helpers/watchdog.js";

afterEach(cleanUpTmux);

const SCREENS = join(__dirname, "fixtures", "claude-2.1.332", "screens");
const AUTO_MODE = join(SCREENS, "auto-mode-cant-check.txt");
const PERMISSION = join(SCREENS, "permission-prompt-manual-mode.txt");
const HEADLINE = "Auto mode can't check actions in this session";
const CODEX = join(__dirname, "fixtures", "codex-0.171.0");
const CODEX_HOOKS = join(CODEX, "screen-hooks-review.txt");

/** A rollout of `root` in the Codex seat, as 0.171.0 writes one: its last turn ended. */
function codexRollout(seat: string, root: string, fixture = "rollout-tui-turn.jsonl"): void {
  const dir = join(seat, "sessions", "2026", "12", "03");
  mkdirSync(dir, { recursive: true });
  const text = readFileSync(join(CODEX, fixture), "utf8");
  writeFileSync(
    join(dir, "rollout-2026-12-03T13-27-21-01a23c16-9013-7373-bdb9-a095fcc735ef.jsonl"),
    text.replaceAll("{CWD}", realpathSync(root)),
  );
}

describe("a start held at a dialog before its claim", () => {
  const ntfy = useNtfyServer();

  it("is paged blocked once with its screen, said in status, its screen kept before it is replaced, and quoted by the stand-down", async () => {
    const s = server();
    const p = tmuxProgram(
      s,
      ["--never-claim", "--screen", AUTO_MODE],
      { claim_grace: "10m", crash_loop: { starts: 1, within: "1d" } },
      { page: { ntfy: { server: ntfy.url, topic: "demo" } } },
    );
    // Past claim_grace by a step of the clock every process of the test reads (the clock-step
    // hook), never by the machine's speed: within it, every tick sees the start held.
    const clock = join(p.root, "clock");
    const env = { ...p.env, SHEEPDOG_CLOCK_FILE: clock };
    const step = (minutes: number) => writeFileSync(clock, String(minutes * 60_000));
    expect(tick(env).report.decision).toBe("start");
    const a = lastStart(p.stateDir);
    await waitFor("the dialog on the pane", () => screenOf(s, a.pane).includes(HEADLINE));

    // Within claim_grace: held, journaled and paged once, with the screen and what it waits for.
    // (Ticks that page run async: the ntfy stand-in answers from this process.)
    const t = await tickAsync(env);
    expect(t.code, t.stderr).toBe(0);
    expect(t.report.decision).toBe("blocked");
    expect(t.report.reason).toMatch(
      /has not claimed yet: it waits for a person \(its screen shows a dialog: Auto mode can't check/,
    );
    const [blocked] = ofType(p.stateDir, "blocked");
    expect(blocked).toMatchObject({
      pid: a.pid,
      launch_began: expect.any(String),
      waiting_for: HEADLINE,
      screen: expect.stringContaining("Enter to stay in auto mode"),
    });
    await waitFor("the page", () => ntfy.received.length > 0);
    expect(ntfy.received).toHaveLength(1);
    expect(ntfy.received[0]?.title).toBe("demo: a starting manager waits for a person");
    expect(ntfy.received[0]?.message).toContain(
      `waits for a person before it has claimed: ${HEADLINE}`,
    );
    expect(ntfy.received[0]?.message).toContain("Enter to stay in auto mode");

    // The next tick waits on, saying why and when it paged; status says the same.
    const again = await tickAsync(env);
    expect(again.report.decision).toBe("starting");
    expect(again.report.reason).toContain(`it waits for a person (${HEADLINE}; paged`);
    expect(ofType(p.stateDir, "blocked")).toHaveLength(1);
    const status = sheepdog(["status", "--json"], { env });
    expect(JSON.parse(status.stdout).programs[0].reason).toContain(
      `it waits for a person (${HEADLINE}; paged`,
    );

    // Past claim_grace: its screen is kept, then it is stopped and replaced; the reason says why.
    step(11);
    const r = await tickAsync(env);
    expect(r.report.decision).toBe("start");
    expect(r.report.reason).toContain(
      `never claimed (grace 10m); it waited for a person: ${HEADLINE}`,
    );
    expect(isAlive(a.pid, a.start_time)).toBe(false);
    const [stopped] = ofType(p.stateDir, "manager_stopped");
    expect(stopped).toMatchObject({ pid: a.pid, who: "leftover" });
    const kept = String(stopped?.evidence);
    expect(readFileSync(join(kept, "screen.txt"), "utf8")).toContain(HEADLINE);

    // The second start is held the same way: journaled, but not paged again (one page a spell
    // of the same kind); past its grace the crash-loop guard stands down, quoting what it waited for.
    const b = lastStart(p.stateDir);
    await waitFor("the dialog on the new pane", () => screenOf(s, b.pane).includes(HEADLINE));
    expect((await tickAsync(env)).report.decision).toBe("blocked");
    step(22);
    const down = await tickAsync(env);
    expect(down.report.decision).toBe("stand_down");
    const [stood] = ofType(p.stateDir, "stood_down");
    expect(String(stood?.reason)).toContain(`it waited for a person: ${HEADLINE}`);
    await waitFor("the stand-down page", () =>
      ntfy.received.some((m) => m.title === "demo stood down"),
    );
    const page = ntfy.received.find((m) => m.title === "demo stood down");
    expect(page?.message).toContain(`it waited for a person: ${HEADLINE}`);
    expect(ntfy.received.filter((m) => /waits for a person/.test(m.title ?? ""))).toHaveLength(1);
    // The leftover was stopped with its evidence on the way down.
    expect(ofType(p.stateDir, "manager_stopped")).toHaveLength(2);
    expect(isAlive(b.pid, b.start_time)).toBe(false);
  }, 60_000);

  it("a Codex start held at Codex's own dialog is blocked too (its screen read by Codex's rules)", async () => {
    const s = server();
    const p = tmuxProgram(
      s,
      ["--never-claim", "--screen", CODEX_HOOKS],
      { claim_grace: "1h" },
      {},
      { agent: "codex" },
    );
    expect(tick(p.env).report.decision).toBe("start");
    const a = lastStart(p.stateDir);
    await waitFor("the dialog on the pane", () =>
      screenOf(s, a.pane).includes("enter confirm · esc skip"),
    );
    const t = await tickAsync(p.env);
    expect(t.report.decision, t.report.reason).toBe("blocked");
    expect(ofType(p.stateDir, "blocked")[0]).toMatchObject({
      pid: a.pid,
      waiting_for: "Hooks need review",
      screen: expect.stringContaining("Trust all and continue"),
    });
  }, 30_000);
});

describe("nudge safety", () => {
  const ntfy = useNtfyServer();

  it("an idle manager whose pane shows a dialog is not nudged: blocked is journaled and paged, and it is left for a person", async () => {
    const s = server();
    const p = tmuxProgram(
      s,
      (seat) => [
        "--hang-after",
        "1",
        "--transcript-in",
        seat,
        "--turn-ended",
        "--screen",
        PERMISSION,
      ],
      { quiet_after: "2s", nudge_wait: "2s", stale_after: "1h" },
      { page: { ntfy: { server: ntfy.url, topic: "demo" } } },
    );
    expect(tick(p.env).report.decision).toBe("start");
    const a = lastStart(p.stateDir);
    await waitForClaimBy(p.stateDir, a.pid);
    await waitFor("the dialog on the pane", () =>
      screenOf(s, a.pane).includes("Do you want to proceed?"),
    );
    // Quiet for quiet_after with its turn ended: a nudge is due (the dry run says so).
    let last = "";
    await waitFor(
      "a nudge to be due",
      () => {
        const r = tick(p.env, ["--dry-run"]).report;
        last = `${r.decision}: ${r.reason}`;
        return r.decision === "nudge";
      },
      20_000,
    ).catch((e) => {
      throw new Error(`${(e as Error).message}; the last dry run: ${last}`);
    });
    const t = await tickAsync(p.env);
    expect(t.report.decision).toBe("nudge");
    expect(t.report.actions.join("; ")).toMatch(
      /not nudged: pid \d+'s pane shows a dialog \(Bash command\)/,
    );
    expect(ofType(p.stateDir, "nudged")).toHaveLength(0);
    expect(ofType(p.stateDir, "blocked")[0]).toMatchObject({
      pid: a.pid,
      screen: expect.stringContaining("Do you want to proceed?"),
    });
    // Nothing was typed into the dialog.
    expect(screenOf(s, a.pane)).not.toContain("sheepdog: this session");
    await waitFor("the page", () => ntfy.received.length > 0);
    expect(ntfy.received[0]?.title).toBe("demo: the manager waits for a person");
    // Left for a person: no nudge, no restart, once nudge_wait (2s) after it has passed.
    const due = Date.parse(String(ofType(p.stateDir, "blocked")[0]?.at)) + 2000 + 100;
    await new Promise((r) => setTimeout(r, Math.max(0, due - Date.now())));
    const later = await tickAsync(p.env);
    expect(later.report.decision).toBe("ok");
    expect(later.report.reason).toMatch(/its pane showed a dialog when it was due a nudge/);
    expect(ofType(p.stateDir, "manager_stopped")).toHaveLength(0);
    expect(isAlive(a.pid, a.start_time)).toBe(true);
  }, 60_000);

  it("an idle Codex manager whose pane shows Codex's dialog is not nudged into it either", async () => {
    const s = server();
    const p = tmuxProgram(
      s,
      ["--hang-after", "1", "--screen", CODEX_HOOKS],
      { quiet_after: "2s", nudge_wait: "2s", stale_after: "1h" },
      {},
      { agent: "codex" },
    );
    expect(tick(p.env).report.decision).toBe("start");
    const a = lastStart(p.stateDir);
    await waitForClaimBy(p.stateDir, a.pid);
    // Its rollout, written since the claim: the turn ended, nothing to wake it.
    codexRollout(p.seat, p.root);
    await waitFor("the dialog on the pane", () =>
      screenOf(s, a.pane).includes("enter confirm · esc skip"),
    );
    let last = "";
    await waitFor(
      "a nudge to be due",
      () => {
        const r = tick(p.env, ["--dry-run"]).report;
        last = `${r.decision}: ${r.reason}`;
        return r.decision === "nudge";
      },
      20_000,
    ).catch((e) => {
      throw new Error(`${(e as Error).message}; the last dry run: ${last}`);
    });
    const t = await tickAsync(p.env);
    expect(t.report.actions.join("; ")).toMatch(
      /not nudged: pid \d+'s pane shows a dialog \(Hooks need review\)/,
    );
    expect(ofType(p.stateDir, "nudged")).toHaveLength(0);
    expect(screenOf(s, a.pane)).not.toContain("sheepdog: this session");
  }, 60_000);

  it.each([
    [
      "at its composer, the line is typed",
      join(CODEX, "screen-usage-limit.txt"),
      /typed the resume line \(/,
    ],
    [
      "at Codex's dialog, it is not typed into it",
      CODEX_HOOKS,
      /resume line failed: its pane shows a dialog \(Hooks need review\): not typed into it/,
    ],
  ])(
    "a Codex usage pause a person ended (sheepdog unpause): %s",
    async (_what, screen, want) => {
      const s = server();
      const p = tmuxProgram(
        s,
        ["--hang-after", "1", "--screen", screen],
        { stale_after: "1h" },
        {},
        { agent: "codex" },
      );
      expect(tick(p.env).report.decision).toBe("start");
      const a = lastStart(p.stateDir);
      await waitForClaimBy(p.stateDir, a.pid);
      await waitFor("its one save", () => ofType(p.stateDir, "saved").length > 0);
      // It stopped at the limit (its rollout ends in the refusal); a tick paused the seat (as the
      // tick journals it), and a person ended the pause early.
      codexRollout(p.seat, p.root, "rollout-tui-usage-limit.jsonl");
      appendEvent(p.stateDir, {
        type: "paused",
        until: new Date(Date.now() + 3_600_000).toISOString(),
        reason: "seat limited",
        window: "five_hour",
      });
      await waitFor("the screen", () => screenOf(s, a.pane).includes("›"));
      expect(sheepdog(["unpause"], { env: p.env }).code).toBe(0);
      const t = await tickAsync(p.env);
      expect(t.report.decision, t.report.reason).toBe("ok");
      expect(t.report.actions.join("; ")).toMatch(want);
      expect(ofType(p.stateDir, "resume_typed")).toHaveLength(1);
      // Once: the next tick types nothing.
      const again = await tickAsync(p.env);
      expect(again.report.actions.join("; ")).not.toMatch(/resume line/);
      expect(ofType(p.stateDir, "resume_typed")).toHaveLength(1);
    },
    30_000,
  );
});
