import { spawn } from "node:child_process";
import { existsSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  SAVE_KEYS,
  sheepdog,
  sheepdogAsync,
  sleeper,
  tempDir,
  tempProgram,
} from "./helpers/cli.js";
import {
  cliWords,
  firstLine,
  journalLines,
  killAll,
  managerRunning,
  readJson,
  track,
  waitFor,
} from "./helpers/foundation.js";

afterEach(killAll);

/** A program whose seat is an empty folder: no transcript, so context_tokens is null. */
function program(name: string, config: Record<string, unknown> = {}) {
  const p = tempProgram(name, config);
  return { ...p, env: { ...p.env, CLAUDE_CONFIG_DIR: tempDir("sheepdog-seat-") } };
}

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

describe("save", () => {
  it("through sh -c from a long-running node process: stamps that process's pid; never refuses", async () => {
    const p = program("shell", { hand_over_tokens: 1234 });
    const { manager, code, stdout, stderr } = await managerRunning(
      `${cliWords()} save --progress "step 3"; exit $?`,
      { cwd: p.root, env: p.env },
    );
    expect(code, stderr).toBe(0);
    const out = JSON.parse(stdout);
    expect(Object.keys(out)).toEqual(SAVE_KEYS);
    expect(out).toMatchObject({
      program: "shell",
      pushed: null,
      context_tokens: null,
      hand_over: false,
      hand_over_at: 1234,
      transcript: null,
      pause: null,
      stood_down: null,
    });
    expect(out.saved_at).toMatch(ISO);
    // No claim: still saved (exit 0), with a notice saying so.
    expect(out.notices).toContainEqual(
      expect.stringMatching(/does not hold the claim.*claim acquire/),
    );

    const beat = readJson(join(p.stateDir, "heartbeat.json"));
    expect(beat).toMatchObject({ pid: manager.pid, context_tokens: null });
    // Stamped during this save (before its answer was put together).
    expect(beat.at).toMatch(ISO);
    expect(Date.parse(String(beat.at))).toBeLessThanOrEqual(Date.parse(out.saved_at));
    const events = journalLines(p.stateDir);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      at: out.saved_at,
      type: "saved",
      pid: manager.pid,
      context_tokens: null,
      progress: "step 3",
      pushed: null,
    });
  });

  it("--pid names the manager; the holder's save has no notices, another's says who holds it and stamps no heartbeat over a live holder's", async () => {
    const p = program("pid");
    const holder = track(sleeper());
    const other = track(sleeper());
    expect(sheepdog(["claim", "acquire", "--pid", String(holder.pid)], { env: p.env }).code).toBe(
      0,
    );

    const mine = sheepdog(["save", "--pid", String(holder.pid)], { env: p.env });
    expect(mine.code, mine.stderr).toBe(0);
    expect(JSON.parse(mine.stdout).notices.filter((n: string) => /claim/.test(n))).toEqual([]);
    expect(readJson(join(p.stateDir, "heartbeat.json")).pid).toBe(holder.pid);

    const theirs = sheepdog(["save", "--pid", String(other.pid)], { env: p.env });
    expect(theirs.code, theirs.stderr).toBe(0);
    expect(JSON.parse(theirs.stdout).notices).toContain(
      `the heartbeat was not stamped because pid ${holder.pid} holds the claim (this is pid ${other.pid})`,
    );
    // The live holder's heartbeat is not overwritten; the save is still journaled.
    expect(readJson(join(p.stateDir, "heartbeat.json")).pid).toBe(holder.pid);
    const saved = journalLines(p.stateDir).filter((e) => e.type === "saved");
    expect(saved.map((e) => e.pid)).toEqual([holder.pid, other.pid]);

    // A dead holder's claim: the save stamps, and says who holds the claim.
    holder.kill("SIGKILL");
    await waitFor("the holder to die", () => holder.signalCode !== null);
    const after = sheepdog(["save", "--pid", String(other.pid)], { env: p.env });
    expect(after.code, after.stderr).toBe(0);
    expect(JSON.parse(after.stdout).notices).toContain(
      `the claim is held by pid ${holder.pid}, not by this manager (pid ${other.pid})`,
    );
    expect(readJson(join(p.stateDir, "heartbeat.json")).pid).toBe(other.pid);
  });

  it("rewrites heartbeat.json atomically: a reader polling it never sees it partial", async () => {
    const p = program("atomic");
    const m = track(sleeper());
    expect(sheepdog(["save", "--pid", String(m.pid)], { env: p.env }).code).toBe(0);
    const beatPath = join(p.stateDir, "heartbeat.json");
    const stop = join(tempDir(), "stop");
    const reader = track(
      spawn(
        process.execPath,
        [
          "-e",
          `
          const fs = require("node:fs");
          const [path, stop] = process.argv.slice(1);
          let reads = 0, bad = 0, sample = "";
          process.stdout.write("ready\\n");
          while (!fs.existsSync(stop)) {
            let text = "";
            try { text = fs.readFileSync(path, "utf8"); JSON.parse(text); reads++; }
            catch (e) { bad++; sample = String(e.message) + " " + JSON.stringify(text.slice(0, 40)); }
          }
          process.stdout.write(JSON.stringify({ reads, bad, sample }) + "\\n");
          `,
          beatPath,
          stop,
        ],
        { stdio: ["ignore", "pipe", "inherit"] },
      ),
    );
    let out = "";
    reader.stdout?.on("data", (d) => {
      out += d;
    });
    await firstLine(reader, "reader");
    // Saves from several processes at once, each rewriting the heartbeat.
    for (let round = 0; round < 3; round++) {
      const results = await Promise.all(
        Array.from({ length: 6 }, () =>
          sheepdogAsync(["save", "--pid", String(m.pid)], { env: p.env }),
        ),
      );
      expect(results.map((r) => r.code)).toEqual(Array(6).fill(0));
    }
    writeFileSync(stop, "");
    await new Promise((r) => reader.once("exit", r));
    const seen = JSON.parse(out.trim().split("\n").at(-1) as string);
    expect(seen.bad, seen.sample).toBe(0);
    expect(seen.reads).toBeGreaterThan(0);
    expect(readdirSync(p.stateDir).filter((n) => n.endsWith(".tmp"))).toEqual([]);
    expect(journalLines(p.stateDir).filter((e) => e.type === "saved")).toHaveLength(19);
  });

  it("reports a pause and a stand-down from the journal", () => {
    const p = program("word");
    const m = track(sleeper());
    expect(sheepdog(["save", "--pid", String(m.pid)], { env: p.env }).code).toBe(0);
    const until = new Date(Date.now() + 3_600_000).toISOString();
    writeFileSync(
      join(p.stateDir, "journal.jsonl"),
      `${[
        { at: new Date().toISOString(), type: "paused", until, reason: "five_hour at 100%" },
        { at: new Date().toISOString(), type: "stood_down", reason: "crash loop" },
      ]
        .map((e) => JSON.stringify(e))
        .join("\n")}\n`,
      { flag: "a" },
    );
    const out = JSON.parse(sheepdog(["save", "--pid", String(m.pid)], { env: p.env }).stdout);
    expect(out.pause).toEqual({ until, reason: "five_hour at 100%" });
    expect(out.stood_down).toEqual({ reason: "crash loop" });
    expect(out.notices).toContain(`the program is paused until ${until}: save and stop`);
  });

  it("bad usage is exit 2 and stamps nothing", () => {
    const p = program("bad-save");
    for (const args of [
      ["save", "--pid", "999999999"],
      ["save", "--pid", "x"],
      ["save", "extra"],
      ["save", "--bogus"],
    ]) {
      const r = sheepdog(args, { env: p.env });
      expect(r.code, args.join(" ")).toBe(2);
    }
    // Not even the state directory: a bad --pid is found before anything is created.
    expect(existsSync(p.stateDir)).toBe(false);
  });
});
