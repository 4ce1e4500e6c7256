// The package a user installs (DESIGN §16): `npm pack` of this checkout, installed with
// `npm install -g` into an empty prefix, runs every command with nothing beside it, the demo
// included. The bundles carry their own code, so the package declares no dependencies.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { tempDir } from "./helpers/cli.js";

const VERSION = JSON.parse(readFileSync("package.json", "utf8")).version as string;

function run(cmd: string, args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {}) {
  const r = spawnSync(cmd, args, {
    cwd: opts.cwd,
    env: { ...process.env, ...opts.env },
    encoding: "utf8",
    timeout: 180_000,
  });
  return { code: r.status ?? -1, stdout: r.stdout ?? "", stderr: r.stderr ?? "" };
}

let prefix: string;
let tarball: string;
let files: string[];
let bin: string;
/** A shell's PATH with the prefix's bin first, and nothing of this checkout on it. */
let env: NodeJS.ProcessEnv;

beforeAll(() => {
  const out = tempDir("sheepdog-pack-");
  // The dist/ that `npm test` just built; --ignore-scripts so packing never rebuilds it under
  // the other test files running beside this one.
  // A code cache is there to be left out (src/util/code-cache.ts writes them beside the bundles).
  mkdirSync(join("dist", "commands", "v8-cache"), { recursive: true });
  writeFileSync(join("dist", "commands", "v8-cache", "package-test.v8"), "");
  const pack = run("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", out]);
  expect(pack.code, pack.stderr).toBe(0);
  const info = JSON.parse(pack.stdout)[0] as { filename: string; files: { path: string }[] };
  tarball = join(out, info.filename);
  files = info.files.map((f) => f.path);
  prefix = tempDir("sheepdog-prefix-");
  const install = run("npm", [
    "install",
    "-g",
    "--prefix",
    prefix,
    "--offline",
    "--no-audit",
    "--no-fund",
    tarball,
  ]);
  expect(install.code, install.stderr).toBe(0);
  bin = join(prefix, "bin", "sheepdog");
  env = {
    PATH: `${join(prefix, "bin")}:/usr/local/bin:/usr/bin:/bin`,
    HOME: tempDir("sheepdog-home-"),
    SHEEPDOG_HOME: tempDir("sheepdog-loops-"),
    SHEEPDOG_STATE_DIR: tempDir("sheepdog-state-"),
    SHEEPDOG_PROGRAM: "",
    SHEEPDOG_CLI: "",
  };
}, 240_000);

describe("npm pack, then npm install -g into an empty prefix", () => {
  it("the tarball holds the bundles, the demo's toy manager, the docs and the LICENSE; no sources or tests", () => {
    expect(files).toContain("LICENSE");
    // The README's links resolve in an installed copy.
    for (const doc of ["README.md", "CONTRIBUTING.md", "docs/commands.md", "docs/launchers.md"])
      expect(files).toContain(doc);
    expect(files).toContain("bin/sheepdog.cjs");
    expect(files).toContain("dist/cli.cjs");
    expect(files).toContain("demo/toy-manager.mjs");
    expect(files.filter((f) => f.startsWith("src/") || f.startsWith("test/"))).toEqual([]);
    // No code cache: bytecode for this machine's Node, made by whoever ran the CLI here.
    expect(files.filter((f) => f.includes("v8-cache"))).toEqual([]);
  });

  it("declares no dependencies, so the install pulls nothing in", () => {
    const pkg = JSON.parse(readFileSync("package.json", "utf8"));
    expect(pkg.dependencies ?? {}).toEqual({});
    const installed = join(prefix, "lib", "node_modules", "sheepdog");
    expect(existsSync(join(installed, "LICENSE"))).toBe(true);
    expect(existsSync(join(installed, "node_modules"))).toBe(false);
    expect(readdirSync(join(prefix, "lib", "node_modules"))).toEqual(["sheepdog"]);
  });

  it("--version, -v and version print the package's version", () => {
    for (const flag of ["--version", "-v", "version"]) {
      const r = run(bin, [flag], { env });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toBe(`sheepdog ${VERSION}\n`);
    }
  });

  it("help lists the commands; init makes a program that check accepts", () => {
    const help = run("sheepdog", ["help"], { env });
    expect(help.code, help.stderr).toBe(0);
    expect(help.stdout).toContain("sheepdog tick");
    const root = join(env.SHEEPDOG_HOME as string, "catalog");
    const init = run("sheepdog", ["init", root], { env });
    expect(init.code, init.stderr).toBe(0);
    const check = run("sheepdog", ["check", "--program", "catalog"], { env });
    expect(check.code, check.stderr).toBe(0);
    expect(check.stdout).toContain("ok");
  });

  it("npm install -g --prefix DIR git+file://… builds it (the clone's prepare finds no esbuild there) and it runs", () => {
    // The checkout as it is, committed in a repository of its own.
    const repo = tempDir("sheepdog-git-");
    const copy = run("sh", [
      "-c",
      `tar --exclude=node_modules --exclude=./dist --exclude=./.git --exclude=./bench/.work -cf - . | tar -C '${repo}' -xf -`,
    ]);
    expect(copy.code, copy.stderr).toBe(0);
    const git = (...args: string[]) => run("git", ["-C", repo, ...args]);
    expect(git("init", "-q").code).toBe(0);
    expect(git("add", "-A").code).toBe(0);
    const commit = git(
      "-c",
      "user.email=t@sheepdog.invalid",
      "-c",
      "user.name=t",
      "commit",
      "-qm",
      "x",
    );
    expect(commit.code, commit.stderr).toBe(0);
    const dir = tempDir("sheepdog-git-prefix-");
    // npm prepares a git dependency with a nested install of its dev dependencies, which reach
    // the registry (its cache first): the CA bundle vitest.config.ts set aside.
    const ca = process.env.SHEEPDOG_TEST_CA_CERTS;
    const install = run(
      "npm",
      ["install", "-g", "--prefix", dir, "--no-audit", "--no-fund", `git+file://${repo}`],
      { env: ca ? { NODE_EXTRA_CA_CERTS: ca } : {} },
    );
    expect(install.code, install.stderr).toBe(0);
    const v = run(join(dir, "bin", "sheepdog"), ["--version"], { env });
    expect(v.stdout).toBe(`sheepdog ${VERSION}\n`);
    const pkg = join(dir, "lib", "node_modules", "sheepdog");
    expect(existsSync(join(pkg, "dist", "cli.cjs"))).toBe(true);
    expect(existsSync(join(pkg, "docs", "commands.md"))).toBe(true);
  }, 300_000);

  it("the demo runs from the installed package and leaves no manager running, nor its folder", () => {
    const tmp = tempDir("sheepdog-demo-tmp-");
    const r = run("sheepdog", ["demo"], { env: { ...env, TMPDIR: tmp }, cwd: tempDir() });
    expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(0);
    expect(r.stdout).toMatch(/tick → start/);
    expect(r.stdout).toMatch(/The night in one line: \d+ managers/);
    expect(readdirSync(tmp)).toEqual([]);
  }, 180_000);
});
