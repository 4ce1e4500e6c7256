// Where an agent CLI's version stands against the versions sheepdog is tested on (DESIGN §17,
// §19): one comparison for Claude Code's list (src/usage/claude-versions.ts) and Codex's
// (src/agent/codex/versions.ts).

/** Compares two dotted versions numerically: negative, zero or positive. */
export function compareVersions(a: string, b: string): number {
  const pa = a.split(".").map(Number);
  const pb = b.split(".").map(Number);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

export type VersionStanding = "tested" | "older" | "between" | "newer";

/** `version` against `tested` (oldest first): one of them, older, newer, or between two. */
export function standingAmong(version: string, tested: readonly string[]): VersionStanding {
  if (tested.includes(version)) return "tested";
  if (compareVersions(version, tested[0] as string) < 0) return "older";
  if (compareVersions(version, tested.at(-1) as string) > 0) return "newer";
  return "between";
}
