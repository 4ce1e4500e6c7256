// A command's bundle is compiled from V8's code cache (src/util/code-cache.ts): written once
// beside the bundle after a run without one, used after, and never trusted when it is not this
// bundle's (a rebuilt file, another Node), not whole, or writable by someone else. The CLI runs
// from a copy of dist/, so the cache folder is this test's own.
import { spawnSync } from "node:child_process";
import {
  chmodSync,
  chownSync,
  cpSync,
  existsSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { tempDir, tempProgram } from "./helpers/cli.js";

const chownR = (dir: string, uid: number) => {
  const r = spawnSync("chown", ["-R", `${uid}:${uid}`, dir]);
  expect(r.status).toBe(0);
};

function world() {
  const dist = join(tempDir("sd-cc-"), "dist");
  cpSync(resolve("dist"), dist, { recursive: true, filter: (src) => !src.includes("v8-cache") });
  const p = tempProgram("cc");
  const cacheDir = join(dist, "commands", "v8-cache");
  // One file per Node and flags: `status.cjs.<node>-<arch>-<flags hash>.v8`.
  const caches = () =>
    existsSync(cacheDir) ? readdirSync(cacheDir).filter((f) => f.startsWith("status.cjs.")) : [];
  const cache = join(cacheDir, `status.cjs.${process.version}-${process.arch}-`);
  const run = (as?: { uid: number; env: Record<string, string> }) => {
    const argv = [process.execPath, join(dist, "cli.cjs"), "status", "--json"];
    const env = { ...process.env, ...(as?.env ?? p.env) };
    const r = as
      ? spawnSync(
          "setpriv",
          [`--reuid=${as.uid}`, `--regid=${as.uid}`, "--clear-groups", ...argv],
          {
            env,
            encoding: "utf8",
          },
        )
      : spawnSync(argv[0] as string, argv.slice(1), { env, encoding: "utf8" });
    expect(r.status, r.stderr).toBe(0);
    // The command ran whole, cache or not.
    expect(JSON.parse(r.stdout).programs[0].program).toBe("cc");
    return r;
  };
  const file = () => {
    const [one, ...more] = caches();
    expect(more, "one cache for this Node").toEqual([]);
    expect(one?.startsWith(basename(cache))).toBe(true);
    return join(cacheDir, one as string);
  };
  const stamp = () => {
    const st = statSync(file());
    return `${st.ino} ${st.mtimeMs}`;
  };
  const head = () => readFileSync(file()).subarray(0, 200).toString("latin1").split("\n")[0];
  return { dist, p, file, caches, run, stamp, head };
}

describe("a command's code cache", () => {
  it("is written after the first run, names the bundle and this Node, and is used after", () => {
    const w = world();
    expect(w.caches()).toEqual([]);
    w.run();
    const bundle = statSync(join(w.dist, "commands", "status.cjs"));
    expect(w.head()).toBe(
      `sheepdog-v8 ${bundle.ino} ${bundle.size} ${bundle.mtimeMs} ${bundle.ctimeMs} ${process.version} ${process.arch}`,
    );
    expect(statSync(w.file()).mode & 0o777).toBe(0o644);
    const first = w.stamp();
    w.run();
    w.run();
    expect(w.stamp(), "a cache used is not written again").toBe(first);
  });

  it("is set aside and made anew for a rebuilt bundle, a torn or foreign cache, or one others may write", () => {
    const w = world();
    w.run();
    // The bundle changed (a rebuild: same length, new time): the old cache is not this bundle's.
    const bundle = join(w.dist, "commands", "status.cjs");
    const later = new Date(Date.now() + 5_000);
    utimesSync(bundle, later, later);
    let before = w.stamp();
    w.run();
    expect(w.stamp()).not.toBe(before);
    expect(w.head()).toContain(` ${statSync(bundle).mtimeMs} `);
    // Its header right, its bytes not V8's: V8 rejects it, the bundle is compiled, and the cache
    // is made anew.
    const junk = Buffer.concat([Buffer.from(`${w.head()}\n`), Buffer.alloc(4096, 7)]);
    writeFileSync(w.file(), junk);
    before = w.stamp();
    w.run();
    expect(w.stamp()).not.toBe(before);
    expect(readFileSync(w.file()).equals(junk)).toBe(false);
    // Writable by the group: bytecode anyone could have written is never run.
    chmodSync(w.file(), 0o664);
    before = w.stamp();
    w.run();
    expect(w.stamp()).not.toBe(before);
    expect(statSync(w.file()).mode & 0o777).toBe(0o644);
  });

  it("is not another user's: one owned by someone else is not used, and only the bundle's owner writes one", (ctx) => {
    if (process.getuid?.() !== 0) {
      // Another user is played by setpriv and chown, as root only.
      if (process.env.CI) throw new Error("CI: the other-user cases of the code cache need root");
      process.stderr.write("skipped: the code cache's other-user cases (not root)\n");
      return ctx.skip();
    }
    const w = world();
    w.run();
    chownSync(w.file(), 4242, 4242);
    const before = w.stamp();
    w.run();
    expect(w.stamp(), "replaced by this user's own").not.toBe(before);
    expect(statSync(w.file()).uid).toBe(0);
    // Another user runs the same install (root's, 0755), on a program of its own: it reads the
    // bundle and runs it, and writes nothing beside it.
    chmodSync(dirname(w.dist), 0o755);
    const theirs = tempProgram("cc");
    chownR(theirs.home, 4243);
    rmSync(w.file());
    const other = w.run({ uid: 4243, env: theirs.env });
    expect(other.stderr).toBe("");
    expect(w.caches()).toEqual([]);
    // Root running a bundle another user owns writes no cache there either (one the owner would
    // never trust, rewritten at every run).
    chownSync(join(w.dist, "commands", "status.cjs"), 4243, 4243);
    w.run();
    expect(w.caches()).toEqual([]);
  });
});
