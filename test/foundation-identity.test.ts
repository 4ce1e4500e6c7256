import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { isPassThrough } from "../src/process/manager.js";
import { sheepdog, tempProgram } from "./helpers/cli.js";
import {
  cliWords,
  journalLines,
  killAll,
  managerRunning,
  patchJson,
  procState,
  track,
  waitFor,
  zombieMaker,
} from "./helpers/foundation.js";

afterEach(killAll);

const holderFile = (stateDir: string) => join(stateDir, "claim", "holder.json");

/** Field 22 of /proc/PID/stat: the start time the claim must record. */
function startTicks(pid: number): string {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19] as string;
}

function show(env: NodeJS.ProcessEnv) {
  const r = sheepdog(["claim", "show", "--json"], { env });
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout);
}

function acquire(env: NodeJS.ProcessEnv, pid: number, ...extra: string[]) {
  return sheepdog(["claim", "acquire", "--pid", String(pid), ...extra], { env });
}

function liveProcess(): ChildProcess {
  return track(spawn("sleep", ["600"], { stdio: "ignore" }));
}

describe("a holder that is not the process it names counts as dead", () => {
  it("pid alive but start_time differs (pid reused): dead; only --break-stale takes it", () => {
    const p = tempProgram("reused");
    const old = liveProcess();
    const next = liveProcess();
    expect(acquire(p.env, old.pid as number).code).toBe(0);
    const holder = JSON.parse(readFileSync(holderFile(p.stateDir), "utf8"));
    expect(holder.start_time).toMatch(new RegExp(`:${startTicks(old.pid as number)}$`));
    expect(show(p.env)).toMatchObject({ held: true, alive: true, foreign: false });

    // Same pid, another start: what a reused pid looks like.
    patchJson(holderFile(p.stateDir), {
      start_time: holder.start_time.replace(/:\d+$/, ":12345"),
    });
    expect(show(p.env)).toMatchObject({ held: true, alive: false, foreign: false, why: "reused" });

    const plain = acquire(p.env, next.pid as number);
    expect(plain.code).toBe(3);
    expect(plain.stderr).toMatch(
      new RegExp(`pid ${old.pid} .*dead: its pid now belongs to another process.*--break-stale`),
    );
    expect(JSON.parse(readFileSync(holderFile(p.stateDir), "utf8")).pid).toBe(old.pid);

    const broke = acquire(p.env, next.pid as number, "--break-stale");
    expect(broke.code, broke.stderr).toBe(0);
    expect(show(p.env)).toMatchObject({ held: true, alive: true, holder: { pid: next.pid } });
    const events = journalLines(p.stateDir);
    expect(events.filter((e) => e.type === "claim_broken")).toEqual([
      expect.objectContaining({ pid: old.pid, holder_state: "reused" }),
    ]);
    expect(events.at(-1)).toMatchObject({ type: "claimed", pid: next.pid });
  });

  it("a killed holder that is still an unreaped zombie is dead", async () => {
    const p = tempProgram("zombie");
    const { childPid } = await zombieMaker();
    const next = liveProcess();
    expect(acquire(p.env, childPid).code).toBe(0);
    expect(show(p.env)).toMatchObject({ alive: true });

    process.kill(childPid, "SIGKILL");
    await waitFor("the child to become a zombie", () => procState(childPid) === "Z");
    expect(procState(childPid)).toBe("Z"); // still in the process table

    expect(show(p.env)).toMatchObject({ held: true, alive: false, why: "dead" });
    // A zombie cannot be named as a manager either.
    const asManager = acquire(p.env, childPid);
    expect(asManager.code).toBe(2);
    expect(asManager.stderr).toMatch(new RegExp(`--pid ${childPid}: no such live process`));

    const plain = acquire(p.env, next.pid as number);
    expect(plain.code).toBe(3);
    expect(plain.stderr).toMatch(new RegExp(`pid ${childPid} .*\\(dead\\).*--break-stale`));
    const broke = acquire(p.env, next.pid as number, "--break-stale");
    expect(broke.code, broke.stderr).toBe(0);
    expect(journalLines(p.stateDir).filter((e) => e.type === "claim_broken")).toEqual([
      expect.objectContaining({ pid: childPid, holder_state: "dead" }),
    ]);
  });

  it("a holder on another machine is never broken, alive or not", async () => {
    const p = tempProgram("foreign");
    const gone = liveProcess();
    const next = liveProcess();
    expect(acquire(p.env, gone.pid as number).code).toBe(0);
    patchJson(holderFile(p.stateDir), { machine_id: "0123456789abcdef", hostname: "elsewhere" });
    // Even a pid that is dead here says nothing about a process on another machine.
    gone.kill("SIGKILL");
    await waitFor("the process to go", () => procState(gone.pid as number) === null);
    const before = readFileSync(holderFile(p.stateDir));

    expect(show(p.env)).toMatchObject({ held: true, alive: null, foreign: true });
    for (const extra of [[], ["--break-stale"]]) {
      const r = acquire(p.env, next.pid as number, ...extra);
      expect(r.code).toBe(3);
      expect(r.stderr).toMatch(/on elsewhere.*on another machine.*never broken here/);
    }
    expect(readFileSync(holderFile(p.stateDir)).equals(before)).toBe(true);
    expect(journalLines(p.stateDir).filter((e) => e.type === "claim_broken")).toEqual([]);
  });

  const UNREADABLE: { what: string; make: (claimDir: string) => void; problem: RegExp }[] = [
    {
      what: "not JSON",
      make: (d) => writeFileSync(join(d, "holder.json"), '{"pid": 12'),
      problem: /claim\/holder\.json is not valid JSON/,
    },
    {
      what: "a field of the wrong type",
      make: (d) => patchJson(join(d, "holder.json"), { pid: "twelve" }),
      problem: /claim\/holder\.json: field pid is invalid/,
    },
    {
      what: "missing",
      make: (d) => rmSync(join(d, "holder.json")),
      problem: /claim\/holder\.json is missing/,
    },
  ];

  it.each(UNREADABLE)(
    "an unreadable holder.json ($what) counts as dead; breaking it journals why",
    ({ make, problem }) => {
      const p = tempProgram("unreadable");
      const first = liveProcess();
      const next = liveProcess();
      expect(acquire(p.env, first.pid as number).code).toBe(0);
      make(join(p.stateDir, "claim"));

      expect(show(p.env)).toMatchObject({
        held: true,
        holder: null,
        alive: false,
        foreign: false,
        why: "unreadable",
      });
      const text = sheepdog(["claim", "show"], { env: p.env });
      expect(text.stdout).toMatch(problem);

      const plain = acquire(p.env, next.pid as number);
      expect(plain.code).toBe(3);
      expect(plain.stderr).toMatch(problem);
      expect(plain.stderr).toMatch(/--break-stale/);

      const broke = acquire(p.env, next.pid as number, "--break-stale");
      expect(broke.code, broke.stderr).toBe(0);
      const broken = journalLines(p.stateDir).filter((e) => e.type === "claim_broken");
      expect(broken).toHaveLength(1);
      expect(broken[0]).toMatchObject({ holder_state: "unreadable" });
      expect(String(broken[0]?.problem)).toMatch(problem);
      expect(String(broken[0]?.reason)).toMatch(problem);
      expect(show(p.env)).toMatchObject({ alive: true, holder: { pid: next.pid } });
    },
  );

  it("an empty claim/ made by hand is not silently taken", () => {
    const p = tempProgram("empty");
    const m = liveProcess();
    mkdirSync(join(p.stateDir, "claim"), { recursive: true, mode: 0o700 });
    const r = acquire(p.env, m.pid as number);
    expect(r.code).toBe(3);
    expect(existsSync(holderFile(p.stateDir))).toBe(false);
    expect(acquire(p.env, m.pid as number, "--break-stale").code).toBe(0);
  });
});

