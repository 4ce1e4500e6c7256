import { spawn, spawnSync } from "node:child_process";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { processInfo } from "../src/process/identity.js";
import { findTranscript } from "../src/usage/transcript.js";
import { CLI, sheepdog, tempDir } from "./helpers/cli.js";
import { FIXTURES } from "./helpers/usage.js";

const INPUT = readFileSync(join(FIXTURES, "statusline-input.json"), "utf8");
const LINE = "Opus 4.6 · ctx 143k/200k · 5h 30% ↻10:00 · 7d 81%";

function env() {
  const home = tempDir();
  return {
    home,
    state: join(home, "state"),
    seat: join(home, "seat"),
    vars: {
      SHEEPDOG_STATE_DIR: join(home, "state"),
      CLAUDE_CONFIG_DIR: join(home, "seat"),
      TZ: "UTC",
      HOME: home,
    },
  };
}

function readings(state: string) {
  const dir = join(state, "usage");
  const files = readdirSync(dir);
  expect(files).toHaveLength(1);
  const path = join(dir, files[0] as string);
  return {
    path,
    rows: readFileSync(path, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l)),
  };
}

const agents: ReturnType<typeof spawn>[] = [];
afterEach(() => {
  for (const a of agents.splice(0)) a.kill("SIGKILL");
});

/**
 * A stand-in agent: a node process that runs `sheepdog statusline` through `sh -c` (as Claude
 * Code does), prints its own pid, and stays alive so its identity can be checked.
 */
function agentRunningStatusline(vars: Record<string, string>, input: string) {
  const script = `
    const { execFileSync } = require("node:child_process");
    const out = execFileSync("sh", ["-c", ${JSON.stringify(`"${process.execPath}" "${CLI}" statusline`)}], { input: ${JSON.stringify(input)}, encoding: "utf8" });
    process.stdout.write(JSON.stringify({ pid: process.pid, out }) + "\\n");
    setTimeout(() => {}, 120000);`;
  const child = spawn(process.execPath, ["-e", script], {
    env: { ...process.env, ...vars },
    stdio: ["ignore", "pipe", "inherit"],
  });
  agents.push(child);
  return new Promise<{ pid: number; out: string }>((resolve, reject) => {
    let buf = "";
    child.stdout?.on("data", (d) => {
      buf += d;
      if (buf.includes("\n")) resolve(JSON.parse(buf));
    });
    child.on("exit", (code) => reject(new Error(`agent exited ${code}`)));
  });
}

