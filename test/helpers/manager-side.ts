import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "./cli.js";

/**
 * Git identity and config for tests: no global or system config is read, so the tests
 * behave the same on a machine with no git identity and with any user config.
 */
export function gitEnv(home: string): NodeJS.ProcessEnv {
  const globalConfig = join(home, ".gitconfig-test");
  writeFileSync(globalConfig, "[init]\n\tdefaultBranch = main\n");
  return {
    GIT_CONFIG_GLOBAL: globalConfig,
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_AUTHOR_NAME: "Test Author",
    GIT_AUTHOR_EMAIL: "author@example.test",
    GIT_COMMITTER_NAME: "Test Committer",
    GIT_COMMITTER_EMAIL: "committer@example.test",
    GIT_TERMINAL_PROMPT: "0",
  };
}

/** Runs git and returns trimmed stdout; throws with stderr when git fails. */
export function gitOut(cwd: string, args: string[], env: NodeJS.ProcessEnv): string {
  const r = spawnSync("git", args, { cwd, env: { ...process.env, ...env }, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`git ${args.join(" ")} in ${cwd}: ${r.stderr}`);
  return r.stdout.trim();
}

/** Like gitOut, but returns the exit code instead of throwing. */
export function gitTry(cwd: string, args: string[], env: NodeJS.ProcessEnv) {
  const r = spawnSync("git", args, { cwd, env: { ...process.env, ...env }, encoding: "utf8" });
  return { code: r.status ?? -1, stdout: r.stdout.trim(), stderr: r.stderr };
}

/** A bare repository to stand in for the remote. */
export function bareRemote(env: NodeJS.ProcessEnv, parent = tempDir("sheepdog-remote-")): string {
  const path = join(parent, "remote.git");
  gitOut(parent, ["init", "-q", "--bare", path], env);
  return path;
}

/** A working repository at `path` with `origin` set to `remote` (when given). */
export function workRepo(path: string, env: NodeJS.ProcessEnv, remote?: string): string {
  gitOut(tempDir(), ["init", "-q", path], env);
  if (remote) gitOut(path, ["remote", "add", "origin", remote], env);
  return path;
}

export { holdsWithin as waitFor } from "./poll.js";
