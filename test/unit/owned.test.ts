// What runs is the user's own (DESIGN §18): pathProblem's verdict for each kind of path, and
// ensureOwnedDir making (0700 whatever the umask), narrowing or refusing.
import { chmodSync, chownSync, lstatSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ensureOwnedDir, pathProblem, UnsafePath } from "../../src/state/owned.js";
import { tempDir } from "../helpers/cli.js";

const mode = (p: string) => (lstatSync(p).mode & 0o7777).toString(8).padStart(4, "0");
const asRoot = process.getuid?.() === 0;

describe("pathProblem", () => {
  const dir = tempDir();
  const make: Record<string, () => string> = {
    "a folder 0700": () => {
      const p = join(dir, "ok");
      mkdirSync(p, { mode: 0o700 });
      return p;
    },
    "a folder 0755": () => {
      const p = join(dir, "readable");
      mkdirSync(p);
      chmodSync(p, 0o755);
      return p;
    },
    "a folder 0775": () => {
      const p = join(dir, "group");
      mkdirSync(p);
      chmodSync(p, 0o775);
      return p;
    },
    "a folder 1777": () => {
      const p = join(dir, "world");
      mkdirSync(p);
      chmodSync(p, 0o1777);
      return p;
    },
    "a link to a folder": () => {
      const p = join(dir, "link");
      symlinkSync(join(dir, "ok"), p);
      return p;
    },
    "a file where a folder should be": () => {
      const p = join(dir, "file");
      writeFileSync(p, "x");
      return p;
    },
    absent: () => join(dir, "absent"),
  };
  it.each([
    ["a folder 0700", null],
    ["a folder 0755", null],
    ["a folder 0775", /is group-writable \(mode 0775\)$/],
    ["a folder 1777", /is world-writable \(mode 0777\)$/],
    ["a link to a folder", /is not a directory \(a symbolic link\)/],
    ["a file where a folder should be", /is not a directory$/],
    ["absent", null],
  ])("%s: %s", (what, want) => {
    const p = (make[what] as () => string)();
    const problem = pathProblem(p, "dir", { chmod: "700" });
    if (want === null) expect(problem).toBeNull();
    else {
      expect(problem?.problem).toMatch(want);
      expect(problem?.problem.startsWith(`${p}: `)).toBe(true);
    }
  });

  it.skipIf(!asRoot)("another user's: owned by their uid, with the fix", () => {
    const p = join(dir, "theirs");
    mkdirSync(p, { mode: 0o700 });
    chownSync(p, 4242, 4242);
    const problem = pathProblem(p, "dir");
    expect(problem?.problem).toBe(
      `${p}: owned by uid 4242, not by you (uid 0); sheepdog uses only what is yours`,
    );
    expect(problem?.fix).toBe(`remove ${p} if it is not yours, else: chown $(id -un) ${p}`);
  });
});

describe("ensureOwnedDir", () => {
  it("makes the folder and its missing parents 0700, whatever the umask", () => {
    const base = tempDir();
    const old = process.umask(0);
    try {
      expect(ensureOwnedDir(join(base, "a", "b", "c"), "test")).toBe(true);
    } finally {
      process.umask(old);
    }
    for (const p of ["a", "a/b", "a/b/c"]) expect(`${p} ${mode(join(base, p))}`).toBe(`${p} 0700`);
  });

  it("narrows one others may write (write bits only, nothing added) or refuses it", () => {
    const base = tempDir();
    const p = join(base, "open");
    mkdirSync(p);
    chmodSync(p, 0o1777);
    expect(() => ensureOwnedDir(p, "test")).toThrow(UnsafePath);
    expect(mode(p)).toBe("1777");
    expect(ensureOwnedDir(p, "test", { narrow: true })).toBe(false);
    expect(mode(p)).toBe("1755");
  });

  it("never narrows a link: refused, its target untouched", () => {
    const base = tempDir();
    const target = join(base, "target");
    mkdirSync(target);
    chmodSync(target, 0o777);
    symlinkSync(target, join(base, "link"));
    expect(() => ensureOwnedDir(join(base, "link"), "test", { narrow: true })).toThrow(
      /is not a directory \(a symbolic link\)/,
    );
    expect(mode(target)).toBe("0777");
  });
});
