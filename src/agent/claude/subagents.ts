import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";

function mtime(path: string): number | null {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return null;
  }
}

/** The newest mtime among `<session>/subagents/*.jsonl` (Claude Code 2.1.328's layout). */
export function subagentsGrewAt(transcript: string): number | null {
  const dir = join(transcript.slice(0, -".jsonl".length), "subagents");
  let newest: number | null = null;
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return null;
  }
  for (const name of names.slice(0, 200)) {
    if (!name.endsWith(".jsonl")) continue;
    const m = mtime(join(dir, name));
    if (m !== null && (newest === null || m > newest)) newest = m;
  }
  return newest;
}
