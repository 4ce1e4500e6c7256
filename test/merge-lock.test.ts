import type { ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { readMergeLock } from "../src/merge-lock/lock.js";
import { identityOf } from "../src/process/identity.js";
import { sheepdog, sheepdogAsync, sleeper, tempDir, tempProgram } from "./helpers/cli.js";
import { bareRemote, gitEnv, gitOut, gitTry, waitFor, workRepo } from "./helpers/manager-side.js";

const REF = "refs/looprunner/merge-lock";

let live: ChildProcess[] = [];
function manager(): ChildProcess {
  const p = sleeper();
  live.push(p);
  return p;
}
afterEach(() => {
  for (const p of live) p.kill("SIGKILL");
  live = [];
});
afterAll(() => {
  for (const p of live) p.kill("SIGKILL");
});

/** A program whose merge lock lives in `app` (a clone of a bare remote) or in `app` itself. */
function lockProgram(mode: "remote" | "local", ref?: string) {
  const home = tempDir();
  const env0 = gitEnv(home);
  const remote = bareRemote(env0);
  const app = workRepo(join(home, "app"), env0, remote);
  const p = tempProgram("demo", {
    merge_lock: {
      repo: app,
      ...(mode === "remote" ? { remote: "origin" } : {}),
      ...(ref ? { ref } : {}),
    },
  });
  const env = { ...p.env, ...env0 };
  // Where the lock ref lives, to look at it with plain git.
  const refSha = (r = ref ?? REF): string | null => {
    const out =
      mode === "remote"
        ? gitTry(remote, ["rev-parse", "-q", "--verify", r], env)
        : gitTry(app, ["rev-parse", "-q", "--verify", r], env);
    return out.code === 0 ? out.stdout : null;
  };
  return {
    ...p,
    env,
    remote,
    app,
    refSha,
    cfg: { repo: app, ref: ref ?? REF, ...(mode === "remote" ? { remote: "origin" } : {}) },
  };
}

function ml(p: { env: NodeJS.ProcessEnv }, args: string[]) {
  return sheepdog(["merge-lock", ...args], { env: p.env });
}

function showJson(p: { env: NodeJS.ProcessEnv }) {
  const r = ml(p, ["show", "--json"]);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout);
}

/** Pushes a hand-made lock commit (a foreign or unreadable holder). */
function plantLock(p: ReturnType<typeof lockProgram>, message: string, mode: "remote" | "local") {
  const tree = gitOut(p.app, ["mktree"], p.env);
  const sha = gitOut(p.app, ["commit-tree", tree, "-m", message], p.env);
  if (mode === "remote") gitOut(p.app, ["push", "-q", "origin", `${sha}:${REF}`], p.env);
  else gitOut(p.app, ["update-ref", REF, sha], p.env);
  return sha;
}

