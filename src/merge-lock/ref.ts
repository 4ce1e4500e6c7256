// The merge lock's ref (DESIGN §10): where it is, its holder's commit, a compare-and-delete,
// over the one ref compare-and-swap (git/ref-cas.ts) the lease uses too. lock.ts holds the
// lock's rules.
import { statSync } from "node:fs";
import { resolve } from "node:path";
import type { ProgramConfig } from "../config/schema.js";
import { RefusedError, RuntimeFailure } from "../errors.js";
import { casDelete, messageCommit, type RefAt } from "../git/ref-cas.js";

/** The holder JSON a merge-lock commit's message carries (DESIGN §10). */
export interface MergeLockHolder {
  pid: number;
  start_time: string;
  machine_id: string;
  item: string | null;
  at: string;
}

export type MergeLockConfig = NonNullable<ProgramConfig["merge_lock"]>;

export interface LockOptions {
  /** Base for a relative `merge_lock.repo` (the program root); default the working directory. */
  root?: string;
  now?: number;
}

export function repoOf(cfg: MergeLockConfig, opts: LockOptions): string {
  const repo = resolve(opts.root ?? process.cwd(), cfg.repo);
  try {
    if (statSync(repo).isDirectory()) return repo;
  } catch {
    // reported below
  }
  throw new RuntimeFailure(`merge_lock.repo ${repo} does not exist or is not a directory`);
}

export function lockRef(cfg: MergeLockConfig, repo: string): RefAt {
  return { repo, remote: cfg.remote ?? null, ref: cfg.ref, what: "merge lock" };
}

export function makeLockCommit(at: RefAt, holder: MergeLockHolder): Promise<string> {
  return messageCommit(at, JSON.stringify(holder));
}

/** Deletes the ref only if it still points at `sha` (a compare-and-delete). */
export async function deleteIfAt(at: RefAt, sha: string): Promise<void> {
  if (!(await casDelete(at, sha)))
    throw new RefusedError("merge lock: it changed while being released; nothing was removed");
}
