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

/**
 * Whether this breakage is news: true (and it is recorded) the first time a given broken text
 * is seen since the config last loaded; false on every later call for the same text.
 */
export function firstSight(stateDir: string, invalid: ConfigInvalid): boolean {
  const marker = join(stateDir, CONFIG_INVALID);
  try {
    const seen = JSON.parse(readFileSync(marker, "utf8")) as { sha?: unknown; error?: unknown };
    if (seen.sha === invalid.sha && seen.error === invalid.error) return false;
  } catch {
    // not seen yet
  }
  writeJsonAtomic(marker, { sha: invalid.sha, error: invalid.error });
  return true;
}
