// Which stops pause a seat, end to end (DESIGN §5): real fake managers, real transcripts under a
// real seat folder, the built CLI's `tick`, `hook stop-failure` and `usage`. A server-side 429
// never pauses; a limit text with an upsell tail pauses until the reset it names; the
// StopFailure hook's limit payload pauses the next tick before any transcript says so.

import { spawnSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { sheepdog } from "./helpers/cli.js";
import { FIXTURES } from "./helpers/fixtures.js";
import { cleanedUp, hashTree, ofType, tick, waitForClaimBy } from "./helpers/watchdog.js";

const { program: managed } = cleanedUp();

function program() {
  const p = managed();
  const seat = join(p.home, "seat");
  mkdirSync(seat, { recursive: true });
  return { ...p, seat, env: { ...p.env, CLAUDE_CONFIG_DIR: seat } };
}
type Program = ReturnType<typeof program>;

async function firstManager(p: Program): Promise<number> {
  const t = tick(p.env);
  expect(t.report.decision).toBe("start");
  const started = ofType(p.stateDir, "manager_started").at(-1) as unknown as { pid: number };
  return waitForClaimBy(p.stateDir, started.pid);
}

/** A transcript fixture, its last entry re-stamped `at`, where Claude Code keeps the holder's. */
/**
 * The fixtures' "resets 11am (America/Toronto)" moved to a Toronto hour one to two hours after
 * `ms`: stamped now, a fixed hour could be up to a day ahead, which no five-hour window allows
 * (DESIGN §5: such a reset is not trusted). Returns the text's new hour too.
 */
function resetSoon(text: string, ms: number): { text: string; hour: number } {
  const f = new Intl.DateTimeFormat("en-US", {
    timeZone: "America/Toronto",
    hour: "numeric",
    hourCycle: "h23",
  });
  const hour = (Number(f.format(ms)) + 2) % 24;
  const h12 = `${hour % 12 || 12}${hour < 12 ? "am" : "pm"}`;
  return {
    text: text.replace("resets 11am (America/Toronto)", `resets ${h12} (America/Toronto)`),
    hour,
  };
}

function transcriptFrom(p: Program, name: string, at: Date): string {
  const lines = readFileSync(join(FIXTURES, name), "utf8").split("\n").filter(Boolean);
  const last = JSON.parse(resetSoon(lines.pop() as string, at.getTime()).text);
  last.timestamp = at.toISOString();
  const dir = join(p.seat, "projects", p.root.replace(/[^a-zA-Z0-9]/g, "-"));
  mkdirSync(dir, { recursive: true });
  const path = join(dir, "5c0f4a7e-2b1d-4c55-9a53-0f1e2d3c4b5a.jsonl");
  writeFileSync(path, [...lines, JSON.stringify(last)].map((l) => `${l}\n`).join(""));
  return path;
}

/** The first whole hour after `ms` whose wall clock in `zone` reads `hour`:00. */
function nextHourIn(ms: number, zone: string, hour: number): string {
  const f = new Intl.DateTimeFormat("en-US", { timeZone: zone, hour: "numeric", hourCycle: "h23" });
  let t = Math.floor(ms / 3600_000) * 3600_000 + 3600_000;
  while (Number(f.format(t)) !== hour) t += 3600_000;
  return new Date(t).toISOString();
}

const readingsDir = (p: Program) => join(p.env.SHEEPDOG_STATE_DIR, "usage");

describe("a holder's transcript ending in an API error", () => {
  it("`API Error: Rate limit reached` (a 429 with room left) does not pause", async () => {
    const p = program();
    await firstManager(p);
    transcriptFrom(p, "transcript-rate-limit-429.jsonl", new Date());
    const t = tick(p.env);
    expect(t.code).toBe(0);
    expect(t.report.decision).toBe("ok");
    expect(ofType(p.stateDir, "paused")).toHaveLength(0);
    expect(hashTree(readingsDir(p))).toBe(hashTree(join(p.home, "nothing-here")));
  });

  it("`Context limit reached · /compact …` does not pause", async () => {
    const p = program();
    await firstManager(p);
    transcriptFrom(p, "transcript-context-limit.jsonl", new Date());
    expect(tick(p.env).report.decision).toBe("ok");
    expect(ofType(p.stateDir, "paused")).toHaveLength(0);
  });

  it("a limit with an upsell tail pauses until the reset it names", async () => {
    const p = program();
    await firstManager(p);
    const at = new Date();
    transcriptFrom(p, "transcript-limit-upsell.jsonl", at);
    const t = tick(p.env);
    expect(t.report.decision).toBe("pause");
    const want = nextHourIn(at.getTime(), "America/Toronto", resetSoon("", at.getTime()).hour);
    expect(ofType(p.stateDir, "paused")).toMatchObject([{ until: want, window: "five_hour" }]);
  });
});

describe("sheepdog hook stop-failure", () => {
  const payload = (name: string) =>
    resetSoon(readFileSync(join(FIXTURES, name), "utf8"), Date.now()).text;

  it("a usage-limit payload records the refusal at once: the next tick pauses", async () => {
    const p = program();
    await firstManager(p);
    expect(tick(p.env).report.decision).toBe("ok"); // nothing in any transcript
    const before = Date.now();
    const r = sheepdog(["hook", "stop-failure"], {
      env: p.env,
      input: payload("stop-failure-usage-limit.json"),
    });
    expect(r).toMatchObject({ code: 0, stderr: "" });
    expect(r.stdout.trim().split("\n")).toHaveLength(1);
    const want = nextHourIn(before, "America/Toronto", resetSoon("", before).hour);
    const t = tick(p.env);
    expect(t.report.decision).toBe("pause");
    expect(ofType(p.stateDir, "paused")).toMatchObject([{ until: want, window: "five_hour" }]);
    const usage = JSON.parse(
      sheepdog(["usage", "--seat", p.seat, "--json"], { env: p.env }).stdout,
    );
    expect(usage.seats[0]).toMatchObject({ limited: true });
  });

  it.each([["stop-failure-rate-limit-429.json"], ["stop-failure-server-error.json"]])(
    "%s is ignored: exit 0, silent, nothing recorded",
    async (name) => {
      const p = program();
      await firstManager(p);
      const r = sheepdog(["hook", "stop-failure"], { env: p.env, input: payload(name) });
      expect(r).toEqual({ code: 0, stdout: "", stderr: "" });
      expect(hashTree(readingsDir(p))).toBe(hashTree(join(p.home, "nothing-here")));
      expect(tick(p.env).report.decision).toBe("ok");
    },
  );

  it.each([
    ["not JSON", "{oops"],
    ["empty", ""],
    ["another event", JSON.stringify({ hook_event_name: "Stop", error: "rate_limit" })],
    ["an array", "[1,2]"],
  ])("%s: exit 0 and silent", (_what, input) => {
    const p = program();
    const r = sheepdog(["hook", "stop-failure"], { env: p.env, input });
    expect(r).toEqual({ code: 0, stdout: "", stderr: "" });
  });

  it("when the transcript ends in the same refusal, it is recorded once (hook, then tick)", async () => {
    const p = program();
    await firstManager(p);
    const at = new Date();
    const transcript = transcriptFrom(p, "transcript-limit-upsell.jsonl", at);
    const body = {
      ...JSON.parse(payload("stop-failure-usage-limit.json")),
      transcript_path: transcript,
    };
    expect(
      sheepdog(["hook", "stop-failure"], { env: p.env, input: JSON.stringify(body) }).code,
    ).toBe(0);
    expect(tick(p.env).report.decision).toBe("pause");
    const [file] = readdirSync(readingsDir(p));
    const rows = readFileSync(join(readingsDir(p), file as string), "utf8")
      .trim()
      .split("\n");
    expect(rows).toHaveLength(1);
    // The hook records at once with its own time; the tick sees the same refusal in the entry.
    const row = JSON.parse(rows[0] as string);
    expect(row).toMatchObject({ source: "refusal", text: body.last_assistant_message });
    expect(Math.abs(Date.parse(row.refusal_at) - at.getTime())).toBeLessThan(120_000);
  });

  it("runs the same through the package's bin (the CommonJS fast path Claude Code runs)", () => {
    const p = program();
    const r = spawnSync(process.execPath, [resolve("bin/sheepdog.cjs"), "hook", "stop-failure"], {
      env: { ...process.env, ...p.env },
      input: payload("stop-failure-usage-limit.json"),
      encoding: "utf8",
    });
    expect(r.status).toBe(0);
    expect(r.stderr).toBe("");
    expect(r.stdout).toMatch(/^sheepdog: usage limit on .* recorded until /);
    const usage = JSON.parse(
      sheepdog(["usage", "--seat", p.seat, "--json"], { env: p.env }).stdout,
    );
    expect(usage.seats[0]).toMatchObject({ limited: true });
  });

  it("an unknown hook is bad usage (exit 2)", () => {
    const r = sheepdog(["hook", "pre-tool-use"], { input: "{}" });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/sheepdog hook stop-failure/);
  });
});
