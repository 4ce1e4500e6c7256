// Bounded for a year unattended (DESIGN §18, issue 31): manager.log rotates at 10 MB with two
// files kept, each start writes a header line (time, pid, launcher, why) and its exit status
// when the starting process sees it; evidence/ keeps the newest 20 folders and at most 50 MB;
// a journal over 64 MB is read from its end and rotated without being read whole (a sparse
// 600 MB file: V8 cannot hold it as one string). Simulated time through the clock-step hook.
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  truncateSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { sheepdog, sleeper } from "./helpers/cli.js";
import { startWatch } from "./helpers/watch.js";
import { cleanedUp, events, isAlive, ofType, tick, waitFor } from "./helpers/watchdog.js";

const { cleanups, program } = cleanedUp();
const MB = 1024 * 1024;

const logsOf = (stateDir: string) =>
  readdirSync(stateDir)
    .filter((n) => /^manager.*\.log$/.test(n))
    .sort();

describe("manager.log", () => {
  it("a chatty manager (12 MB a life): rotated at each start and tick, two files kept, each start headed", async () => {
    // Writes 12 MB, then ends: every start is a start that died without claiming.
    const chatty = `const line = "x".repeat(1023) + "\\n"; for (let i = 0; i < 12 * 1024; i++) process.stdout.write(line); process.exitCode = 3;`;
    const p = program(
      [],
      { claim_grace: "1s" },
      {
        manager: { launcher: "command", command: [process.execPath, "-e", chatty] },
      },
    );
    const log = join(p.stateDir, "manager.log");
    const lifeEnded = async (m: { pid: number; start_time: string }) =>
      waitFor(`pid ${m.pid}'s 12 MB`, () => {
        try {
          return statSync(log).size >= 12 * MB && !isAlive(m.pid, m.start_time);
        } catch {
          return false;
        }
      });
    const pids: number[] = [];
    for (let i = 0; i < 3; i++) {
      const r = tick(p.env);
      expect(r.code, r.stderr).toBe(0);
      const started = ofType(p.stateDir, "manager_started").at(-1) as unknown as {
        pid: number;
        start_time: string;
      };
      pids.push(started.pid);
      await lifeEnded(started);
    }
    expect(new Set(pids).size).toBe(3);
    // two files, never more; the older one is the last life but one, whole
    expect(logsOf(p.stateDir)).toEqual(["manager.1.log", "manager.log"]);
    const older = readFileSync(join(p.stateDir, "manager.1.log"), "utf8");
    const current = readFileSync(log, "utf8");
    expect(older.split("\n")[0]).toMatch(
      new RegExp(
        `^--- sheepdog \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z: started pid ${pids[1]} \\(launcher command\\): .+ ---$`,
      ),
    );
    expect(current.split("\n")[0]).toContain(`started pid ${pids[2]} (launcher command)`);
    expect(statSync(join(p.stateDir, "manager.1.log")).size).toBeLessThan(13 * MB);
    expect(statSync(join(p.stateDir, "manager.1.log")).mode & 0o777).toBe(0o600);
    // a tick cuts even a life in progress: the current log, past 10 MB, is rotated by the next
    const before = statSync(log).size;
    expect(before).toBeGreaterThanOrEqual(10 * MB);
    const r = tick(p.env);
    expect(r.code).toBe(0);
    expect(readFileSync(join(p.stateDir, "manager.1.log"), "utf8").split("\n")[0]).toContain(
      `started pid ${pids[2]}`,
    );
    expect(logsOf(p.stateDir)).toEqual(["manager.1.log", "manager.log"]);
  });

  it("under watch, the process that started the manager writes its exit status", async () => {
    const p = program(
      [],
      { claim_grace: "1s", crash_loop: { starts: 1, within: "1h" } },
      {
        manager: {
          launcher: "command",
          command: [process.execPath, "-e", "console.log('bye'); process.exit(7)"],
        },
      },
    );
    const w = startWatch(p.env, ["--program", p.root, "--json"], cleanups);
    const log = join(p.stateDir, "manager.log");
    await waitFor("the exit status in manager.log", () =>
      existsSync(log) ? /exited with status 7 ---$/m.test(readFileSync(log, "utf8")) : false,
    );
    await w.stop();
    const lines = readFileSync(log, "utf8").trim().split("\n");
    const pid = (ofType(p.stateDir, "manager_started")[0] as unknown as { pid: number }).pid;
    // The header is written once the spawn returns: a manager that prints at once may come
    // first (the log is shared from its first instant). Its exit status comes last.
    const header = new RegExp(
      `^--- sheepdog .+Z: started pid ${pid} \\(launcher command\\): the program's first start ---$`,
    );
    expect(lines.slice(0, 2)).toContain("bye");
    expect(lines.slice(0, 2).filter((l) => header.test(l))).toHaveLength(1);
    expect(lines[2]).toMatch(new RegExp(`^--- sheepdog .+Z: pid ${pid} exited with status 7 ---$`));
  });
});

