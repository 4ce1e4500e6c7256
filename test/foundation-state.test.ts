import { type ChildProcess, spawnSync } from "node:child_process";
import {
  chmodSync,
  chownSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sheepdog, sleeper, tempProgram } from "./helpers/cli.js";
import { cliWords, killAll, track } from "./helpers/foundation.js";

let live: ChildProcess;
beforeAll(() => {
  live = track(sleeper());
});
afterAll(killAll);

const mode = (path: string) => (statSync(path).mode & 0o777).toString(8).padStart(4, "0");

/** Every file and directory under `dir`, with its mode and content, to prove nothing changed. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      const path = join(d, name);
      const st = statSync(path);
      out[path] = `${st.mode.toString(8)} ${st.isDirectory() ? "dir" : readFileSync(path, "utf8")}`;
      if (st.isDirectory()) walk(path);
    }
  };
  walk(dir);
  return out;
}

function everyCommand(pid: number): string[][] {
  return [
    ["check"],
    ["claim", "show", "--json"],
    ["claim", "show"],
    ["claim", "acquire", "--pid", String(pid)],
    ["claim", "release", "--force", "--note", "testing"],
    ["save", "--pid", String(pid)],
    ["journal"],
    ["journal", "--json"],
  ];
}

describe("state directory modes", () => {
  it("is created 0700 with files 0600, whatever the umask", () => {
    const p = tempProgram("modes");
    const env = { ...p.env, SHEEPDOG_JOURNAL_MAX_BYTES: "400" };
    // Through a shell with umask 000: a careless umask must not widen anything.
    const run = (args: string) => {
      const r = spawnSync("/bin/sh", ["-c", `umask 000; ${cliWords()} ${args}`], {
        env: { ...process.env, ...env },
        encoding: "utf8",
      });
      expect(r.status, r.stderr).toBe(0);
    };
    run(`claim acquire --pid ${live.pid}`);
    for (let i = 0; i < 4; i++) run(`save --pid ${live.pid}`);

    expect(mode(p.stateDir)).toBe("0700");
    expect(mode(join(p.stateDir, "claim"))).toBe("0700");
    const files = [
      "claim/holder.json",
      "heartbeat.json",
      "journal.jsonl",
      "journal.1.jsonl", // rotated with the tiny limit above
    ];
    for (const f of files) expect(`${f} ${mode(join(p.stateDir, f))}`).toBe(`${f} 0600`);
    // Nothing else (no temp files, no lock left behind).
    expect(readdirSync(p.stateDir).sort()).toEqual(
      expect.arrayContaining(["claim", "heartbeat.json", "journal.jsonl", "journal.1.jsonl"]),
    );
    // .gitignore (`*`) keeps the folder out of any repository (DESIGN §18).
    expect(mode(join(p.stateDir, ".gitignore"))).toBe("0600");
    expect(readFileSync(join(p.stateDir, ".gitignore"), "utf8")).toMatch(/^\*$/m);
    expect(
      readdirSync(p.stateDir).filter(
        (n) => (n.startsWith(".") && n !== ".gitignore") || n.endsWith(".lock"),
      ),
    ).toEqual([]);
  });
});

describe("an unsafe state directory: every command refuses with exit 2, naming it and why", () => {
  const MODES: { mode: number; why: RegExp }[] = [
    { mode: 0o777, why: /is world-writable \(mode 0777\); fix with: chmod 700/ },
    { mode: 0o770, why: /is group-writable \(mode 0770\); fix with: chmod 700/ },
    { mode: 0o702, why: /is world-writable \(mode 0702\)/ },
    { mode: 0o720, why: /is group-writable \(mode 0720\)/ },
  ];

  it.each(MODES)("mode $mode", ({ mode: m, why }) => {
    const p = tempProgram("unsafe");
    expect(sheepdog(["save", "--pid", String(live.pid)], { env: p.env }).code).toBe(0);
    chmodSync(p.stateDir, m);
    const before = snapshot(p.stateDir);
    for (const args of everyCommand(live.pid as number)) {
      const r = sheepdog(args, { env: p.env });
      expect(r.code, args.join(" ")).toBe(2);
      expect(r.stderr).toContain(`unsafe state directory: ${p.stateDir}: `);
      expect(r.stderr).toMatch(why);
      expect(r.stdout).toBe("");
    }
    expect(snapshot(p.stateDir)).toEqual(before);
    chmodSync(p.stateDir, 0o700);
    expect(sheepdog(["check"], { env: p.env }).code).toBe(0);
  });

  it.skipIf(process.getuid?.() !== 0)("owned by another user", () => {
    const p = tempProgram("owner");
    mkdirSync(p.stateDir, { mode: 0o700 });
    chownSync(p.stateDir, 4242, 4242);
    for (const args of everyCommand(live.pid as number)) {
      const r = sheepdog(args, { env: p.env });
      expect(r.code, args.join(" ")).toBe(2);
      expect(r.stderr).toContain(`${p.stateDir}: owned by uid 4242, not by you (uid 0)`);
    }
    expect(readdirSync(p.stateDir)).toEqual([]);
  });

  it("a symbolic link or a plain file in its place", () => {
    const p = tempProgram("link");
    const elsewhere = join(p.home, "elsewhere");
    mkdirSync(elsewhere, { mode: 0o700 });
    symlinkSync(elsewhere, p.stateDir);
    for (const args of everyCommand(live.pid as number)) {
      const r = sheepdog(args, { env: p.env });
      expect(r.code, args.join(" ")).toBe(2);
      expect(r.stderr).toContain(`${p.stateDir}: is not a directory (a symbolic link)`);
    }
    expect(readdirSync(elsewhere)).toEqual([]);

    renameSync(p.stateDir, join(p.home, "old-link"));
    writeFileSync(p.stateDir, "not a directory\n");
    const r = sheepdog(["save", "--pid", String(live.pid)], { env: p.env });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${p.stateDir}: is not a directory`);
  });

  it("a state directory that is only readable by others is fine", () => {
    const p = tempProgram("readable");
    mkdirSync(p.stateDir, { mode: 0o700 });
    chmodSync(p.stateDir, 0o755);
    expect(sheepdog(["save", "--pid", String(live.pid)], { env: p.env }).code).toBe(0);
  });
});
