// The Codex CLI versions sheepdog is tested against (DESIGN §17, §19): named here and nowhere
// else in the code. Moving to a release: `CODEX_VERSION=<X> npm run capture:codex`
// (test/fixtures/codex-<X>/), then add it here.
import { standingAmong, type VersionStanding } from "../../util/versions.js";

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

/** Where a version stands against the tested ones. */
export function codexVersionStanding(version: string): VersionStanding {
  return standingAmong(version, CODEX_TESTED_VERSIONS);
}
