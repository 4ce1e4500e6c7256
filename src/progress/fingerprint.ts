import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { relative, resolve, sep } from "node:path";
import { globFiles } from "./glob.js";

/**
 * The progress fingerprint of a program (DESIGN §4): a short sha256 over the relative paths
 * and contents of the files its `progress.paths` globs match, in sorted order. Nothing matched
 * (or nothing readable) gives null: the hash of nothing never moves, so it must never count as
 * evidence of no progress (issue 11). Files that vanish mid-walk are skipped, so a run that is
 * writing never makes a save fail.
 */
export function progressFingerprint(root: string, patterns: readonly string[]): string | null {
  const base = resolve(root);
  const files = new Set<string>();
  for (const p of patterns) for (const f of globFiles(base, p)) files.add(f);
  const rel = [...files]
    .map((f) => ({ f, r: relative(base, f).split(sep).join("/") }))
    .sort((a, b) => (a.r < b.r ? -1 : a.r > b.r ? 1 : 0));
  const hash = createHash("sha256");
  let hashed = 0;
  for (const { f, r } of rel) {
    let content: Buffer;
    try {
      content = readFileSync(f);
    } catch {
      continue;
    }
    hash.update(`${r}\0${content.length}\0`);
    hash.update(content);
    hashed++;
  }
  if (hashed === 0) return null;
  return `sha256:${hash.digest("hex").slice(0, 16)}`;
}
