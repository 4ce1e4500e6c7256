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
  const notices: string[] = [];
  const none = (notice: string): LedgerResult => ({
    pushed: false,
    sha: null,
    committed: false,
    notices: [...notices, notice],
  });
  try {
    if (!statSync(repo).isDirectory()) return none(`ledger: ${repo} is not a directory`);
  } catch {
    return none(`ledger: ${repo} does not exist`);
  }
  const top = await git(["rev-parse", "--show-toplevel"], { cwd: repo });
  if (top.code !== 0) return none(`ledger: ${repo} is not a git repository`);
  // A plain folder inside some other repository is not a ledger: `git add -A` there would
  // commit that whole repository.
  if (realpathSync(top.stdout.trim()) !== realpathSync(repo))
    return none(
      `ledger: ${repo} is not the top of a git repository (that is ${top.stdout.trim()})`,
    );

  const add = await git(["add", "-A"], { cwd: repo });
  if (add.code !== 0) return none(gitFailure(add, "ledger: git add -A failed"));
  // Exit 1 means something is staged; 0 means nothing changed (fine: there may still be an
  // earlier commit to push).
  const staged = await git(["diff", "--cached", "--quiet"], { cwd: repo });
  let committed = false;
  if (staged.code === 1) {
    const message = `sheepdog save: ${opts.program} at ${iso(opts.now)}`;
    let commit = await git(["commit", "-q", "--no-gpg-sign", "-m", message], { cwd: repo });
    if (
      commit.code !== 0 &&
      /tell me who you are|empty ident|unable to auto-detect/i.test(commit.stderr)
    ) {
      // A machine with no git identity still keeps its ledger.
      commit = await git(
        [
          "-c",
          "user.name=sheepdog",
          "-c",
          `user.email=sheepdog@${hostname() || "localhost"}`,
          "commit",
          "-q",
          "--no-gpg-sign",
          "-m",
          message,
        ],
        { cwd: repo },
      );
    }
    if (commit.code !== 0) return none(gitFailure(commit, "ledger: git commit failed"));
    committed = true;
  } else if (staged.code !== 0) {
    return none(gitFailure(staged, "ledger: git diff --cached failed"));
  }

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
  const short = sha.slice(0, 12);
  // Push the exact sha: a success means the remote branch now holds this very commit.
  const push = await git(["push", "--porcelain", cfg.remote, `${sha}:refs/heads/${cfg.branch}`], {
    cwd: repo,
  });
  faultPoint("ledger.after-push");
  if (push.code === 0) return { pushed: true, sha, committed, notices };
  const line = pushLine(push);
  const why = line?.startsWith("!")
    ? `${cfg.remote} refused: ${line.split("\t").slice(2).join(" ")}`
    : gitFailure(push, `cannot push to ${cfg.remote}`);
  notices.push(
    `ledger: not pushed (${why}); commit ${short} is kept locally and goes with the next save`,
  );
  return { pushed: false, sha, committed, notices };
}
