// `sheepdog report` of a scripted night (issue 13): every event in the journal comes from real
// `sheepdog tick` processes supervising the demo's real toy manager, real statusline readings
// and a real HTTP server on 127.0.0.1 standing in for ntfy. The report is then checked as data
// (`--json`), as HTML, and as rendered by a real headless Chromium.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHROMIUM_INSTALL, chromiumMissing, render } from "./helpers/chromium.js";
import { CLI, sheepdog, sheepdogAsync, tempDir, tempProgram } from "./helpers/cli.js";
import { type NtfyServer, ntfyServer } from "./helpers/ntfy-server.js";
import { decodePng, pixelStats, shareOf } from "./helpers/png.js";
import { skipWithout } from "./helpers/tools.js";
import {
  type Event,
  events,
  isAlive,
  killStarted,
  ofType,
  waitFor,
  waitForClaimBy,
} from "./helpers/watchdog.js";

const TOY = resolve("demo/toy-manager.mjs");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Started {
  pid: number;
  start_time: string;
  planned: boolean;
}

let server: NtfyServer;
let night: {
  p: ReturnType<typeof tempProgram>;
  env: NodeJS.ProcessEnv;
  journal: Event[];
  who: Record<"a" | "b" | "c" | "d" | "e" | "f" | "g", Started>;
  json: ReportJson;
  html: string;
  file: string;
};

interface ReportJson {
  file: string | null;
  programs: {
    program: string;
    empty: boolean;
    verdict: string;
    managers: {
      pid: number;
      ending: string;
      ending_label: string;
      planned: boolean;
      hand_over_tokens: number | null;
      replaced_after_ms: number | null;
    }[];
    tokens: { pid: number; context_tokens: number }[];
    spans: { kind: string; ongoing: boolean; reason: string; until?: string | null }[];
    markers: { kind: string; page_kind: string | null }[];
    numbers: Record<string, unknown>;
  }[];
}

/** The demo's toy manager under compressed thresholds (interval 2s: a 5 s silence is a gap). */
function config(tokensPerSave: number) {
  return {
    manager: {
      launcher: "command",
      command: [process.execPath, TOY, "{prompt}"],
      env: {
        SHEEPDOG_CLI: CLI,
        TOY_SAVE_EVERY_MS: "300",
        TOY_TOKENS_PER_SAVE: String(tokensPerSave),
      },
    },
    watchdog: {
      interval: "2s",
      stale_after: "4s",
      claim_grace: "5s",
      crash_loop: { starts: 3, within: "5m" },
    },
    hand_over_tokens: 200000,
    page: { ntfy: { server: server.url, topic: "night-alerts" } },
  };
}

async function scriptNight() {
  const p = tempProgram("night", config(60_000));
  const seat = join(p.home, "seat");
  mkdirSync(seat);
  const env = { ...p.env, CLAUDE_CONFIG_DIR: seat };
  const starts = () => ofType(p.stateDir, "manager_started") as unknown as Started[];
  const last = () => starts().at(-1) as Started;
  const tick = async (): Promise<string> => {
    const r = await sheepdogAsync(["tick", "--json"], { env });
    expect(r.code, r.stderr).toBe(0);
    return JSON.parse(r.stdout).programs[0].decision;
  };
  const tickUntil = async (want: string, max = 20, gap = 500) => {
    const seen: string[] = [];
    for (let i = 0; i < max; i++) {
      const d = await tick();
      if (d === want) return;
      seen.push(d);
      await sleep(gap);
    }
    throw new Error(`the watchdog never decided ${want} (it decided ${seen.join(", ")})`);
  };
  const handedOver = (s: Started) =>
    waitFor(`pid ${s.pid} to hand over`, () =>
      ofType(p.stateDir, "hand_over").some((e) => e.pid === s.pid),
    );
  const kill = async (s: Started) => {
    process.kill(s.pid, "SIGKILL");
    await waitFor(`pid ${s.pid} to die`, () => !isAlive(s.pid, s.start_time));
  };
  const claimed = async () => {
    const s = last();
    await waitForClaimBy(p.stateDir, s.pid);
    return s;
  };

  // Two managers fill their context and hand over (planned starts).
  await tickUntil("start", 1);
  const a = await claimed();
  await handedOver(a);
  await tickUntil("start_after_hand_over", 3);
  const b = await claimed();
  // Later managers grow slowly: the rest of the night is about other endings.
  writeFileSync(join(p.root, "program.json"), JSON.stringify({ name: "night", ...config(1000) }));
  await handedOver(b);
  await tickUntil("start_after_hand_over", 3);
  const c = await claimed();
  // kill -9: found dead, replaced (unplanned).
  await kill(c);
  await tickUntil("restart_dead", 3);
  const d = await claimed();
  // Wedged: stopped as stuck, replaced (unplanned, pages).
  process.kill(d.pid, "SIGSTOP");
  await tickUntil("restart_stuck", 30);
  const e = await claimed();
  // The watchdog does not run for more than two intervals: a sleep gap.
  await sleep(5000);
  expect(await tick()).toBe("ok");
  // The seat reaches its limit: paused (pages); the manager saves, sees it and stops itself.
  const resets = Math.floor(Date.now() / 1000) + 10; // room for a slow statusline and tick
  const reading = { rate_limits: { five_hour: { used_percentage: 100, resets_at: resets } } };
  expect(sheepdog(["statusline"], { env, input: JSON.stringify(reading) }).code).toBe(0);
  await tickUntil("pause", 1);
  await waitFor(`pid ${e.pid} to stop for the pause`, () => !isAlive(e.pid, e.start_time));
  // Ticks keep coming while paused; after the reset the next manager starts (planned).
  await tickUntil("restart_dead", 30, 700);
  const f = await claimed();
  // Deaths until the crash-loop guard stands down (urgent page).
  await kill(f);
  await tickUntil("restart_dead", 3);
  const g = await claimed();
  await kill(g);
  await tickUntil("stand_down", 1);

  const file = join(tempDir(), "night.html");
  const r = sheepdog(["report", "--json", "--out", file], { env });
  expect(r.code, r.stderr).toBe(0);
  return {
    p,
    env,
    journal: events(p.stateDir),
    who: { a, b, c, d, e, f, g },
    json: JSON.parse(r.stdout) as ReportJson,
    html: readFileSync(file, "utf8"),
    file,
  };
}

