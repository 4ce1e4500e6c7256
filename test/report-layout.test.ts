// What a real night's report got wrong (issue 17), on a journal shaped like that night: a dozen
// managers (two-digit row labels), saves without a context size, a start that died at once just
// before a crash-loop stand-down, a sleep gap that begins with the stand-down, and no pages set
// up. Checked as timeline data (`report --json`), as HTML, and laid out by a real Chromium.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { CHROMIUM_INSTALL, chromiumMissing, layoutOf } from "./helpers/chromium.js";
import { sheepdog, tempProgram } from "./helpers/cli.js";
import { skipWithout } from "./helpers/tools.js";

const T0 = Date.now() - 6 * 3600_000;
const at = (s: number) => new Date(T0 + s * 1000).toISOString();

/** The night's journal: 12 managers, the last one dying at once before a stand-down. */
function nightJournal(): Record<string, unknown>[] {
  const e: Record<string, unknown>[] = [];
  let t = 0;
  let pid = 5000;
  for (let n = 1; n <= 11; n++) {
    pid++;
    const planned = n === 1 || n % 3 === 0;
    e.push({
      at: at(t),
      type: "manager_started",
      pid,
      start_time: `s${pid}`,
      planned,
      reason: "r",
      launcher: "command",
    });
    e.push({ at: at(t + 2), type: "claimed", pid, start_time: `s${pid}` });
    for (let k = 1; k <= 10; k++) {
      // Every other save knew no context size (no transcript found): it is still a save.
      e.push({
        at: at(t + 2 + k * 60),
        type: "saved",
        pid,
        context_tokens: k % 2 ? 1000 * k : null,
      });
      // #4 went idle after its 5th save and was nudged; its 6th save says it woke.
      if (n === 4 && k === 5)
        e.push({
          at: at(t + 2 + k * 60 + 45),
          type: "nudged",
          pid,
          since: at(t + 2 + k * 60 + 10),
          reason: "idle",
          text: "sheepdog: …",
          via: "tmux send-keys",
        });
    }
    t += 700;
    if (n % 3 === 2)
      e.push({ at: at(t), type: "hand_over", pid, context_tokens: 150000, note: "n" });
    else
      e.push({
        at: at(t),
        type: "claim_broken",
        pid,
        reason: `holder pid ${pid} is dead`,
        holder_state: "dead",
      });
    t += 10;
  }
  // #12: started, died within a second, never claimed; the next tick stands down.
  e.push({
    at: at(t),
    type: "manager_started",
    pid: 6000,
    start_time: "s6000",
    planned: false,
    reason: "r",
    launcher: "command",
  });
  e.push({
    at: at(t + 300),
    type: "stood_down",
    reason: "crash loop: 3 unplanned starts within 1h",
  });
  // The watchdog slept from the stand-down on.
  e.push({
    at: at(t + 2400),
    type: "sleep_gap",
    from: at(t + 300),
    to: at(t + 2400),
    discounted_ms: 1_800_000,
  });
  return e;
}

let p: ReturnType<typeof tempProgram>;
let data: {
  verdict: string;
  numbers: Record<string, unknown>;
  managers: { n: number; ending: string; started_at: string; ended_at: string | null }[];
  saves: number;
  pages_configured: boolean;
};
let html: string;
let file: string;

beforeAll(() => {
  p = tempProgram("layout");
  mkdirSync(p.stateDir, { recursive: true, mode: 0o700 });
  writeFileSync(
    join(p.stateDir, "journal.jsonl"),
    nightJournal()
      .map((x) => `${JSON.stringify(x)}\n`)
      .join(""),
    { mode: 0o600 },
  );
  const r = sheepdog(["report", "--since", "7h", "--json"], { env: p.env });
  expect(r.code, r.stderr).toBe(0);
  data = JSON.parse(r.stdout).programs[0];
  file = join(p.root, "night.html");
  const w = sheepdog(["report", "--since", "7h", "--out", file], { env: p.env });
  expect(w.code, w.stderr).toBe(0);
  html = readFileSync(file, "utf8");
});

describe("the report tells the truth about a night", () => {
  it("counts every save, with or without a context size", () => {
    expect(data.saves).toBe(110);
    expect(data.numbers.saves).toBe(110);
    expect(html).toContain("<dt>saves</dt><dd>110</dd>");
  });

  it("the verdict's causes add up to its unplanned restarts", () => {
    const unplanned = data.numbers.unplanned_starts as number;
    expect(unplanned).toBe(8);
    const m = /(\d+) unplanned restarts \(([^)]*)\)/.exec(data.verdict);
    expect(m, data.verdict).not.toBeNull();
    expect(Number(m?.[1])).toBe(unplanned);
    const sum = (m?.[2] ?? "")
      .split(", ")
      .map((part) => Number(part.split(" ")[0]))
      .reduce((a, b) => a + b, 0);
    expect(sum, data.verdict).toBe(unplanned);
    // A death followed by a planned start (a hand-over's successor) is no restart.
    expect(data.numbers.dead).toBe(7);
  });

  it("a start that died at once ends at the stand-down, not across it", () => {
    const last = data.managers.at(-1);
    expect(last?.n).toBe(12);
    expect(last?.ending).toBe("never_claimed");
    const stood = nightJournal().find((x) => x.type === "stood_down");
    expect(last?.ended_at).toBe(stood?.at);
  });

  it("the idle spell and its nudge are drawn on #4's bar, each with its title", () => {
    expect(
      html.match(/<g class="idle-spell outcome-woke" data-outcome="woke"><title>/g),
    ).toHaveLength(1);
    expect(html.match(/<g class="nudge-mark"><title>pid 5004: nudged /g)).toHaveLength(1);
  });

  it("an empty pages row says that no pages are set up", () => {
    expect(data.pages_configured).toBe(false);
    expect(html).toMatch(/class="empty-note pages-note"[^>]*>pages are not configured/);
  });

  it("the legend has every marker kind, the low-priority page included", () => {
    for (const word of [
      "urgent page",
      "high page",
      "low page",
      "page not delivered",
      "failed tick",
    ])
      expect(html).toContain(`${word}</li>`);
  });
});

describe.skipIf(skipWithout("chromium", chromiumMissing(), CHROMIUM_INSTALL))(
  "laid out by headless Chromium",
  () => {
    it("no row label is cut at the left edge; span labels do not overlap", () => {
      const layout = layoutOf(file);
      expect(layout.rowLabels).toHaveLength(12);
      for (const l of layout.rowLabels) expect(l.x, l.text).toBeGreaterThanOrEqual(0);
      expect(layout.spanLabels.map((l) => l.text).sort()).toEqual([
        "stood down",
        "watchdog asleep",
      ]);
      const [a, b] = layout.spanLabels;
      const apart =
        (a &&
          b &&
          (a.x + a.w <= b.x || b.x + b.w <= a.x || a.y + a.h <= b.y || b.y + b.h <= a.y)) ??
        false;
      expect(apart, JSON.stringify(layout.spanLabels)).toBe(true);
    });
  },
);
