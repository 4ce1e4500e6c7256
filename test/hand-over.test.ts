import type { ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { SAVE_KEYS, sheepdog, sleeper, tempProgram } from "./helpers/cli.js";
import { FIXTURES } from "./helpers/fixtures.js";
import { bareRemote, gitEnv, gitOut, workRepo } from "./helpers/manager-side.js";

const FIXTURE = join(FIXTURES, "transcript-basic.jsonl");
// The fixture's context is 5 + 2210 + 140995 = 143210 (test/fixtures/README.md).

const started: ChildProcess[] = [];
function manager(): string {
  const p = sleeper();
  started.push(p);
  return String(p.pid);
}
afterAll(() => {
  for (const p of started) p.kill("SIGKILL");
});

function events(stateDir: string): Record<string, unknown>[] {
  const file = join(stateDir, "journal.jsonl");
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

function claimed(p: ReturnType<typeof tempProgram>, pid: string) {
  const r = sheepdog(["claim", "acquire", "--pid", pid], { env: p.env });
  expect(r.code, r.stderr).toBe(0);
}

describe("hand-over", () => {
  it("by the holder: journals hand_over (note, progress, context), stamps, releases the claim", () => {
    const p = tempProgram("demo", { hand_over_tokens: 100000 });
    const pid = manager();
    claimed(p, pid);
    const r = sheepdog(
      [
        "hand-over",
        "--pid",
        pid,
        "--note",
        "item 12 half done; see LEDGER.md",
        "--progress",
        "items-done:11",
        "--transcript",
        FIXTURE,
      ],
      { env: p.env },
    );
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(Object.keys(out).sort()).toEqual([...SAVE_KEYS].sort());
    expect(out).toMatchObject({
      program: "demo",
      pushed: null,
      transcript: FIXTURE,
      hand_over_at: 100000,
    });

    expect(existsSync(join(p.stateDir, "claim"))).toBe(false);
    const beat = JSON.parse(readFileSync(join(p.stateDir, "heartbeat.json"), "utf8"));
    expect(beat.pid).toBe(Number(pid));

    const evs = events(p.stateDir);
    const types = evs.map((e) => e.type);
    expect(types.slice(-2)).toEqual(["hand_over", "released"]); // the reason is there before the claim goes
    const ho = evs.find((e) => e.type === "hand_over");
    expect(ho).toMatchObject({
      pid: Number(pid),
      note: "item 12 half done; see LEDGER.md",
      progress: "items-done:11",
    });
    expect(ho?.context_tokens).toBe(143210);
    expect(out).toMatchObject({ context_tokens: 143210, hand_over: true });
    expect(evs.at(-1)).toMatchObject({ type: "released", pid: Number(pid) });

    // Released: a second hand-over by the same manager is refused (it no longer holds it).
    const again = sheepdog(["hand-over", "--pid", pid, "--note", "again"], { env: p.env });
    expect(again.code).toBe(3);
  });

  it("by someone else: exit 3 naming the holder, and nothing changes", () => {
    const p = tempProgram();
    const holder = manager();
    const other = manager();
    claimed(p, holder);
    const before = readFileSync(join(p.stateDir, "journal.jsonl"), "utf8");
    const holderJson = readFileSync(join(p.stateDir, "claim", "holder.json"), "utf8");
    const r = sheepdog(["hand-over", "--pid", other, "--note", "not mine"], { env: p.env });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain(`pid ${holder}`);
    expect(r.stdout).toBe("");
    expect(readFileSync(join(p.stateDir, "journal.jsonl"), "utf8")).toBe(before);
    expect(readFileSync(join(p.stateDir, "claim", "holder.json"), "utf8")).toBe(holderJson);
    expect(existsSync(join(p.stateDir, "heartbeat.json"))).toBe(false);
  });

  it("with no claim at all: exit 3", () => {
    const p = tempProgram();
    const r = sheepdog(["hand-over", "--pid", manager(), "--note", "x"], { env: p.env });
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/nobody holds the claim/);
  });

  it("without --note (or with an empty one): exit 2, nothing changes", () => {
    const p = tempProgram();
    const pid = manager();
    claimed(p, pid);
    const before = readFileSync(join(p.stateDir, "journal.jsonl"), "utf8");
    for (const args of [[], ["--note", ""], ["--note", "  "]]) {
      const r = sheepdog(["hand-over", "--pid", pid, ...args], { env: p.env });
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/--note/);
    }
    expect(readFileSync(join(p.stateDir, "journal.jsonl"), "utf8")).toBe(before);
    expect(existsSync(join(p.stateDir, "claim"))).toBe(true);
  });

  it("pushes the ledger like save, and takes the progress fingerprint from progress.paths", () => {
    const p = tempProgram("demo", {
      ledger: { repo: "ledger" },
      progress: { paths: ["runs/*/*.done"] },
    });
    const env = { ...p.env, ...gitEnv(p.home) };
    const remote = bareRemote(env);
    const ledger = workRepo(join(p.root, "ledger"), env, remote);
    writeFileSync(join(ledger, "LEDGER.md"), "handing over\n");
    mkdirSync(join(p.root, "runs/a"), { recursive: true });
    writeFileSync(join(p.root, "runs/a/1.done"), "");
    const pid = manager();
    claimed(p, pid);
    const r = sheepdog(["hand-over", "--pid", pid, "--note", "context full"], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).pushed).toBe(true);
    expect(gitOut(remote, ["rev-parse", "ledger"], env)).toBe(
      gitOut(ledger, ["rev-parse", "HEAD"], env),
    );
    const ho = events(p.stateDir).find((e) => e.type === "hand_over");
    expect(ho?.progress).toMatch(/^sha256:[0-9a-f]{16}$/);
    expect(ho?.pushed).toBe(true);
  });
});