describe("sheepdog statusline", () => {
  it("runs the same through the package's bin (the CommonJS fast path users run)", () => {
    const e = env();
    const bin = resolve("bin/sheepdog.cjs");
    const r = spawnSync(process.execPath, [bin, "statusline"], {
      env: { ...process.env, ...e.vars },
      input: INPUT,
      encoding: "utf8",
    });
    expect({ code: r.status, stdout: r.stdout, stderr: r.stderr }).toEqual({
      code: 0,
      stdout: `${LINE}\n`,
      stderr: "",
    });
    expect(readings(e.state).rows).toHaveLength(2);
    const bad = spawnSync(process.execPath, [bin, "statusline"], {
      env: { ...process.env, ...e.vars },
      input: "{not json",
      encoding: "utf8",
    });
    expect(bad.status).toBe(0);
    expect(bad.stdout).toMatch(/^sheepdog · unreadable status input\n$/);
  });

  it("prints the line for the fixture and records a reading per window", () => {
    const e = env();
    const r = sheepdog(["statusline"], { env: e.vars, input: INPUT });
    expect(r).toEqual({ code: 0, stdout: `${LINE}\n`, stderr: "" });
    const { path, rows } = readings(e.state);
    expect(rows).toEqual([
      expect.objectContaining({
        seat: e.seat,
        window: "five_hour",
        used_percentage: 30,
        resets_at: "2025-11-13T10:00:00.000Z",
        source: "statusline",
      }),
      expect.objectContaining({
        seat: e.seat,
        window: "seven_day",
        used_percentage: 81,
        resets_at: "2025-11-18T10:00:00.000Z",
      }),
    ]);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(join(e.state, "usage")).mode & 0o777).toBe(0o700);
    // An identical update appends nothing; a changed one appends only its window.
    sheepdog(["statusline"], { env: e.vars, input: INPUT });
    expect(readings(e.state).rows).toHaveLength(2);
    const moved = JSON.parse(INPUT);
    moved.rate_limits.five_hour.used_percentage = 31.5;
    const r2 = sheepdog(["statusline"], { env: e.vars, input: JSON.stringify(moved) });
    expect(r2.stdout).toBe("Opus 4.6 · ctx 143k/200k · 5h 31% ↻10:00 · 7d 81%\n");
    const after = readings(e.state).rows;
    expect(after).toHaveLength(3);
    expect(after[2]).toMatchObject({ window: "five_hour", used_percentage: 31.5 });
  });

  it("records the agent (nearest non-shell ancestor) in the session map", async () => {
    const e = env();
    const transcript = join(FIXTURES, "transcript-basic.jsonl");
    const input = JSON.stringify({ ...JSON.parse(INPUT), transcript_path: transcript });
    const agent = await agentRunningStatusline(e.vars, input);
    expect(agent.out).toBe(`${LINE}\n`);
    const entry = JSON.parse(readFileSync(join(e.state, "sessions", `${agent.pid}.json`), "utf8"));
    const info = processInfo(agent.pid);
    expect(entry).toMatchObject({
      pid: agent.pid,
      start_time: info?.startTime,
      transcript_path: transcript,
      session_id: "5c0f4a7e-2b1d-4c55-9a53-0f1e2d3c4b5a",
      cwd: "/Users/ops/loops/catalog",
      seat: e.seat,
    });
    expect(statSync(join(e.state, "sessions", `${agent.pid}.json`)).mode & 0o777).toBe(0o600);
    // save/hand-over/the watchdog find the transcript through it, by pid and start time.
    const manager = { pid: agent.pid, start_time: info?.startTime as string };
    expect(findTranscript({ seat: e.seat, cwd: "/elsewhere", manager, env: e.vars })).toBe(
      transcript,
    );
    expect(
      findTranscript({
        seat: e.seat,
        cwd: "/elsewhere",
        manager: { ...manager, start_time: "linux:other:1" },
        env: e.vars,
      }),
    ).toBeNull();
  });

  it("takes the context from the transcript's tail when current_usage is absent", () => {
    const e = env();
    const input = JSON.parse(INPUT);
    delete input.context_window.current_usage;
    input.transcript_path = join(FIXTURES, "transcript-limit.jsonl");
    const r = sheepdog(["statusline"], { env: e.vars, input: JSON.stringify(input) });
    expect(r.stdout).toBe(`${LINE}\n`);
    // total_input_tokens is a session total, never the context.
    delete input.transcript_path;
    const r2 = sheepdog(["statusline"], { env: e.vars, input: JSON.stringify(input) });
    expect(r2.stdout).toBe("Opus 4.6 · 5h 30% ↻10:00 · 7d 81%\n");
  });

  it.each([
    ["empty input", "", "sheepdog · no status input\n"],
    ["invalid JSON", "{not json", "sheepdog · unreadable status input\n"],
    ["garbage bytes", "\u0000\u00ff\ufffd", "sheepdog · unreadable status input\n"],
    ["a JSON array", "[1,2]", "sheepdog · no usage yet\n"],
    [
      "JSON without rate_limits",
      JSON.stringify({ ...JSON.parse(INPUT), rate_limits: undefined }),
      "Opus 4.6 · ctx 143k/200k\n",
    ],
    [
      "wrongly typed fields",
      JSON.stringify({
        model: "x",
        context_window: { current_usage: "lots" },
        rate_limits: { five_hour: { used_percentage: "30" }, seven_day: { used_percentage: 12 } },
      }),
      "x · 7d 12%\n",
    ],
    [
      "resets_at as an ISO string",
      JSON.stringify({
        rate_limits: { five_hour: { used_percentage: 30, resets_at: "2025-11-13T10:00:00Z" } },
      }),
      "5h 30% ↻10:00\n",
    ],
  ])("%s: prints a line and exits 0, quietly", (_name, input, expected) => {
    const e = env();
    const r = sheepdog(["statusline"], { env: e.vars, input });
    expect(r).toEqual({ code: 0, stdout: expected, stderr: "" });
  });

  it.each([
    ["1e20", 1e20],
    ["-1e20", -1e20],
    ["just past the last valid date (ms)", 8.64e15 + 1],
    ["an ISO string past the last valid date", "+275760-09-13T00:00:00.001Z"],
    ["zero", 0],
    ["a valid date in the year 33658 (epoch ms)", 1e15],
    ["a year from now", Math.floor(Date.now() / 1000) + 365 * 86400],
  ])("a bogus resets_at (%s) is unknown: no reset shown, none recorded", (_name, resets) => {
    const e = env();
    const input = JSON.stringify({
      model: { display_name: "Opus" },
      rate_limits: {
        five_hour: { used_percentage: 30, resets_at: resets },
        seven_day: { used_percentage: 81, resets_at: 1763460000 },
      },
    });
    const r = sheepdog(["statusline"], { env: { ...e.vars, SHEEPDOG_DEBUG: "1" }, input });
    expect(r).toEqual({ code: 0, stdout: "Opus · 5h 30% · 7d 81%\n", stderr: "" });
    expect(readings(e.state).rows).toEqual([
      expect.objectContaining({ window: "seven_day", resets_at: "2025-11-18T10:00:00.000Z" }),
    ]);
  });

  it("a model name near a megabyte is cut to one short field, not echoed whole (issue 18)", () => {
    const e = env();
    const input = JSON.stringify({
      model: { display_name: `Opus ${"x".repeat(900_000)}` },
      rate_limits: { seven_day: { used_percentage: 81 } },
    });
    const r = sheepdog(["statusline"], { env: e.vars, input });
    expect(r.code).toBe(0);
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe(`Opus ${"x".repeat(34)}… · 7d 81%\n`);
  });

  it("input past 1 MB is not read (DESIGN §18): one short line, exit 0", () => {
    const e = env();
    const input = JSON.stringify({
      model: { display_name: `Opus ${"x".repeat(4_000_000)}` },
      rate_limits: { seven_day: { used_percentage: 81 } },
    });
    const r = sheepdog(["statusline"], { env: e.vars, input });
    expect(r).toEqual({ code: 0, stdout: "sheepdog · unreadable status input\n", stderr: "" });
  });

  it("stays quiet when the state dir cannot be written", () => {
    const e = env();
    const r = sheepdog(["statusline"], {
      env: { ...e.vars, SHEEPDOG_STATE_DIR: "/proc/sheepdog-cannot-write" },
      input: INPUT,
    });
    expect(r).toEqual({ code: 0, stdout: `${LINE}\n`, stderr: "" });
  });
});