describe("isPassThrough", () => {
  const CASES: [string, string[], boolean][] = [
    ["sh", ["/bin/sh", "-c", "sheepdog save"], true],
    ["bash", ["bash"], true],
    ["-zsh", ["-zsh"], true],
    ["dash", ["/usr/bin/dash"], true],
    ["fish", ["/opt/homebrew/bin/fish"], true],
    ["env", ["/usr/bin/env", "FOO=1", "node"], true],
    ["npm exec", ["npm exec sheepdog save"], true],
    ["node", ["node", "/usr/lib/node_modules/npm/bin/npm-cli.js", "exec"], true],
    ["node", ["/usr/bin/node", "/usr/lib/node_modules/npm/bin/npx-cli.js", "sheepdog"], true],
    ["node", ["node", "/home/u/.local/share/pnpm/pnpm.cjs", "exec"], true],
    ["node", ["node", "/usr/local/bin/sheepdog", "save"], true],
    ["node", ["node", "/opt/sheepdog/dist/cli.js", "claim"], true],
    ["sheepdog save", ["sheepdog save"], true],
    ["node", ["node", "-e", "setTimeout(() => {}, 1e6)"], false],
    ["node", ["node", "/home/u/toy-manager.mjs"], false],
    ["claude", ["claude", "--dangerously-skip-permissions"], false],
    ["python3", ["python3", "manager.py"], false],
    ["tmux: server", ["tmux", "new-session"], false],
  ];
  it.each(CASES)("%s %j → %s", (comm, argv, expected) => {
    expect(isPassThrough(comm, argv)).toBe(expected);
  });
});

