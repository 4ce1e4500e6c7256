// A git ref used as a lock or a lease (DESIGN §10, §15): where it points, the JSON its commit's
// message holds, and compare-and-swap updates. On a remote every change is a push whose lease
// names the old value (`--force-with-lease=REF:<sha>`, or `REF:` for "must not exist"), which the
// server checks under its own ref lock; locally `update-ref` with the old value. Never a plain
// force push. No ref other tools see changes: fetches have no destination and no FETCH_HEAD.
import { RuntimeFailure } from "../errors.js";
import { type GitResult, git, gitFailure } from "./run.js";

export interface RefAt {
  /** A local repository to run git in. */
  repo: string;
  /** The remote whose ref it is; null: the repository's own ref. */
  remote: string | null;
  ref: string;
  /** What the ref is, for error messages ("merge lock", "lease"). */
  what: string;
  /** Each git call's deadline (default gitTimeoutMs()): a lease's must fit inside its margin. */
  timeoutMs?: number;
}

// The commits are made by sheepdog, not by a person: a fixed identity also means a machine with
// no git identity configured can make them.
const IDENT = {
  GIT_AUTHOR_NAME: "sheepdog",
  GIT_AUTHOR_EMAIL: "sheepdog@localhost",
  GIT_COMMITTER_NAME: "sheepdog",
  GIT_COMMITTER_EMAIL: "sheepdog@localhost",
};

export async function must(r: Promise<GitResult>, what: string): Promise<string> {
  const done = await r;
  if (done.code !== 0) throw new RuntimeFailure(gitFailure(done, what));
  return done.stdout;
}

/** The sha the ref points at (on the remote when there is one), or null when there is none. */
export async function refSha(at: RefAt): Promise<string | null> {
  if (at.remote) {
    const out = await must(
      git(["ls-remote", at.remote, at.ref], { cwd: at.repo, timeoutMs: at.timeoutMs }),
      `${at.what}: cannot read ${at.ref} on ${at.remote}`,
    );
    for (const line of out.split("\n")) {
      const [sha, name] = line.split("\t");
      if (name === at.ref && sha) return sha;
    }
    return null;
  }
  const r = await git(["rev-parse", "-q", "--verify", `${at.ref}^{commit}`], {
    cwd: at.repo,
    timeoutMs: at.timeoutMs,
  });
  if (r.code === 0) return r.stdout.trim();
  // Exit 1 with no message: no such ref. Anything else (not a repository…) is a failure.
  await must(
    git(["rev-parse", "--git-dir"], { cwd: at.repo, timeoutMs: at.timeoutMs }),
    `${at.what}: ${at.repo}`,
  );
  if (r.code === 1) return null;
  throw new RuntimeFailure(gitFailure(r, `${at.what}: cannot read ${at.ref}`));
}

async function localMessage(repo: string, sha: string): Promise<string | null> {
  const r = await git(["cat-file", "commit", sha], { cwd: repo });
  if (r.code !== 0) return null;
  const at = r.stdout.indexOf("\n\n");
  return at < 0 ? "" : r.stdout.slice(at + 2);
}

/**
 * The message of the commit `sha` the ref pointed at; fetched by ref name when not here. Null:
 * the fetch brought another commit (the ref moved meanwhile). A fetch that fails throws: a
 * remote that cannot be read is not a commit that is no lock or lease.
 */
export async function refMessage(at: RefAt, sha: string): Promise<string | null> {
  const local = await localMessage(at.repo, sha);
  if (local !== null || !at.remote) return local;
  const fetched = await git(
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
      at.remote,
      at.ref,
    ],
    { cwd: at.repo, timeoutMs: at.timeoutMs },
  );
  if (fetched.code !== 0) {
    // Moved or gone since it was listed (a lock released): the caller reads it again. Still
    // there, and no fetch of it: the remote is failing.
    if ((await refSha(at)) !== sha) return null;
    throw new RuntimeFailure(
      gitFailure(fetched, `${at.what}: cannot fetch ${at.ref} from ${at.remote}`),
    );
  }
  return localMessage(at.repo, sha);
}

