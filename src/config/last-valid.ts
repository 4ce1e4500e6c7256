// A config that turns invalid while a program runs never switches supervision off (DESIGN
// §16): every successful load keeps a copy of program.json in the state folder, and the
// commands that supervise (tick, watch, save) go on with that copy when the file breaks.
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { writeFileAtomic, writeJsonAtomic } from "../util/fs.js";
import { sha256Hex } from "../util/sha256.js";

/** The copy of the last program.json that loaded. */
export const LAST_VALID = "last-valid-program.json";
/** Which broken program.json was last journaled, so `config_invalid` is journaled once per change. */
export const CONFIG_INVALID = "config-invalid.json";

/** Why the config in use is not program.json itself. */
export interface ConfigInvalid {
  file: string;
  error: string;
  /** sha256 of the broken file's text (empty when it cannot be read). */
  sha: string;
}

/** Keeps `text` as the last valid config, and forgets an earlier breakage (the file is fixed). */
export function rememberValid(stateDir: string, text: string): void {
  const path = join(stateDir, LAST_VALID);
  let kept: string | null = null;
  try {
    kept = readFileSync(path, "utf8");
  } catch {
    // none yet
  }
  if (kept !== text) writeFileAtomic(path, text, 0o600);
  const marker = join(stateDir, CONFIG_INVALID);
  if (existsSync(marker)) rmSync(marker, { force: true });
}

export function lastValidText(stateDir: string): string | null {
  try {
    return readFileSync(join(stateDir, LAST_VALID), "utf8");
  } catch {
    return null;
  }
}

/** What made program.json unusable, with the hash of the text that did it. */
export function invalidOf(file: string, error: string): ConfigInvalid {
  let text = "";
  try {
    text = readFileSync(file, "utf8");
  } catch {
    // unreadable: the error says so
  }
  return { file, error, sha: text ? sha256Hex(text) : "" };
}

/** How far apart two reads of the same broken text must be before `watch` calls it invalid. */
export const CONFIG_SETTLE_MS = 2000;

/**
 * Whether this breakage is news to journal now: true (and it is recorded as journaled) once per
 * broken text since the config last loaded; false on every later call for the same text. With
 * `settleMs` (watch, DESIGN §18) the text must be read twice, that far apart: an editor that
 * saves in two steps is not "invalid" for the 400 ms between them. The first read is recorded
 * and answered false; the caller reads the file again after `settleMs`.
 */
export function sightOf(
  stateDir: string,
  invalid: ConfigInvalid,
  opts: { now?: number; settleMs?: number } = {},
): boolean {
  const now = opts.now ?? Date.now();
  const settle = opts.settleMs ?? 0;
  const marker = join(stateDir, CONFIG_INVALID);
  let seen: { sha?: unknown; error?: unknown; first_seen?: unknown; journaled?: unknown } = {};
  try {
    seen = JSON.parse(readFileSync(marker, "utf8"));
  } catch {
    // not seen yet
  }
  const same = seen.sha === invalid.sha && seen.error === invalid.error;
  // (a marker of an older version, without `journaled`, was journaled)
  if (same && seen.journaled !== false) return false;
  const first = same && typeof seen.first_seen === "string" ? Date.parse(seen.first_seen) : now;
  const settled = now - first >= settle;
  writeJsonAtomic(marker, {
    sha: invalid.sha,
    error: invalid.error,
    first_seen: new Date(first).toISOString(),
    journaled: settled,
  });
  return settled;
}

/** Whether this broken text was read once and waits for its second read (watch). */
export function sightPending(stateDir: string, invalid: ConfigInvalid): boolean {
  try {
    const seen = JSON.parse(readFileSync(join(stateDir, CONFIG_INVALID), "utf8"));
    return seen.sha === invalid.sha && seen.error === invalid.error && seen.journaled === false;
  } catch {
    return false;
  }
}

/** sightOf at once (a tick: its next look is a cadence away). */
export function firstSight(stateDir: string, invalid: ConfigInvalid): boolean {
  return sightOf(stateDir, invalid);
}