describe("the default manager is the nearest ancestor that is not a shell, wrapper or sheepdog", () => {
  const cli = cliWords();
  const ROUTES: { what: string; command: string }[] = [
    { what: "sh -c", command: `${cli} claim acquire --json; exit $?` },
    {
      what: "sh → bash → env",
      command: `bash -c "env SHEEPDOG_TEST=1 ${cli.replace(/'/g, "")} claim acquire --json; exit \\$?"; exit $?`,
    },
    {
      what: "npm exec",
      command: `npm exec --yes=false --offline -c "${cli.replace(/'/g, "")} claim acquire --json"; exit $?`,
    },
  ];

  it.each(ROUTES)(
    "through $what: the long-running node process holds the claim",
    async ({ command }) => {
      const p = tempProgram("chain");
      const { manager, code, stdout, stderr } = await managerRunning(command, {
        cwd: p.root,
        env: p.env,
      });
      expect(code, stderr).toBe(0);
      const pid = manager.pid as number;
      expect(JSON.parse(stdout.trim())).toMatchObject({ acquired: true, holder: { pid } });
      const holder = JSON.parse(readFileSync(holderFile(p.stateDir), "utf8"));
      expect(holder.pid).toBe(pid);
      expect(holder.start_time).toMatch(new RegExp(`:${startTicks(pid)}$`));
      expect(show(p.env)).toMatchObject({ alive: true, holder: { pid } });

      // The same manager, through a fresh shell, is recognised as the holder and may release.
      const again = await managerRunning(`${cli} claim release; exit $?`, {
        cwd: p.root,
        env: p.env,
      });
      expect(again.code).toBe(3); // another node process: not the holder
      expect(again.stderr).toMatch(new RegExp(`pid ${again.manager.pid} is not the holder`));
    },
    120_000, // npm exec starts npm itself: slow on a loaded machine
  );

  it("a holder releases through its own shell", async () => {
    const p = tempProgram("own");
    const script = `
      const { execSync } = require("node:child_process");
      const run = (a) => { try { execSync(process.env.CLI + " " + a + "; exit $?", { stdio: "pipe" }); return 0; } catch (e) { return e.status; } };
      const a = run("claim acquire"); const r = run("claim release");
      process.stdout.write(JSON.stringify({ a, r }) + "\\n");
      setTimeout(() => {}, 600000);
    `;
    const m = track(
      spawn(process.execPath, ["-e", script], {
        env: { ...process.env, ...p.env, CLI: cli },
        stdio: ["ignore", "pipe", "inherit"],
      }),
    );
    const line = await new Promise<string>((done) =>
      m.stdout?.once("data", (d) => done(String(d))),
    );
    expect(JSON.parse(line)).toEqual({ a: 0, r: 0 });
    const events = journalLines(p.stateDir).map((e) => [e.type, e.pid]);
    expect(events).toEqual([
      ["claimed", m.pid],
      ["released", m.pid],
    ]);
  });

  it("--pid names a process that does not exist → exit 2", () => {
    const p = tempProgram("nopid");
    const r = sheepdog(["claim", "acquire", "--pid", "999999999"], { env: p.env });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--pid 999999999: no such live process/);
  });
});