/**
 * Where the ref points and its commit's message (null sha: no ref; null message: the commit
 * could not be read). The ref can move between reading it and fetching its commit: read again
 * then.
 */
export async function readRef(at: RefAt): Promise<{ sha: string | null; message: string | null }> {
  for (let attempt = 0; ; attempt++) {
    const sha = await refSha(at);
    if (sha === null) return { sha: null, message: null };
    const message = await refMessage(at, sha);
    if (message !== null || attempt >= 2) return { sha, message };
  }
}

/** The empty tree's id in this repository (its hash differs between SHA-1 and SHA-256 repos). */
export async function emptyTree(at: RefAt): Promise<string> {
  return (
    await must(
      git(["mktree"], { cwd: at.repo, input: "", timeoutMs: at.timeoutMs }),
      `${at.what}: git mktree`,
    )
  ).trim();
}

/**
 * A commit with the empty tree whose message is `message` (no parent: nothing to pull). A
 * caller that kept the tree's id from before passes it, and saves a git call.
 */
export async function messageCommit(at: RefAt, message: string, tree?: string): Promise<string> {
  tree ??= await emptyTree(at);
  const sha = await must(
    git(["commit-tree", "--no-gpg-sign", tree, "-m", message], {
      cwd: at.repo,
      env: IDENT,
      timeoutMs: at.timeoutMs,
    }),
    `${at.what}: git commit-tree`,
  );
  return sha.trim();
}

/**
 * A push's porcelain status line for its ref: a leading `!` means rejected; `=` (up to date)
 * means the ref already held this very commit, which another writer made byte for byte (the
 * same message in the same second): not this compare-and-swap's doing either.
 */
export function rejected(r: GitResult): boolean {
  return r.stdout.split("\n").some((l) => l.startsWith("!\t") || l.startsWith("=\t"));
}

/**
 * Points the ref at `sha` only if it still points at `expected` (null: only if it does not
 * exist). True when it did; false when the ref had moved (another writer won); throws when git
 * or the remote fails otherwise.
 */
export async function casRef(at: RefAt, sha: string, expected: string | null): Promise<boolean> {
  const r = at.remote
    ? await git(
        [
          "push",
          "--porcelain",
          `--force-with-lease=${at.ref}:${expected ?? ""}`,
          at.remote,
          `${sha}:${at.ref}`,
        ],
        { cwd: at.repo, timeoutMs: at.timeoutMs },
      )
    : await git(["update-ref", "-m", `sheepdog ${at.what}`, at.ref, sha, expected ?? ""], {
        cwd: at.repo,
        timeoutMs: at.timeoutMs,
      });
  if (at.remote ? rejected(r) : r.code !== 0 && /exists|expected|lock/i.test(r.stderr))
    return false;
  if (r.code === 0) return true;
  throw new RuntimeFailure(
    gitFailure(
      r,
      at.remote ? `${at.what}: cannot push to ${at.remote}` : `${at.what}: git update-ref`,
    ),
  );
}

/** Deletes the ref only if it still points at `sha`. False when it had moved. */
export async function casDelete(at: RefAt, sha: string): Promise<boolean> {
  const r = at.remote
    ? await git(
        ["push", "--porcelain", `--force-with-lease=${at.ref}:${sha}`, at.remote, `:${at.ref}`],
        { cwd: at.repo, timeoutMs: at.timeoutMs },
      )
    : await git(["update-ref", "-m", `sheepdog ${at.what} release`, "-d", at.ref, sha], {
        cwd: at.repo,
        timeoutMs: at.timeoutMs,
      });
  if (r.code === 0) return true;
  if (rejected(r) || (!at.remote && /expected|lock|exist/i.test(r.stderr))) return false;
  throw new RuntimeFailure(gitFailure(r, `${at.what}: cannot release`));
}