beforeAll(async () => {
  server = await ntfyServer();
  night = await scriptNight();
}, 180_000);
afterAll(async () => {
  if (night) killStarted(night.p.stateDir);
  await server.stop();
});

const ofJournal = (type: string) => night.journal.filter((e) => e.type === type);

describe("report of a scripted night", () => {
  it("--json: one bar per manager, each with the right ending, start kind and replacement", () => {
    const { who, json } = night;
    expect(json.file).toBe(night.file);
    const t = json.programs[0];
    expect(t?.program).toBe("night");
    const bars = t?.managers ?? [];
    expect(bars).toHaveLength(ofJournal("manager_started").length);
    expect(bars.map((m) => [m.pid, m.ending, m.planned])).toEqual([
      [who.a.pid, "hand_over", true],
      [who.b.pid, "hand_over", true],
      [who.c.pid, "dead", true],
      [who.d.pid, "stuck_stopped", false],
      [who.e.pid, "stopped_for_pause", false],
      [who.f.pid, "dead", true],
      [who.g.pid, "dead", false],
    ]);
    const handOvers = ofJournal("hand_over");
    expect(bars[0]?.hand_over_tokens).toBe(handOvers[0]?.context_tokens);
    expect(bars[0]?.ending_label).toBe(
      `hand-over at ${Math.round((handOvers[0]?.context_tokens as number) / 1000)}k`,
    );
    expect(bars[3]?.ending_label).toBe("stuck-stopped");
    // Dead and stuck managers were replaced; the last one, found dead at the stand-down, not.
    for (const i of [2, 3, 5]) expect(bars[i]?.replaced_after_ms).toBeGreaterThan(0);
    expect(bars[6]?.replaced_after_ms).toBeNull();
    // The token line: every save and hand-over with a context size, by pid.
    const saves = [...ofJournal("saved"), ...handOvers].filter(
      (e) => typeof e.context_tokens === "number",
    );
    expect(t?.tokens).toHaveLength(saves.length);
  });

  it("--json: the pause and the stand-down as spans with their reasons; the gap; page markers", () => {
    const t = night.json.programs[0];
    const spans = t?.spans ?? [];
    const paused = spans.filter((s) => s.kind === "paused");
    expect(paused).toHaveLength(1);
    expect(paused[0]).toMatchObject({ ongoing: false, reason: ofJournal("paused")[0]?.reason });
    expect(paused[0]?.reason).toMatch(/five_hour window at 100%/);
    const stood = spans.filter((s) => s.kind === "stood_down");
    expect(stood).toEqual([
      expect.objectContaining({ ongoing: true, reason: ofJournal("stood_down")[0]?.reason }),
    ]);
    expect(stood[0]?.reason).toMatch(/crash loop/);
    const gaps = spans.filter((s) => s.kind === "sleep_gap");
    expect(gaps.length).toBeGreaterThanOrEqual(1);
    expect(gaps).toHaveLength(ofJournal("sleep_gap").length);
    const pages = (t?.markers ?? []).filter((m) => m.kind === "paged");
    expect(pages).toHaveLength(ofJournal("paged").length);
    expect(pages.map((m) => m.page_kind)).toEqual(
      expect.arrayContaining(["stuck_restart", "paused", "stood_down"]),
    );
    expect(server.delivered.length).toBe(pages.length);
  });

  it("--json: the night's numbers and the verdict", () => {
    const t = night.json.programs[0];
    const paged = ofJournal("paged").length;
    expect(t?.numbers).toMatchObject({
      managers: 7,
      managers_started: 7,
      planned_starts: 4,
      unplanned_starts: 3,
      failed_starts: 0,
      hand_overs: 2,
      median_hand_over_tokens: 200000,
      dead: 3,
      stuck_stopped: 1,
      pages_sent: paged,
      pages_failed: 0,
      ticks_failed: 0,
    });
    const n = t?.numbers as { paused_ms: number; stood_down_ms: number; replacements: unknown[] };
    expect(n.paused_ms).toBeGreaterThan(0);
    expect(n.stood_down_ms).toBeGreaterThanOrEqual(0);
    expect(n.replacements).toHaveLength(4);
    expect(t?.verdict).toMatch(
      new RegExp(
        `^7 managers, 3 unplanned restarts \\(2 after a death, 1 after a stuck stop\\), 2 hand-overs \\(median 200k\\), paused \\S+, stood down \\S+, ${paged} pages sent$`,
      ),
    );
  });

  it("the HTML: a bar per manager labelled with pid and ending, the spans, the markers, the tables", () => {
    const { html, who } = night;
    const bars = [...html.matchAll(/<g class="bar ending-(\w+)" data-pid="(\d+)"/g)];
    expect(bars.map((m) => [Number(m[2]), m[1]])).toEqual(
      night.json.programs[0]?.managers.map((m) => [m.pid, m.ending]),
    );
    expect(html).toContain(`pid ${who.a.pid} · hand-over at 200k`);
    expect(html).toContain(`pid ${who.d.pid} · stuck-stopped`);
    expect(html).toContain(`pid ${who.c.pid} · dead`);
    expect(html.match(/<g class="span paused"/g)).toHaveLength(1);
    expect(html.match(/<g class="span stood_down"/g)).toHaveLength(1);
    expect(html.match(/<g class="marker page-marker/g)).toHaveLength(ofJournal("paged").length);
    expect(html.match(/<tr class="manager-row"/g)).toHaveLength(7);
    expect(html).toContain("<dt>managers started</dt><dd>7 (4 planned, 3 unplanned)</dd>");
    expect(html).toContain("now: stood down since");
    // Self-contained: no script, nothing fetched, no link out of the page.
    expect(html).not.toMatch(/<script|<link|<img|<iframe|@import|https?:\/\//i);
    expect(html).not.toMatch(/(?:src|href)="(?!#)/);
  });
});

describe.skipIf(skipWithout("chromium", chromiumMissing(), CHROMIUM_INSTALL))(
  "the scripted night in headless Chromium",
  () => {
    it("in headless Chromium: a screenshot that is not blank, no network request, every bar rendered", () => {
      const shown = render(night.file);
      expect(shown.pageRequests).toEqual([]);
      const rendered = shown.dom.match(/<g class="bar /g) ?? [];
      expect(rendered).toHaveLength(ofJournal("manager_started").length);
      // To look at it: SHEEPDOG_REPORT_SHOT=/tmp/night.png npx vitest run test/report-night.test.ts
      if (process.env.SHEEPDOG_REPORT_SHOT) {
        writeFileSync(process.env.SHEEPDOG_REPORT_SHOT, shown.png);
        writeFileSync(`${process.env.SHEEPDOG_REPORT_SHOT}.html`, night.html);
      }
      const img = decodePng(shown.png);
      expect(img.width).toBe(1280);
      const stats = pixelStats(img);
      expect(stats.variance).toBeGreaterThan(100);
      expect(stats.colours).toBeGreaterThan(50);
      // The bars' own colours are on screen: hand-over blue and stuck orange.
      expect(shareOf(img, [0x35, 0x67, 0xc8])).toBeGreaterThan(0.0005);
      expect(shareOf(img, [0xd9, 0x73, 0x1a])).toBeGreaterThan(0.0002);
    });

    it("the network check sees a page that does fetch (so it can fail)", () => {
      const file = join(tempDir(), "fetches.html");
      writeFileSync(file, '<!doctype html><img src="http://127.0.0.1:9/x.png">');
      expect(render(file, "400,300").pageRequests).toEqual(["http://127.0.0.1:9/x.png"]);
    });
  },
);