describe("evidence/", () => {
  it("keeps the newest 20 folders and at most 50 MB, the new one always", () => {
    const p = program();
    const base = join(p.stateDir, "evidence");
    // 30 older folders, the 3 newest of them 20 MB each (sparse: the disk holds none of it)
    for (let i = 0; i < 30; i++) {
      const dir = join(base, `20200101T0000${String(i).padStart(2, "0")}Z-${100 + i}`);
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, "README.txt"), "old\n");
      if (i >= 27) {
        writeFileSync(join(dir, "transcript-tail.jsonl"), "");
        truncateSync(join(dir, "transcript-tail.jsonl"), 20 * MB);
      }
    }
    // a live holder whose last save is an hour old on the test's clock: stopped as stuck
    const manager = sleeper();
    cleanups.push(() => manager.kill("SIGKILL"));
    const pid = String(manager.pid);
    expect(sheepdog(["claim", "acquire", "--pid", pid], { env: p.env }).code).toBe(0);
    expect(sheepdog(["save", "--pid", pid, "--transcript", "/none"], { env: p.env }).code).toBe(0);
    const clock = join(p.home, "clock");
    writeFileSync(clock, String(2 * 3600_000));
    const r = tick({ ...p.env, SHEEPDOG_CLOCK_FILE: clock });
    expect(r.report.decision).toBe("restart_stuck");
    const kept = readdirSync(base).sort();
    const fresh = kept.find((n) => n.endsWith(`-${pid}`));
    expect(fresh).toBeDefined();
    // newest first: the new one, then 29 and 28 (40 MB); 27 would pass 50 MB, so it and all older go
    expect(kept).toEqual(["20200101T000028Z-128", "20200101T000029Z-129", fresh]);
  });
});

describe("a journal too large to read whole", () => {
  it("600 MB: status, journal and save still work, reading its end; it rotates without being read whole", () => {
    const p = program();
    const manager = sleeper();
    cleanups.push(() => manager.kill("SIGKILL"));
    const pid = String(manager.pid);
    expect(sheepdog(["claim", "acquire", "--pid", pid], { env: p.env }).code).toBe(0);
    const journal = join(p.stateDir, "journal.jsonl");
    const head = readFileSync(journal, "utf8");
    // a 600 MB hole (sparse: nothing on the disk), then the program's newest events
    writeFileSync(journal, "");
    truncateSync(journal, 600 * MB);
    const stood = { at: new Date().toISOString(), type: "stood_down", reason: "a test stand-down" };
    writeFileSync(journal, `\n${head}${JSON.stringify(stood)}\n`, { flag: "a" });

    const status = sheepdog(["status", "--json"], { env: p.env });
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout).programs[0].facts.stood_down).toMatchObject({
      reason: "a test stand-down",
    });
    const lines = sheepdog(["journal", "--json"], { env: p.env });
    expect(lines.code, lines.stderr).toBe(0);
    expect(JSON.parse(lines.stdout).events.map((e: { type: string }) => e.type)).toContain(
      "stood_down",
    );
    // save appends, and the 600 MB file rotates away (renamed, its end read for what to carry)
    const save = sheepdog(["save", "--pid", pid, "--transcript", "/none"], { env: p.env });
    expect(save.code, save.stderr).toBe(0);
    expect(statSync(journal).size).toBeLessThan(MB);
    expect(statSync(join(p.stateDir, "journal.1.jsonl")).size).toBeGreaterThan(600 * MB);
    // and once more, the 600 MB file now leaving replay's view: its end is read, not the whole
    const tiny = { ...p.env, SHEEPDOG_JOURNAL_MAX_BYTES: "100" };
    const again = sheepdog(["save", "--pid", pid, "--transcript", "/none"], { env: tiny });
    expect(again.code, again.stderr).toBe(0);
    expect(statSync(join(p.stateDir, "journal.2.jsonl")).size).toBeGreaterThan(600 * MB);
    const carried = events(p.stateDir).filter((e) => e.carried);
    expect(carried.map((e) => e.type)).toContain("stood_down");
    expect(
      JSON.parse(sheepdog(["status", "--json"], { env: p.env }).stdout).programs[0].facts
        .stood_down,
    ).toMatchObject({ reason: "a test stand-down" });
  });
});
