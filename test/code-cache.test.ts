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
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { dirname, join, resolve } from "node:path";
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
  const cache = join(dist, "commands", "v8-cache", "status.cjs.v8");
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
  const stamp = () => {
    const st = statSync(cache);
    return `${st.ino} ${st.mtimeMs}`;
  };
  const head = () => readFileSync(cache).subarray(0, 200).toString("latin1").split("\n")[0];
  return { dist, p, cache, run, stamp, head };
}

describe("a command's code cache", () => {
  it("is written after the first run, names the bundle and this Node, and is used after", () => {
    const w = world();
    expect(existsSync(w.cache)).toBe(false);
    w.run();
    const bundle = statSync(join(w.dist, "commands", "status.cjs"));
    expect(w.head()).toBe(
      `sheepdog-v8 ${bundle.ino} ${bundle.size} ${bundle.mtimeMs} ${process.version} ${process.arch}`,
    );
    expect(statSync(w.cache).mode & 0o777).toBe(0o644);
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
    const good = readFileSync(w.cache);
    writeFileSync(w.cache, Buffer.concat([Buffer.from(`${w.head()}\n`), Buffer.alloc(4096, 7)]));
    before = w.stamp();
    w.run();
    expect(w.stamp()).not.toBe(before);
    expect(readFileSync(w.cache).equals(good) || readFileSync(w.cache).length > 4200).toBe(true);
    // Writable by the group: bytecode anyone could have written is never run.
    chmodSync(w.cache, 0o664);
    before = w.stamp();
    w.run();
    expect(w.stamp()).not.toBe(before);
    expect(statSync(w.cache).mode & 0o777).toBe(0o644);
  });

  it.skipIf(process.getuid?.() !== 0)(
    "is not another user's: a cache owned by someone else is not used, and a folder it may not write costs it nothing",
    () => {
      const w = world();
      w.run();
      chownSync(w.cache, 4242, 4242);
      const before = w.stamp();
      w.run();
      expect(w.stamp(), "replaced by this user's own").not.toBe(before);
      expect(statSync(w.cache).uid).toBe(0);
      // Another user runs the same install (root's, 0755), on a program of its own: it reads
      // the bundle and runs it, and writes nothing beside it.
      chmodSync(dirname(w.dist), 0o755);
      const theirs = tempProgram("cc");
      chownR(theirs.home, 4243);
      rmSync(w.cache);
      const other = w.run({ uid: 4243, env: theirs.env });
      expect(other.stderr).toBe("");
      expect(existsSync(w.cache)).toBe(false);
    },
  );
});