for (const mode of ["remote", "local"] as const) {
  describe(`merge lock (${mode})`, () => {
    it("concurrent acquires from separate processes: exactly one wins, every time", async () => {
      const p = lockProgram(mode);
      for (let round = 0; round < 4; round++) {
        const holders = [manager(), manager(), manager(), manager()];
        const results = await Promise.all(
          holders.map((h, i) =>
            sheepdogAsync(
              [
                "merge-lock",
                "acquire",
                "--pid",
                String(h.pid),
                "--item",
                `R${round}-${i}`,
                "--json",
              ],
              { env: p.env },
            ),
          ),
        );
        const winners = results.filter((r) => r.code === 0);
        expect(winners.length, results.map((r) => r.stderr).join("\n")).toBe(1);
        expect(results.filter((r) => r.code === 3).length).toBe(3);
        const won = JSON.parse(winners[0]?.stdout ?? "{}");
        const shown = showJson(p);
        expect(shown.holder.pid).toBe(won.holder.pid);
        expect(shown.sha).toBe(p.refSha());
        for (const r of results.filter((x) => x.code === 3))
          expect(r.stderr).toContain(`held by pid ${won.holder.pid} for item ${won.holder.item}`);
        const rel = ml(p, ["release", "--pid", String(won.holder.pid)]);
        expect(rel.code, rel.stderr).toBe(0);
        expect(p.refSha()).toBeNull();
        for (const h of holders) h.kill("SIGKILL");
      }
    });

    it("release only by the holder; acquiring again while holding is fine", () => {
      const p = lockProgram(mode);
      const holder = String(manager().pid);
      const other = String(manager().pid);
      expect(ml(p, ["acquire", "--pid", holder, "--item", "PR-7"]).code).toBe(0);
      const sha = p.refSha();
      expect(sha).not.toBeNull();
      const again = ml(p, ["acquire", "--pid", holder, "--json"]);
      expect(again.code).toBe(0);
      expect(JSON.parse(again.stdout)).toMatchObject({ acquired: true, already: true });

      const r = ml(p, ["release", "--pid", other]);
      expect(r.code).toBe(3);
      expect(r.stderr).toMatch(
        new RegExp(`pid ${other} is not the holder.*pid ${holder} for item PR-7`),
      );
      expect(p.refSha()).toBe(sha);

      expect(ml(p, ["release", "--pid", holder]).code).toBe(0);
      expect(p.refSha()).toBeNull();
      const none = ml(p, ["release", "--pid", holder]);
      expect(none.code).toBe(3);
      expect(none.stderr).toMatch(/not held/);
      const journal = sheepdog(["journal", "--json"], { env: p.env });
      if (journal.code === 0) expect(journal.stdout).toContain("merge_lock_released");
    });

    it("--stale releases a dead holder's lock and refuses a live one", async () => {
      const p = lockProgram(mode);
      const liveHolder = manager();
      expect(ml(p, ["acquire", "--pid", String(liveHolder.pid)]).code).toBe(0);
      const refused = ml(p, ["release", "--stale"]);
      expect(refused.code).toBe(3);
      expect(refused.stderr).toMatch(/alive/);
      expect(p.refSha()).not.toBeNull();
      expect(ml(p, ["release", "--pid", String(liveHolder.pid)]).code).toBe(0);

      const doomed = manager();
      const pid = doomed.pid as number;
      expect(ml(p, ["acquire", "--pid", String(pid), "--item", "X"]).code).toBe(0);
      doomed.kill("SIGKILL");
      expect(await waitFor(() => identityOf(pid) === null)).toBe(true);
      expect(showJson(p)).toMatchObject({ held: true, alive: false, liveness: "dead" });
      const blocked = ml(p, ["acquire", "--pid", String(manager().pid)]);
      expect(blocked.code).toBe(3);
      expect(blocked.stderr).toMatch(/\(dead\).*release --stale/);
      const stale = ml(p, ["release", "--stale"]);
      expect(stale.code, stale.stderr).toBe(0);
      expect(p.refSha()).toBeNull();
    });

    it("a holder from another machine is never judged; an unreadable lock counts as dead", () => {
      const p = lockProgram(mode);
      const foreign = {
        pid: 4242,
        start_time: "linux:other-boot:1",
        machine_id: "0000000000elsewhere",
        item: "PR-9",
        at: new Date(Date.now() - 5 * 60_000).toISOString(),
      };
      plantLock(p, JSON.stringify(foreign), mode);
      const shown = showJson(p);
      expect(shown).toMatchObject({
        held: true,
        alive: null,
        liveness: "foreign",
        holder: foreign,
      });
      expect(shown.age_ms).toBeGreaterThanOrEqual(5 * 60_000);
      const human = ml(p, ["show"]);
      expect(human.stdout).toMatch(
        /held by pid 4242 for item PR-9, taken 5m(\d+s)? ago \(on another machine/,
      );
      expect(ml(p, ["release", "--stale"]).code).toBe(3);
      expect(ml(p, ["acquire", "--pid", String(manager().pid)]).code).toBe(3);
      expect(p.refSha()).not.toBeNull();

      // Replace it with a commit whose message is not holder JSON.
      if (mode === "remote") gitOut(p.remote, ["update-ref", "-d", REF], p.env);
      else gitOut(p.app, ["update-ref", "-d", REF], p.env);
      plantLock(p, "not json", mode);
      expect(showJson(p)).toMatchObject({
        held: true,
        holder: null,
        liveness: "unreadable",
        alive: false,
      });
      expect(ml(p, ["release", "--stale"]).code).toBe(0);
      expect(p.refSha()).toBeNull();
    });

    it("readMergeLock returns the holder, its liveness and age, and changes nothing", async () => {
      const p = lockProgram(mode);
      expect(await readMergeLock(p.cfg)).toEqual({ held: false });
      const h = manager();
      const pid = h.pid as number;
      expect(ml(p, ["acquire", "--pid", String(pid), "--item", "ITEM-3"]).code).toBe(0);
      const state = await readMergeLock(p.cfg);
      expect(state).toMatchObject({
        held: true,
        holder: { pid, item: "ITEM-3", start_time: identityOf(pid)?.start_time },
        liveness: "alive",
      });
      if (state.held) expect(state.age_ms).toBeGreaterThanOrEqual(0);
      h.kill("SIGKILL");
      await waitFor(() => identityOf(pid) === null);
      expect(await readMergeLock(p.cfg)).toMatchObject({ held: true, liveness: "dead" });

      if (mode === "remote") {
        // From another clone that has never seen the lock commit: fetched, yet no ref moves.
        const other = workRepo(join(tempDir(), "other"), p.env, p.remote);
        const refsBefore = gitOut(other, ["for-each-ref"], p.env);
        const fromOther = await readMergeLock({ ...p.cfg, repo: other });
        expect(fromOther).toMatchObject({ held: true, holder: { pid, item: "ITEM-3" } });
        expect(gitOut(other, ["for-each-ref"], p.env)).toBe(refsBefore);
        expect(existsSync(join(other, ".git", "FETCH_HEAD"))).toBe(false);
      }
    });
  });
}

describe("merge lock: details", () => {
  it("honours a configured ref, and show --json says who and whether alive", () => {
    const p = lockProgram("remote", "refs/sheepdog/lock");
    const h = String(manager().pid);
    const r = ml(p, ["acquire", "--pid", h, "--item", "A-1", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    expect(p.refSha("refs/sheepdog/lock")).not.toBeNull();
    expect(p.refSha(REF)).toBeNull();
    const shown = showJson(p);
    expect(shown).toMatchObject({
      held: true,
      ref: "refs/sheepdog/lock",
      remote: "origin",
      alive: true,
      liveness: "alive",
      holder: { pid: Number(h), item: "A-1" },
    });
    expect(Object.keys(shown.holder).sort()).toEqual([
      "at",
      "item",
      "machine_id",
      "pid",
      "start_time",
    ]);
    // The lock commit holds no files.
    const tree = gitOut(p.remote, ["ls-tree", "refs/sheepdog/lock"], p.env);
    expect(tree).toBe("");
    // No working-tree change in the repo.
    expect(gitOut(p.app, ["status", "--porcelain"], p.env)).toBe("");
  });

  it("bad usage exits 2; a program without merge_lock exits 2; an unreachable remote exits 1", () => {
    const p = lockProgram("remote");
    expect(ml(p, ["grab"]).code).toBe(2);
    expect(ml(p, ["show", "--item", "x"]).code).toBe(2);
    expect(ml(p, ["acquire", "--stale"]).code).toBe(2);
    expect(ml(p, ["acquire", "--pid", "abc"]).code).toBe(2);
    const plain = tempProgram();
    const r = sheepdog(["merge-lock", "show"], { env: plain.env });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/merge_lock/);

    gitOut(p.app, ["remote", "set-url", "origin", join(tempDir(), "gone.git")], p.env);
    const down = ml(p, ["acquire", "--pid", String(manager().pid)]);
    expect(down.code).toBe(1);
    expect(down.stderr).toMatch(/merge lock: cannot push to origin/);
    expect(ml(p, ["show"]).code).toBe(1);
  });
});
