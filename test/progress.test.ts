import type { ChildProcess } from "node:child_process";
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { progressFingerprint } from "../src/progress/fingerprint.js";
import { globFiles, matchPath, segmentMatcher } from "../src/progress/glob.js";
import { unsupportedGlobSyntax } from "../src/progress/syntax.js";
import { sheepdog, sleeper, tempDir, tempProgram } from "./helpers/cli.js";

describe("glob matching", () => {
  const table: [pattern: string, path: string, matches: boolean][] = [
    ["runs/*/attempts.json", "runs/a/attempts.json", true],
    ["runs/*/attempts.json", "runs/a/b/attempts.json", false],
    ["runs/*/attempts.json", "runs/attempts.json", false],
    ["runs/*/*.done", "runs/x/7.done", true],
    ["runs/*/*.done", "runs/x/7.done.tmp", false],
    ["runs/*/*.done", "runs/x/.done", false], // a wildcard never matches a leading dot
    ["runs/*/.*", "runs/x/.hidden", true],
    ["*.md", "a.md", true],
    ["*.md", "dir/a.md", false],
    ["?.md", "a.md", true],
    ["?.md", "ab.md", false],
    ["file[0-9].txt", "file7.txt", true],
    ["file[0-9].txt", "filex.txt", false],
    ["file[!0-9].txt", "filex.txt", true],
    ["file[^0-9].txt", "file7.txt", false],
    ["file[abc].txt", "fileb.txt", true],
    ["file[]x].txt", "file].txt", true],
    ["file[.txt", "file[.txt", true], // an unclosed class is a literal `[`
    ["a\\*b", "a*b", true],
    ["a\\*b", "axb", false],
    ["**/*.json", "a.json", true],
    ["**/*.json", "x/y/z/a.json", true],
    ["**/*.json", ".git/x/a.json", false], // ** does not enter dot-folders
    ["runs/**/done", "runs/done", true],
    ["runs/**/done", "runs/a/b/done", true],
    ["runs/**/done", "other/a/done", false],
    ["runs/**", "runs/a/b", true], // a trailing ** is every file below
    ["runs/**", "runs/x", true],
    ["runs/**", "runs/.x", false],
    ["a.b", "axb", false], // a dot is a dot, not a regex
    ["(x)+", "(x)+", true],
    ["./runs/*", "runs/a", true],
    ["runs//a", "runs/a", true],
  ];
  it.each(table)("%s vs %s → %s", (pattern, path, matches) => {
    expect(matchPath(pattern, path)).toBe(matches);
  });

  it("segment matchers never cross a slash", () => {
    expect(segmentMatcher("*")("a/b")).toBe(false);
    expect(segmentMatcher("?")("/")).toBe(false);
    expect(segmentMatcher("[!a]")("/")).toBe(false);
  });

  it("the walk finds exactly what matchPath says, files only, no duplicates", () => {
    const root = tempDir();
    const files = [
      "runs/a/attempts.json",
      "runs/b/attempts.json",
      "runs/b/deep/attempts.json",
      "runs/c/1.done",
      "runs/.hidden/attempts.json",
      "notes/x.md",
      ".git/x/attempts.json",
    ];
    for (const f of files) {
      mkdirSync(dirname(join(root, f)), { recursive: true });
      writeFileSync(join(root, f), f);
    }
    mkdirSync(join(root, "runs/d/attempts.json"), { recursive: true }); // a folder: skipped
    symlinkSync(join(root, "runs"), join(root, "runs/b/loop")); // `**` must not loop
    const rel = (ps: string[]) => ps.map((p) => p.slice(root.length + 1)).sort();
    expect(rel(globFiles(root, "runs/*/attempts.json"))).toEqual([
      "runs/a/attempts.json",
      "runs/b/attempts.json",
    ]);
    expect(rel(globFiles(root, "**/attempts.json"))).toEqual([
      "runs/a/attempts.json",
      "runs/b/attempts.json",
      "runs/b/deep/attempts.json",
    ]);
    for (const pattern of ["**/attempts.json", "runs/*/*", "**/*.md", "runs/c/1.done"]) {
      for (const f of rel(globFiles(root, pattern))) expect(matchPath(pattern, f)).toBe(true);
    }
    expect(globFiles(root, "nothing/*")).toEqual([]);
  });
});

