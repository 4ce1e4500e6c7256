import { realpathSync, statSync } from "node:fs";
import { hostname } from "node:os";
import { resolve } from "node:path";
import { type GitResult, git, gitFailure } from "../git/run.js";
import { faultPoint } from "../util/fault-point.js";
import { iso } from "../util/time.js";

export interface LedgerConfig {
  repo: string;
  remote: string;
  branch: string;
}

export interface LedgerResult {
  /** true: the remote's branch now points at our commit; false: it does not; null: nothing to push. */
  pushed: boolean | null;
  /** The commit the remote was asked to take (HEAD after committing), when there is one. */
  sha: string | null;
  /** Whether this save made a new commit. */
  committed: boolean;
  notices: string[];
}

/** The pathspec that leaves every `.sheepdog/` folder, at any depth, out of a ledger commit. */
const STATE_EXCLUDE = ":(exclude,glob)**/.sheepdog/**";

/**
 * The state files a ledger repo tracks (DESIGN §18: `check` refuses such a ledger): every
 * path under a `.sheepdog/` folder in its index, or why they could not be listed.
 */
export async function trackedStateFiles(
  cfg: LedgerConfig,
  root: string,
): Promise<{ repo: string; files: string[] } | { repo: string; error: string }> {
  const repo = resolve(root, cfg.repo);
  const problem = await notALedger(repo);
  if (problem) return { repo, error: problem };
  const r = await git(["ls-files", "-z", "--", ":(glob)**/.sheepdog/**"], { cwd: repo });
  if (r.code !== 0) return { repo, error: gitFailure(r, "ledger: git ls-files failed") };
  return { repo, files: r.stdout.split("\0").filter(Boolean) };
}

/** The first porcelain status line a push printed for its ref (`!\tsrc:dst\t[rejected] (…)`). */
function pushLine(r: GitResult): string | undefined {
  return r.stdout.split("\n").find((l) => /^[ +\-*=!]\t/.test(l));
}

/**
 * Commits everything that changed in the ledger repo and pushes HEAD to `BRANCH` on the
 * remote. Never throws and never resets anything: a failure becomes a notice, and a local
 * commit that could not be pushed stays to be pushed by the next save.
 */
export async function commitAndPushLedger(
  cfg: LedgerConfig,
  opts: { root: string; program: string; now: number },
): Promise<LedgerResult> {
  const repo = resolve(opts.root, cfg.repo);
  const none = (notice: string): LedgerResult => ({
    pushed: false,
    sha: null,
    committed: false,
    notices: [notice],
  });
  const problem = await notALedger(repo);
  if (problem) return none(problem);
  const commit = await commitChanges(repo, `sheepdog save: ${opts.program} at ${iso(opts.now)}`);
  if (typeof commit === "string") return none(commit);
  const committed = commit.committed;
  const head = await git(["rev-parse", "--verify", "-q", "HEAD^{commit}"], { cwd: repo });
  if (head.code !== 0) {
    return {
      pushed: null,
      sha: null,
      committed,
      notices: ["ledger: no commits yet, nothing to push"],
    };
  }
  const sha = head.stdout.trim();
  faultPoint("ledger.after-commit");
  return pushCommit(cfg, repo, sha, committed);
}

/** Why `repo` cannot be a ledger, or null when it can. */
async function notALedger(repo: string): Promise<string | null> {
  try {
    if (!statSync(repo).isDirectory()) return `ledger: ${repo} is not a directory`;
  } catch {
    return `ledger: ${repo} does not exist`;
  }
  const top = await git(["rev-parse", "--show-toplevel"], { cwd: repo });
  if (top.code !== 0) return `ledger: ${repo} is not a git repository`;
  // A plain folder inside some other repository is not a ledger: `git add -A` there would
  // commit that whole repository.
  if (realpathSync(top.stdout.trim()) !== realpathSync(repo))
    return `ledger: ${repo} is not the top of a git repository (that is ${top.stdout.trim()})`;
  return null;
}

/** Stages and commits every change; a notice (string) when git failed. */
async function commitChanges(
  repo: string,
  message: string,
): Promise<{ committed: boolean } | string> {
  // Every change but sheepdog's state folders (DESIGN §18): the claim, the heartbeat, the
  // journal and evidence never leave the host, even where the ledger repo is the program root
  // and a .sheepdog/ was committed before its .gitignore existed.
  const add = await git(["add", "-A", "--", ".", STATE_EXCLUDE], { cwd: repo });
  if (add.code !== 0) return gitFailure(add, "ledger: git add -A failed");
  // Exit 1 means something is staged; 0 means nothing changed (fine: there may still be an
  // earlier commit to push).
  const staged = await git(["diff", "--cached", "--quiet"], { cwd: repo });
  if (staged.code === 0) return { committed: false };
  if (staged.code !== 1) return gitFailure(staged, "ledger: git diff --cached failed");
  let commit = await git(["commit", "-q", "--no-gpg-sign", "-m", message], { cwd: repo });
  if (
    commit.code !== 0 &&
    /tell me who you are|empty ident|unable to auto-detect/i.test(commit.stderr)
  ) {
    // A machine with no git identity still keeps its ledger.
    const identity = [
      "-c",
      "user.name=sheepdog",
      "-c",
      `user.email=sheepdog@${hostname() || "localhost"}`,
    ];
    commit = await git([...identity, "commit", "-q", "--no-gpg-sign", "-m", message], {
      cwd: repo,
    });
  }
  if (commit.code !== 0) return gitFailure(commit, "ledger: git commit failed");
  return { committed: true };
}

async function pushCommit(
  cfg: LedgerConfig,
  repo: string,
  sha: string,
  committed: boolean,
): Promise<LedgerResult> {
  // Push the exact sha: a success means the remote branch now holds this very commit.
  const push = await git(["push", "--porcelain", cfg.remote, `${sha}:refs/heads/${cfg.branch}`], {
    cwd: repo,
  });
  faultPoint("ledger.after-push");
  if (push.code === 0) return { pushed: true, sha, committed, notices: [] };
  const line = pushLine(push);
  const why = line?.startsWith("!")
    ? `${cfg.remote} refused: ${line.split("\t").slice(2).join(" ")}`
    : gitFailure(push, `cannot push to ${cfg.remote}`);
  const notice = `ledger: not pushed (${why}); commit ${sha.slice(0, 12)} is kept locally and goes with the next save`;
  return { pushed: false, sha, committed, notices: [notice] };
}
