// The merge lock's git plumbing: where the ref points (locally or on the remote), the lock
// commit and its message, a compare-and-delete. lock.ts holds the lock's rules over it.
import { statSync } from "node:fs";
import { resolve } from "node:path";
import { RefusedError, RuntimeFailure } from "../errors.js";
import { type GitResult, git, gitFailure } from "../git/run.js";
import type { LockOptions, MergeLockConfig, MergeLockHolder } from "./lock.js";

// The lock commit is made by sheepdog, not by a person: a fixed identity also means a machine
// with no git identity configured can take the lock.
export const LOCK_IDENT = {
  GIT_AUTHOR_NAME: "sheepdog",
  GIT_AUTHOR_EMAIL: "sheepdog@localhost",
  GIT_COMMITTER_NAME: "sheepdog",
  GIT_COMMITTER_EMAIL: "sheepdog@localhost",
};

export function repoOf(cfg: MergeLockConfig, opts: LockOptions): string {
  const repo = resolve(opts.root ?? process.cwd(), cfg.repo);
  try {
    if (statSync(repo).isDirectory()) return repo;
  } catch {
    // reported below
  }
  throw new RuntimeFailure(`merge_lock.repo ${repo} does not exist or is not a directory`);
}

export async function must(r: Promise<GitResult>, what: string): Promise<string> {
  const done = await r;
  if (done.code !== 0) throw new RuntimeFailure(gitFailure(done, what));
  return done.stdout;
}

/** The sha the lock ref points at (on the remote when one is configured), or null. */
export async function refSha(cfg: MergeLockConfig, repo: string): Promise<string | null> {
  if (cfg.remote) {
    const out = await must(
      git(["ls-remote", cfg.remote, cfg.ref], { cwd: repo }),
      `merge lock: cannot read ${cfg.ref} on ${cfg.remote}`,
    );
    for (const line of out.split("\n")) {
      const [sha, name] = line.split("\t");
      if (name === cfg.ref && sha) return sha;
    }
    return null;
  }
  const r = await git(["rev-parse", "-q", "--verify", `${cfg.ref}^{commit}`], { cwd: repo });
  if (r.code === 0) return r.stdout.trim();
  // Exit 1 with no message: no such ref. Anything else (not a repository…) is a failure.
  await must(git(["rev-parse", "--git-dir"], { cwd: repo }), `merge lock: ${repo}`);
  if (r.code === 1) return null;
  throw new RuntimeFailure(gitFailure(r, `merge lock: cannot read ${cfg.ref}`));
}

export async function commitMessage(repo: string, sha: string): Promise<string | null> {
  const r = await git(["cat-file", "commit", sha], { cwd: repo });
  if (r.code !== 0) return null;
  const at = r.stdout.indexOf("\n\n");
  return at < 0 ? "" : r.stdout.slice(at + 2);
}

/**
 * The lock commit's message. A commit made on another machine is fetched by ref name with no
 * destination, no FETCH_HEAD and no maintenance, so no ref that other tools see changes.
 */
export async function lockMessage(
  cfg: MergeLockConfig,
  repo: string,
  sha: string,
): Promise<string | null> {
  const local = await commitMessage(repo, sha);
  if (local !== null || !cfg.remote) return local;
  await git(
    [
      "-c",
      "gc.auto=0",
      "-c",
      "maintenance.auto=false",
      "fetch",
      "-q",
      "--no-tags",
      "--no-write-fetch-head",
      "--recurse-submodules=no",
      cfg.remote,
      cfg.ref,
    ],
    { cwd: repo },
  );
  return commitMessage(repo, sha);
}

/** A push's porcelain status line for its ref: a leading `!` means rejected. */
export function rejected(r: GitResult): boolean {
  return r.stdout.split("\n").some((l) => l.startsWith("!\t"));
}

export async function makeLockCommit(repo: string, holder: MergeLockHolder): Promise<string> {
  const tree = (
    await must(git(["mktree"], { cwd: repo, input: "" }), "merge lock: git mktree")
  ).trim();
  const sha = await must(
    git(["commit-tree", "--no-gpg-sign", tree, "-m", JSON.stringify(holder)], {
      cwd: repo,
      env: LOCK_IDENT,
    }),
    "merge lock: git commit-tree",
  );
  return sha.trim();
}

/** Deletes the ref only if it still points at `sha` (a compare-and-delete). */
export async function deleteIfAt(cfg: MergeLockConfig, repo: string, sha: string): Promise<void> {
  const r = cfg.remote
    ? await git(
        ["push", "--porcelain", `--force-with-lease=${cfg.ref}:${sha}`, cfg.remote, `:${cfg.ref}`],
        { cwd: repo },
      )
    : await git(["update-ref", "-m", "sheepdog merge-lock release", "-d", cfg.ref, sha], {
        cwd: repo,
      });
  if (r.code === 0) return;
  if (rejected(r) || (!cfg.remote && /expected|lock|exist/i.test(r.stderr)))
    throw new RefusedError("merge lock: it changed while being released; nothing was removed");
  throw new RuntimeFailure(gitFailure(r, "merge lock: cannot release"));
}
