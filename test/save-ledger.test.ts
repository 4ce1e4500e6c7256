import type { ChildProcess } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { sheepdog, sheepdogAsync, sleeper, tempDir, tempProgram } from "./helpers/cli.js";
import { FIXTURES } from "./helpers/fixtures.js";
import { bareRemote, gitEnv, gitOut, gitTry, waitFor, workRepo } from "./helpers/manager-side.js";

const FIXTURE = join(FIXTURES, "transcript-basic.jsonl");
// The fixture's context is 5 + 2210 + 140995 = 143210 (test/fixtures/README.md).

const started: ChildProcess[] = [];
function manager(): number {
  const p = sleeper();
  started.push(p);
  return p.pid as number;
}
afterAll(() => {
  for (const p of started) p.kill("SIGKILL");
});

function journal(stateDir: string): Record<string, unknown>[] {
  return readFileSync(join(stateDir, "journal.jsonl"), "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

/** A program whose ledger is a real repo pushing to a real bare remote. */
function ledgerProgram(extra: Record<string, unknown> = {}) {
  const p = tempProgram("demo", { ledger: { repo: "ledger" }, ...extra });
  const env = { ...p.env, ...gitEnv(p.home) };
  const remote = bareRemote(env);
  const ledger = workRepo(join(p.root, "ledger"), env, remote);
  writeFileSync(join(ledger, "LEDGER.md"), "# ledger\n- item 1: started\n");
  return { ...p, env, remote, ledger };
}

function save(p: { env: NodeJS.ProcessEnv; root: string }, pid: number, args: string[] = []) {
  const r = sheepdog(["save", "--pid", String(pid), ...args], { env: p.env, cwd: p.root });
  return { ...r, json: r.code === 0 ? JSON.parse(r.stdout) : null };
}

describe("save with a ledger", () => {
  it("commits every change and pushes it: the remote has the very commit", () => {
    const p = ledgerProgram();
    const pid = manager();
    const r = save(p, pid);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json.pushed).toBe(true);
    const head = gitOut(p.ledger, ["rev-parse", "HEAD"], p.env);
    expect(gitOut(p.remote, ["rev-parse", "refs/heads/ledger"], p.env)).toBe(head);
    expect(gitOut(p.ledger, ["log", "-1", "--format=%s"], p.env)).toMatch(
      /^sheepdog save: demo at \d{4}-/,
    );
    expect(gitOut(p.ledger, ["status", "--porcelain"], p.env)).toBe("");
    const saved = journal(p.stateDir).filter((e) => e.type === "saved");
    expect(saved.at(-1)).toMatchObject({ pid, pushed: true });

    // Nothing changed: no new commit, and the push still succeeds.
    const again = save(p, pid);
    expect(again.json.pushed).toBe(true);
    expect(gitOut(p.ledger, ["rev-parse", "HEAD"], p.env)).toBe(head);

    // A deleted file is a change too (git add -A).
    rmSync(join(p.ledger, "LEDGER.md"));
    writeFileSync(join(p.ledger, "NEXT.md"), "next\n");
    expect(save(p, pid).json.pushed).toBe(true);
    const files = gitOut(p.remote, ["ls-tree", "--name-only", "ledger"], p.env);
    expect(files).toBe("NEXT.md");
  });

  it("a vanished remote: pushed false, a notice, exit 0, stamped, local commit kept; the next save pushes both", () => {
    const p = ledgerProgram();
    const pid = manager();
    expect(save(p, pid).json.pushed).toBe(true);
    const first = gitOut(p.ledger, ["rev-parse", "HEAD"], p.env);

    const aside = `${p.remote}.aside`;
    renameSync(p.remote, aside);
    writeFileSync(join(p.ledger, "LEDGER.md"), "# ledger\n- item 1: done\n");
    rmSync(join(p.stateDir, "heartbeat.json"));
    const failed = save(p, pid);
    expect(failed.code, failed.stderr).toBe(0);
    expect(failed.json.pushed).toBe(false);
    expect(failed.json.notices.join("\n")).toMatch(/ledger: not pushed .*kept locally/);
    const beat = JSON.parse(readFileSync(join(p.stateDir, "heartbeat.json"), "utf8"));
    expect(beat.pid).toBe(pid);
    const second = gitOut(p.ledger, ["rev-parse", "HEAD"], p.env);
    expect(second).not.toBe(first);
    expect(gitOut(p.ledger, ["rev-parse", "HEAD~1"], p.env)).toBe(first);
    expect(gitOut(p.ledger, ["show", "HEAD:LEDGER.md"], p.env)).toContain("item 1: done");
    expect(
      journal(p.stateDir)
        .filter((e) => e.type === "saved")
        .at(-1),
    ).toMatchObject({
      pushed: false,
    });

    renameSync(aside, p.remote);
    const healed = save(p, pid);
    expect(healed.json.pushed).toBe(true);
    expect(gitOut(p.remote, ["rev-parse", "ledger"], p.env)).toBe(second);
    expect(gitOut(p.remote, ["rev-parse", "ledger~1"], p.env)).toBe(first);
  });

  it("a rejected push (the remote diverged): pushed false, the reason named, nothing lost", () => {
    const p = ledgerProgram();
    const pid = manager();
    expect(save(p, pid).json.pushed).toBe(true);

    // Someone else pushes another commit to the ledger branch.
    const other = workRepo(join(tempDir(), "other"), p.env, p.remote);
    gitOut(other, ["fetch", "-q", "origin", "ledger"], p.env);
    gitOut(other, ["checkout", "-q", "-b", "ledger", "FETCH_HEAD"], p.env);
    writeFileSync(join(other, "THEIRS.md"), "theirs\n");
    gitOut(other, ["add", "-A"], p.env);
    gitOut(other, ["commit", "-q", "-m", "theirs"], p.env);
    gitOut(other, ["push", "-q", "origin", "ledger"], p.env);
    const theirs = gitOut(other, ["rev-parse", "HEAD"], p.env);

    writeFileSync(join(p.ledger, "MINE.md"), "mine\n");
    const r = save(p, pid);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json.pushed).toBe(false);
    expect(r.json.notices.join("\n")).toMatch(/refused|rejected/);
    // Nothing lost on either side; nothing reset here.
    expect(gitOut(p.remote, ["rev-parse", "ledger"], p.env)).toBe(theirs);
    expect(gitOut(p.ledger, ["show", "HEAD:MINE.md"], p.env)).toBe("mine");
    expect(readFileSync(join(p.ledger, "MINE.md"), "utf8")).toBe("mine\n");
    expect(gitOut(p.ledger, ["status", "--porcelain"], p.env)).toBe("");
  });

  it("a ledger that is missing or not a git repository: a notice, still stamps", () => {
    for (const setup of ["missing", "plain folder"]) {
      const p = tempProgram("demo", { ledger: { repo: "ledger" } });
      const env = { ...p.env, ...gitEnv(p.home) };
      if (setup === "plain folder") mkdirSync(join(p.root, "ledger"));
      const r = save({ env, root: p.root }, manager());
      expect(r.code, r.stderr).toBe(0);
      expect(r.json.pushed).toBe(false);
      expect(r.json.notices.join("\n")).toMatch(
        setup === "missing" ? /ledger: .*does not exist/ : /ledger: .*not a git repository/,
      );
      expect(existsSync(join(p.stateDir, "heartbeat.json"))).toBe(true);
    }
  });

  it("a folder inside another repository is not taken for the ledger", () => {
    const p = tempProgram("demo", { ledger: { repo: "ledger" } });
    const env = { ...p.env, ...gitEnv(p.home) };
    gitOut(p.root, ["init", "-q"], env);
    mkdirSync(join(p.root, "ledger"));
    writeFileSync(join(p.root, "ledger", "x.md"), "x\n");
    const r = save({ env, root: p.root }, manager());
    expect(r.json.pushed).toBe(false);
    expect(r.json.notices.join("\n")).toMatch(/not the top of a git repository/);
    expect(gitTry(p.root, ["rev-parse", "HEAD"], env).code).not.toBe(0); // nothing committed
  });

  it("a hung remote does not hang save: the push is cut off, and what it started is ended", async () => {
    const dir = tempDir();
    const pidFile = join(dir, "ssh.pid");
    const fakeSsh = join(dir, "fake-ssh");
    writeFileSync(fakeSsh, `#!/bin/sh\necho $$ > ${pidFile}\nexec sleep 120\n`);
    chmodSync(fakeSsh, 0o755);
    const p = ledgerProgram({ ledger: { repo: "ledger", remote: "ssh://hung.invalid/x.git" } });
    let finished = false;
    const running = sheepdogAsync(["save", "--pid", String(manager())], {
      env: { ...p.env, GIT_SSH_COMMAND: fakeSsh, SHEEPDOG_GIT_TIMEOUT_MS: "4000" },
      cwd: p.root,
    }).then((r) => {
      finished = true;
      return r;
    });
    // The heartbeat is stamped before the push, while the push still hangs.
    const beat = join(p.stateDir, "heartbeat.json");
    expect(await waitFor(() => existsSync(beat) || finished)).toBe(true);
    expect(finished).toBe(false);
    const r = await running;
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.pushed).toBe(false);
    expect(out.notices.join("\n")).toMatch(/timed out/);
    const sshPid = Number(readFileSync(pidFile, "utf8"));
    const gone = await waitFor(() => {
      try {
        process.kill(sshPid, 0);
        return false;
      } catch {
        return true;
      }
    });
    expect(gone).toBe(true);
  });

  it("works on a machine with no git identity configured", () => {
    const p = ledgerProgram();
    const env: NodeJS.ProcessEnv = { ...p.env };
    for (const k of Object.keys(env)) if (/^GIT_(AUTHOR|COMMITTER)_/.test(k)) env[k] = undefined;
    const bare: NodeJS.ProcessEnv = { ...process.env, ...env, EMAIL: "" };
    for (const k of Object.keys(bare)) if (bare[k] === undefined) delete bare[k];
    const r = sheepdog(["save", "--pid", String(manager())], { env: bare, cwd: p.root });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).pushed).toBe(true);
  });
});