describe("progress fingerprint", () => {
  const PATHS = ["runs/*/attempts.json", "runs/*/*.done"];

  function tree() {
    const root = tempDir();
    mkdirSync(join(root, "runs/a"), { recursive: true });
    writeFileSync(join(root, "runs/a/attempts.json"), "[1]");
    writeFileSync(join(root, "runs/a/notes.txt"), "free text");
    return root;
  }

  it("changes when a matched file changes, appears or goes; not otherwise", () => {
    const root = tree();
    const first = progressFingerprint(root, PATHS);
    expect(first).toMatch(/^sha256:[0-9a-f]{16}$/);
    expect(progressFingerprint(root, PATHS)).toBe(first);

    writeFileSync(join(root, "runs/a/notes.txt"), "other free text"); // not matched
    mkdirSync(join(root, "runs/b.done"), { recursive: true }); // a folder: skipped
    expect(progressFingerprint(root, PATHS)).toBe(first);

    writeFileSync(join(root, "runs/a/attempts.json"), "[1,2]");
    const second = progressFingerprint(root, PATHS);
    expect(second).not.toBe(first);

    writeFileSync(join(root, "runs/a/3.done"), "");
    const third = progressFingerprint(root, PATHS);
    expect(third).not.toBe(second);

    // The same content under another name is another fingerprint (paths count).
    const other = tempDir();
    mkdirSync(join(other, "runs/z"), { recursive: true });
    writeFileSync(join(other, "runs/z/attempts.json"), "[1]");
    expect(progressFingerprint(other, PATHS)).not.toBe(first);
  });

  it("is the same whatever order the files were made in or the patterns listed", () => {
    const a = tempDir();
    const b = tempDir();
    for (const [root, order] of [
      [a, ["x", "y"]],
      [b, ["y", "x"]],
    ] as const) {
      for (const d of order) {
        mkdirSync(join(root, "runs", d), { recursive: true });
        writeFileSync(join(root, "runs", d, "attempts.json"), d);
      }
    }
    expect(progressFingerprint(a, PATHS)).toBe(progressFingerprint(b, [...PATHS].reverse()));
  });

  it("nothing matched is null, never the hash of nothing (which would never move)", () => {
    expect(progressFingerprint(tempDir(), PATHS)).toBeNull();
    expect(progressFingerprint(tempDir(), ["nothing/**"])).toBeNull();
  });

  it("the syntax check accepts what the matcher implements and names what it does not", () => {
    for (const ok of ["runs/*/attempts.json", "**/*.done", "file[!0-9].txt", "a\\{b\\}", "(x)+"])
      expect(unsupportedGlobSyntax(ok), ok).toBeNull();
    expect(unsupportedGlobSyntax("runs/{a,b}/x")).toMatch(/brace/);
    expect(unsupportedGlobSyntax("!runs/tmp")).toMatch(/negation/);
    expect(unsupportedGlobSyntax("runs/+(a|b)")).toMatch(/extglob/);
    expect(unsupportedGlobSyntax("runs/!(tmp)")).toMatch(/extglob/);
  });
});

describe("save records progress", () => {
  const started: ChildProcess[] = [];
  afterAll(() => {
    for (const p of started) p.kill("SIGKILL");
  });
  const pid = () => {
    const p = sleeper();
    started.push(p);
    return String(p.pid);
  };
  const savedEvents = (stateDir: string) =>
    readFileSync(join(stateDir, "journal.jsonl"), "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l))
      .filter((e) => e.type === "saved");

  it("the fingerprint of progress.paths; --progress TEXT verbatim; null without either", () => {
    const p = tempProgram("demo", { progress: { paths: ["runs/*/attempts.json"] } });
    mkdirSync(join(p.root, "runs/a"), { recursive: true });
    writeFileSync(join(p.root, "runs/a/attempts.json"), "[1]");
    const m = pid();
    expect(sheepdog(["save", "--pid", m], { env: p.env }).code).toBe(0);
    expect(sheepdog(["save", "--pid", m], { env: p.env }).code).toBe(0);
    writeFileSync(join(p.root, "runs/a/attempts.json"), "[1,2]");
    expect(sheepdog(["save", "--pid", m], { env: p.env }).code).toBe(0);
    expect(sheepdog(["save", "--pid", m, "--progress", "item 7 merged"], { env: p.env }).code).toBe(
      0,
    );
    const progress = savedEvents(p.stateDir).map((e) => e.progress);
    expect(progress[0]).toMatch(/^sha256:/);
    expect(progress[1]).toBe(progress[0]);
    expect(progress[2]).not.toBe(progress[0]);
    expect(progress[2]).toBe(progressFingerprint(p.root, ["runs/*/attempts.json"]));
    expect(progress[3]).toBe("item 7 merged");

    // Patterns that match no file: no fingerprint (null), and the save says so.
    const none = tempProgram("none", { progress: { paths: ["runs/*/attempts.json"] } });
    const r = sheepdog(["save", "--pid", m, "--json"], { env: none.env });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).notices.join("\n")).toMatch(/progress\.paths match no file/);
    expect(savedEvents(none.stateDir)[0].progress).toBeNull();

    const plain = tempProgram();
    expect(sheepdog(["save", "--pid", m], { env: plain.env }).code).toBe(0);
    expect(savedEvents(plain.stateDir)[0].progress).toBeNull();
  });
});
