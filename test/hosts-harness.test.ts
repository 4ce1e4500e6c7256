// The harness for multi-host tests proves itself here: simulated hosts (helpers/hosts.ts) each
// see their own /etc/machine-id and die whole; the census sees two managers at once; the git
// remote over smart HTTP (helpers/git-http.ts) takes clones, pushes and leases, and a
// partitioned route fails fast while the others still work.
import { execFile, spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { PYTHON3, tempDir } from "./helpers/cli.js";
import { type GitHttp, startGitHttp } from "./helpers/git-http.js";
import {
  census,
  namespacesAvailable,
  startHost,
  stopAllHosts,
  watchInvariant,
} from "./helpers/hosts.js";
import { bareRemote, gitEnv, gitOut, gitTry, waitFor, workRepo } from "./helpers/manager-side.js";
import { skipWithout } from "./helpers/tools.js";

const ns = namespacesAvailable();
const NS_INSTALL = "run as root on Linux with util-linux (unshare, nsenter)";
let marks = 0;
const newMarker = () => `sheepdog-hosts-test-${process.pid}-${marks++}`;

/** A remote over HTTP with one commit on main, pushed through the route "seed". */
async function seededRemote() {
  const home = tempDir();
  const env = gitEnv(home);
  const server = await startGitHttp(bareRemote(env));
  const seed = workRepo(join(home, "seed"), env, server.urlFor("seed"));
  writeFileSync(join(seed, "README"), "hello\n");
  gitOut(seed, ["add", "README"], env);
  gitOut(seed, ["commit", "-qm", "first"], env);
  gitOut(seed, ["push", "-q", "origin", "main"], env);
  return { home, env, server };
}

describe.skipIf(skipWithout("mount namespace", ns.ok ? null : ns.why, NS_INSTALL))(
  "simulated hosts",
  () => {
    afterEach(() => stopAllHosts());

    it("each host sees its own /etc/machine-id, and neither is the real one", async () => {
      const real = readFileSync("/etc/machine-id", "utf8");
      const a = startHost("a", tempDir());
      const b = startHost("b", tempDir());
      expect(a.run(["cat", "/etc/machine-id"]).stdout).toBe(`${a.machineId}\n`);
      // Each its own hostname too (a UTS namespace), so leases and reasons name the host.
      expect(a.run(["hostname"]).stdout.trim()).toBe(a.name);
      const [ra, rb] = await Promise.all([
        a.runAsync(["cat", "/etc/machine-id"]),
        b.runAsync(["cat", "/etc/machine-id"]),
      ]);
      expect(ra).toEqual({ code: 0, stdout: `${a.machineId}\n`, stderr: "" });
      expect(rb.stdout).toBe(`${b.machineId}\n`);
      expect(a.machineId).not.toBe(b.machineId);
      expect([a.machineId, b.machineId]).not.toContain(real.trim());
      expect(readFileSync("/etc/machine-id", "utf8")).toBe(real);
      // The cwd is kept inside the namespace (entering one would move it to /).
      const dir = tempDir();
      expect(a.run(["pwd"], { cwd: dir }).stdout.trim()).toBe(dir);
    });

    it("kill() ends every process in the host, and none outside it", async () => {
      const marker = newMarker();
      const env = { HOSTS_TEST_MARK: marker };
      const a = startHost("a", tempDir());
      const b = startHost("b", tempDir());
      // nsenter execs its program: the child's pid is the process inside the namespace.
      const inA = a.spawnDetached(["sh", "-c", "sleep 300 & sleep 300 & wait"], { env });
      const inB = b.spawnDetached(["sleep", "300"], { env });
      const outside = spawn("sleep", ["300"], { env: { ...process.env, ...env }, stdio: "ignore" });
      try {
        // A family counts once (the shell, not its two sleeps): one manager and its children.
        expect(await waitFor(() => census(marker).length === 3)).toBe(true);
        expect(census(marker)).toContain(inA.pid);
        a.kill();
        expect(census(marker).sort()).toEqual([inB.pid, outside.pid].sort());
        expect(census(marker)).not.toContain(inA.pid);
        expect(a.run(["true"]).code).not.toBe(0); // no namespace left to enter
        expect(b.run(["cat", "/etc/machine-id"]).stdout.trim()).toBe(b.machineId);
      } finally {
        outside.kill("SIGKILL");
      }
    });

    it("watchInvariant sees two marked processes at once, even while the test blocks", async () => {
      const marker = newMarker();
      const env = { HOSTS_TEST_MARK: marker };
      const a = startHost("a", tempDir());
      const b = startHost("b", tempDir());
      const watch = watchInvariant(marker);
      const first = a.spawnDetached(["sleep", "300"], { env });
      expect(await waitFor(() => census(marker).length === 1)).toBe(true);
      // The second overlaps the first only while this thread is inside spawnSync.
      expect(b.run(["sleep", "0.4"], { env }).code).toBe(0);
      first.kill("SIGKILL");
      expect(await waitFor(() => census(marker).length === 0)).toBe(true);
      await sleep(60);
      const report = watch.stop();
      expect(report.max).toBe(2);
      expect(report.violations.length).toBeGreaterThan(0);
      for (const v of report.violations) expect(v.pids).toContain(first.pid);
      // Sampling went on (how often it fits in is the machine's load, not asserted).
      expect(report.samples).toBeGreaterThan(2);
    });

    it("census does not count a marked process that has died but is not reaped (a zombie)", async () => {
      const marker = newMarker();
      // The parent holds the marker reversed (so it is not counted); its child runs with the
      // marker in its argv, exits at once, and is never waited for.
      const parent = spawn(
        PYTHON3,
        [
          "-c",
          "import os,sys,time\npid=os.fork()\nif pid==0: os.execvp('sh',['sh','-c','exit 0',sys.argv[1][::-1]])\nprint(pid,flush=True)\ntime.sleep(60)",
          [...marker].reverse().join(""),
        ],
        { stdio: ["ignore", "pipe", "inherit"] },
      );
      try {
        const child = Number(
          (await new Promise<Buffer>((r) => parent.stdout.once("data", r))).toString(),
        );
        const zombie = () =>
          readFileSync(`/proc/${child}/stat`, "utf8").split(") ")[1]?.[0] === "Z";
        expect(await waitFor(zombie)).toBe(true);
        expect(census(marker)).toEqual([]);
      } finally {
        parent.kill("SIGKILL");
      }
    });

    it("hosts reach the git remote at once, each over its own route", async () => {
      const { home, env, server } = await seededRemote();
      try {
        const a = startHost("a", tempDir());
        const b = startHost("b", tempDir());
        const [ra, rb] = await Promise.all([
          a.runAsync(["git", "ls-remote", server.urlFor("a"), "main"], { env, cwd: home }),
          b.runAsync(["git", "ls-remote", server.urlFor("b"), "main"], { env, cwd: home }),
        ]);
        expect(ra.code).toBe(0);
        expect(ra.stdout).toMatch(/\trefs\/heads\/main\n$/);
        expect(rb.stdout).toBe(ra.stdout);
        expect(server.requests("a")).toBeGreaterThan(0);
        expect(server.requests("b")).toBe(server.requests("a"));
      } finally {
        await server.close();
      }
    });
  },
);

describe("git over smart HTTP", () => {
  let remote: Awaited<ReturnType<typeof seededRemote>>;
  let server: GitHttp;
  beforeEach(async () => {
    remote = await seededRemote();
    server = remote.server;
  });
  afterEach(() => server.close());

  it("clones, pushes, and a must-not-exist lease wins once", () => {
    const { home, env } = remote;
    const clone = (route: string) => {
      const dir = join(home, route);
      gitOut(home, ["clone", "-q", server.urlFor(route), dir], env);
      return dir;
    };
    const a = clone("a");
    const b = clone("b");
    expect(readFileSync(join(a, "README"), "utf8")).toBe("hello\n");

    writeFileSync(join(a, "README"), "hello from a\n");
    gitOut(a, ["commit", "-qam", "second"], env);
    gitOut(a, ["push", "-q", "origin", "main"], env);
    expect(gitOut(b, ["ls-remote", "origin", "refs/heads/main"], env).split("\t")[0]).toBe(
      gitOut(a, ["rev-parse", "HEAD"], env),
    );

    // As the product's lease does: a commit whose message is the claim, pushed only if the ref
    // does not exist. (A ref one level under refs/, refs/x, is refused as a "funny refname", and
    // that refusal also starts with "!".)
    const REF = "refs/sheepdog/lease/x";
    const push = (repo: string, sha: string) =>
      gitTry(
        repo,
        ["push", "--porcelain", `--force-with-lease=${REF}:`, "origin", `${sha}:${REF}`],
        env,
      );
    const lease = (repo: string, claim: string) => {
      const sha = gitOut(repo, ["commit-tree", "HEAD^{tree}", "-m", claim], env);
      return { sha, ...push(repo, sha) };
    };
    const won = lease(a, "a holds it");
    expect(won.code).toBe(0);
    expect(won.stdout).toContain(`*\t${won.sha}:${REF}\t[new reference]`);
    const lost = lease(b, "b wants it");
    expect(lost.code).not.toBe(0);
    expect(lost.stdout).toMatch(/^!\t.*\[rejected\] \(stale info\)$/m);
    expect(gitOut(a, ["ls-remote", "origin", REF], env)).toBe(`${won.sha}\t${REF}`);
    // The winner's own commit again is "up to date" (exit 0, "="): git compares before the lease.
    const again = push(b, won.sha);
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/^=\t/m);
  });

  it("of two lease pushes racing, exactly one wins, under the server's ref lock", async () => {
    const { home, env } = remote;
    const seed = join(home, "seed");
    const gitAsync = (args: string[]) =>
      new Promise<{ code: number; stdout: string }>((done) =>
        execFile("git", args, { cwd: seed, env: { ...process.env, ...env } }, (e, stdout) =>
          done({ code: e ? Number(e.code ?? -1) : 0, stdout }),
        ),
      );
    for (let round = 0; round < 3; round++) {
      const REF = `refs/sheepdog/lease/race-${round}`;
      const shas = ["a", "b"].map((who) =>
        gitOut(seed, ["commit-tree", "HEAD^{tree}", "-m", `${who} ${round}`], env),
      );
      const results = await Promise.all(
        shas.map((sha, i) =>
          gitAsync([
            "push",
            "--porcelain",
            `--force-with-lease=${REF}:`,
            server.urlFor(i === 0 ? "a" : "b"),
            `${sha}:${REF}`,
          ]),
        ),
      );
      // The loser sees "[rejected] (stale info)" when the winner's ref was already advertised
      // to it, "[remote rejected] (failed to update ref)" when it lost at the server's lock.
      expect(results.map((r) => r.code === 0).sort()).toEqual([false, true]);
      const winner = results.findIndex((r) => r.code === 0);
      expect(results[1 - winner]?.stdout).toMatch(/^!\t/m);
      const at = gitOut(seed, ["ls-remote", server.urlFor("c"), REF], env).split("\t")[0];
      expect(at).toBe(shas[winner]);
    }
  });

  it("a partitioned route fails fast while another still works", () => {
    const { home, env } = remote;
    server.partition("a", true);
    const before = server.requests("a");
    const t0 = Date.now();
    const cut = gitTry(home, ["ls-remote", server.urlFor("a")], env);
    const took = Date.now() - t0;
    expect(cut.code).not.toBe(0);
    expect(cut.stderr).toMatch(/Empty reply from server/);
    expect(took).toBeLessThan(5000);
    // git does not retry: one request (curl retries only on a reused connection).
    expect(server.requests("a") - before).toBe(1);
    expect(gitTry(home, ["ls-remote", server.urlFor("b"), "main"], env).code).toBe(0);
    const push = gitTry(join(home, "seed"), ["push", server.urlFor("a"), "HEAD:refs/heads/y"], env);
    expect(push.code).not.toBe(0);
    expect(push.stderr).toMatch(/Empty reply from server/);
    server.partition("a", false);
    expect(gitTry(home, ["ls-remote", server.urlFor("a"), "main"], env).code).toBe(0);
  });
});