describe("save: context size and transcript", () => {
  it("--transcript PATH that does not exist: the path is reported with a notice, exit 0", () => {
    const p = tempProgram();
    const r = save(p, manager(), ["--transcript", join(p.root, "nope.jsonl")]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json.transcript).toBe(join(p.root, "nope.jsonl"));
    expect(r.json.context_tokens).toBeNull();
    expect(r.json.hand_over).toBe(false);
    expect(r.json.notices.join("\n")).toMatch(/does not exist/);
  });

  it("no transcript to be found: transcript null, a notice, never a refusal", () => {
    const p = tempProgram("demo", { usage: { seat: join(tempDir(), "empty-seat") } });
    const r = save(p, manager());
    expect(r.code, r.stderr).toBe(0);
    expect(r.json.transcript).toBeNull();
    expect(r.json.pushed).toBeNull(); // no ledger configured
    expect(r.json.notices.join("\n")).toMatch(/no transcript found/);
  });

  it("--transcript PATH is the path used", () => {
    const p = tempProgram();
    const r = save(p, manager(), ["--transcript", FIXTURE]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json.transcript).toBe(FIXTURE);
  });

  it("context_tokens from the transcript; hand_over at the threshold", () => {
    const below = tempProgram("demo", { hand_over_tokens: 143211 });
    const r1 = save(below, manager(), ["--transcript", FIXTURE]);
    expect(r1.json).toMatchObject({
      context_tokens: 143210,
      hand_over: false,
      hand_over_at: 143211,
    });
    const at = tempProgram("demo", { hand_over_tokens: 143210 });
    const r2 = save(at, manager(), ["--transcript", FIXTURE]);
    expect(r2.json).toMatchObject({ context_tokens: 143210, hand_over: true });
    const beat = JSON.parse(readFileSync(join(at.stateDir, "heartbeat.json"), "utf8"));
    expect(beat.context_tokens).toBe(143210);
    expect(journal(at.stateDir).find((e) => e.type === "saved")).toMatchObject({
      context_tokens: 143210,
    });
  });

  it("without --transcript, the newest transcript in the seat's project folder for the cwd", () => {
    const seat = join(tempDir(), "seat");
    const p = tempProgram("demo", { usage: { seat } });
    const folder = join(seat, "projects", p.root.replace(/[^A-Za-z0-9]/g, "-"));
    mkdirSync(folder, { recursive: true });
    const file = join(folder, "5c0f4a7e.jsonl");
    writeFileSync(file, readFileSync(FIXTURE));
    const r = save(p, manager());
    expect(r.code, r.stderr).toBe(0);
    expect(r.json.transcript).toBe(file);
    expect(r.json.context_tokens).toBe(143210);
  });
});
