// The state folder never leaves the host (DESIGN §18, issue 31): with the ledger repo being the
// program root, save's commit and push carry no claim, heartbeat, journal or evidence; a
// `.sheepdog/.gitignore` of `*` keeps it out of any repo; `check` refuses a ledger that tracks
// it, with the fix.
import type { ChildProcess } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { sheepdog, sleeper, tempProgram } from "./helpers/cli.js";
import { bareRemote, gitEnv, gitOut, workRepo } from "./helpers/manager-side.js";

const started: ChildProcess[] = [];
afterAll(() => {
  for (const p of started) p.kill("SIGKILL");
});

/** A program whose ledger repo is its own root, pushing to a real bare remote. */
function rootLedger() {
  const p = tempProgram("rooted", { ledger: { repo: "." } });
  const env = { ...p.env, ...gitEnv(p.home) };
  const remote = bareRemote(env);
  workRepo(p.root, env, remote);
  writeFileSync(join(p.root, "LEDGER.md"), "# ledger\n- item 1: started\n");
  const manager = sleeper();
  started.push(manager);
  const pid = String(manager.pid);
  const claim = sheepdog(["claim", "acquire", "--pid", pid], { env, cwd: p.root });
  expect(claim.code, claim.stderr).toBe(0);
  return { ...p, env, remote, pid };
}

const remoteFiles = (remote: string, env: NodeJS.ProcessEnv) =>
  gitOut(remote, ["ls-tree", "-r", "--name-only", "refs/heads/ledger"], env).split("\n");

describe("a ledger repo that is the program root", () => {
  it("save commits and pushes the ledger, never the state folder", () => {
    const p = rootLedger();
    const r = sheepdog(["save", "--pid", p.pid], { env: p.env, cwd: p.root });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).pushed).toBe(true);
    const files = remoteFiles(p.remote, p.env);
    expect(files).toContain("LEDGER.md");
    expect(files.filter((f) => f.startsWith(".sheepdog"))).toEqual([]);
    // and the folder says so to any git that looks at it
    expect(readFileSync(join(p.stateDir, ".gitignore"), "utf8")).toMatch(/^\*$/m);
    expect(gitOut(p.root, ["status", "--porcelain", "--ignored=no"], p.env)).toBe("");
    expect(sheepdog(["check"], { env: p.env, cwd: p.root }).code).toBe(0);
  });

  it("a ledger that already tracks .sheepdog/: save leaves it out, check refuses it with the fix", () => {
    const p = rootLedger();
    // committed by hand before the .gitignore existed
    gitOut(p.root, ["add", "-f", ".sheepdog/journal.jsonl", ".sheepdog/claim/holder.json"], p.env);
    gitOut(p.root, ["commit", "-q", "-m", "oops"], p.env);
    const tracked = gitOut(p.root, ["show", "HEAD:.sheepdog/journal.jsonl"], p.env);
    writeFileSync(join(p.root, "LEDGER.md"), "# ledger\n- item 1: done\n");
    const r = sheepdog(["save", "--pid", p.pid], { env: p.env, cwd: p.root });
    expect(r.code, r.stderr).toBe(0);
    // the ledger's change went; the journal (which save appended to) did not
    expect(gitOut(p.root, ["show", "HEAD:LEDGER.md"], p.env)).toContain("item 1: done");
    expect(gitOut(p.root, ["show", "HEAD:.sheepdog/journal.jsonl"], p.env)).toBe(tracked);
    expect(readFileSync(join(p.stateDir, "journal.jsonl"), "utf8").trim()).not.toBe(tracked);

    const check = sheepdog(["check"], { env: p.env, cwd: p.root });
    expect(check.code).toBe(2);
    expect(check.stderr).toContain(`ledger.repo: ${p.root} tracks sheepdog's state (2 files:`);
    expect(check.stderr).toContain(`fix with: git -C ${p.root} rm -r -q --cached .sheepdog/`);
    const fix = check.stderr.split("fix with: ")[1]?.trim() as string;
    for (const cmd of fix.split(" && ")) {
      const words = cmd.match(/"[^"]*"|\S+/g)?.map((w) => w.replace(/^"|"$/g, "")) ?? [];
      gitOut(p.root, words.slice(1), p.env);
    }
    expect(sheepdog(["check"], { env: p.env, cwd: p.root }).code).toBe(0);
    expect(existsSync(join(p.stateDir, "journal.jsonl"))).toBe(true); // untracked, not removed
  });
});
