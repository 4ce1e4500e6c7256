// The Codex CLI versions sheepdog is tested against (DESIGN §17, §19): named here and nowhere
// else in the code. Moving to a release: `CODEX_VERSION=<X> npm run capture:codex`
// (test/fixtures/codex-<X>/), then add it here.

/** The version the real-CLI tests are pinned to (test/helpers/codex-cli.ts). */
export const CODEX_PINNED_VERSION = "0.171.0";
/** Every tested version, oldest first. */
export const CODEX_TESTED_VERSIONS: readonly string[] = [CODEX_PINNED_VERSION];

/** How a maintainer checks a release the suite does not know yet. */
export const CODEX_CHECK_A_VERSION =
  "CODEX_VERSION=<X> npm run capture:codex in a sheepdog checkout";

/** `0.171.0` from `codex --version`'s `codex-cli 0.171.0`; null when it names none. */
export function parseCodexVersion(output: string): string | null {
  return /\bcodex-cli\s+(\d+\.\d+\.\d+)\b/.exec(output)?.[1] ?? null;
}

function compare(a: string, b: string): number {
  const pa = a.split(".").map(Number);
  const pb = b.split(".").map(Number);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/** Where a version stands against the tested ones. */
export function codexVersionStanding(version: string): "tested" | "older" | "between" | "newer" {
  if (CODEX_TESTED_VERSIONS.includes(version)) return "tested";
  if (compare(version, CODEX_TESTED_VERSIONS[0] as string) < 0) return "older";
  if (compare(version, CODEX_TESTED_VERSIONS.at(-1) as string) > 0) return "newer";
  return "between";
}
