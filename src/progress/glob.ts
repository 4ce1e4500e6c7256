import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";

// Node 20 has no fs.glob: this is a small matcher for progress paths. Supported: `*` and `?`
// (never across `/`), `[abc]`, `[a-z]`, `[!a]`/`[^a]`, `**` as a whole segment (zero or more
// folders), `\` escapes. As in shells, a wildcard does not match a leading `.`, and `**` does not
// descend into dot-folders (so `.git` and `.sheepdog` stay out unless named).

const MAGIC = /[*?[\\]/;

/** A matcher for one path segment (a name with no `/`). */
export function segmentMatcher(segment: string): (name: string) => boolean {
  if (!MAGIC.test(segment)) return (name) => name === segment;
  let re = "";
  for (let i = 0; i < segment.length; i++) {
    const c = segment[i] as string;
    if (c === "\\" && i + 1 < segment.length) {
      re += escapeRe(segment[++i] as string);
    } else if (c === "*") {
      re += "[^/]*";
    } else if (c === "?") {
      re += "[^/]";
    } else if (c === "[") {
      const end = classEnd(segment, i);
      if (end < 0) {
        re += "\\[";
        continue;
      }
      let body = segment.slice(i + 1, end);
      let negate = false;
      if (body.startsWith("!") || body.startsWith("^")) {
        negate = true;
        body = body.slice(1);
      }
      const inner = body.replace(/[\]\\^]/g, (m) => `\\${m}`);
      re += negate ? `[^/${inner}]` : `[${inner}]`;
      i = end;
    } else {
      re += escapeRe(c);
    }
  }
  const compiled = new RegExp(`^${re}$`, "s");
  const dotAllowed = segment.startsWith(".");
  return (name) => (dotAllowed || !name.startsWith(".")) && compiled.test(name);
}

/** Index of the `]` closing the class that opens at `open`, or -1 (then `[` is literal). */
function classEnd(segment: string, open: number): number {
  let j = open + 1;
  if (segment[j] === "!" || segment[j] === "^") j++;
  if (segment[j] === "]") j++; // a `]` first in the class is a member
  const end = segment.indexOf("]", j);
  return end;
}

function escapeRe(c: string): string {
  return c.replace(/[.*+?^${}()|[\]\\/-]/g, (m) => `\\${m}`);
}

function literalOf(segment: string): string {
  return segment.replace(/\\(.)/g, "$1");
}

// The pattern's segments; a trailing `**` means every file below it (as if `**` then `*`).
function splitPattern(pattern: string): string[] {
  const segs = pattern.split("/").filter((s) => s !== "" && s !== ".");
  if (segs.at(-1) === "**") segs.push("*");
  return segs;
}

/** Whether a `/`-separated relative path matches a pattern (the same rules the walk uses). */
export function matchPath(pattern: string, path: string): boolean {
  const segs = splitPattern(pattern);
  const names = path.split("/").filter(Boolean);
  const matchers = segs.map((s) => (s === "**" ? null : segmentMatcher(s)));
  const go = (si: number, ni: number): boolean => {
    if (si === segs.length) return ni === names.length;
    const m = matchers[si];
    if (m === null || m === undefined) {
      if (go(si + 1, ni)) return true;
      // `**` eats one more folder (never a dot-folder, never the file itself)
      const name = names[ni];
      return ni < names.length - 1 && name !== undefined && !name.startsWith(".") && go(si, ni + 1);
    }
    const name = names[ni];
    return name !== undefined && m(name) && go(si + 1, ni + 1);
  };
  return go(0, 0);
}

function isDir(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function entries(dir: string): { name: string; dir: boolean; link: boolean }[] {
  try {
    return readdirSync(dir, { withFileTypes: true }).map((d) => ({
      name: d.name,
      dir: d.isDirectory(),
      link: d.isSymbolicLink(),
    }));
  } catch {
    return [];
  }
}

/**
 * The files (never folders) under `base` matched by `pattern`, as absolute paths. Walks only
 * where the pattern can match: literal segments are looked up, not listed. `**` does not
 * follow symbolic links to folders (no loops).
 */
export function globFiles(base: string, pattern: string): string[] {
  const absolute = pattern.startsWith("/");
  const segs = splitPattern(pattern);
  const found = new Set<string>();
  const walk = (dir: string, i: number): void => {
    if (i === segs.length) {
      try {
        if (statSync(dir).isFile()) found.add(dir);
      } catch {
        // vanished or dangling: not a match
      }
      return;
    }
    const seg = segs[i] as string;
    if (seg === "**") {
      walk(dir, i + 1);
      for (const e of entries(dir)) {
        if (e.dir && !e.link && !e.name.startsWith(".")) walk(join(dir, e.name), i);
      }
      return;
    }
    if (!MAGIC.test(seg)) {
      const next = join(dir, literalOf(seg));
      if (i === segs.length - 1 || isDir(next)) walk(next, i + 1);
      return;
    }
    const match = segmentMatcher(seg);
    for (const e of entries(dir)) {
      if (match(e.name)) walk(join(dir, e.name), i + 1);
    }
  };
  walk(absolute ? "/" : base, 0);
  return [...found];
}
