// Just enough TOML to read what sheepdog needs from Codex's config files (config.toml and a
// profile's `<name>.config.toml`): top-level keys, `[table]` and `[[array]]` headers with bare
// or quoted parts, and `key = value` lines whose value is a string, a number, a boolean or an
// array of strings. Anything else (inline tables, multi-line strings) is skipped, not guessed:
// sheepdog never writes those files from what it read.

export type TomlValue = string | number | boolean | string[];

/** One `key = value`, with the table it is in (its path; `[[x]]` tables get an index). */
export interface TomlEntry {
  table: string[];
  key: string;
  value: TomlValue;
}

function unquote(s: string): string | null {
  if (s.startsWith('"')) {
    try {
      return JSON.parse(s) as string;
    } catch {
      return null;
    }
  }
  if (s.startsWith("'") && s.endsWith("'") && s.length >= 2) return s.slice(1, -1);
  return null;
}

/** The dotted parts of a header or key: `hooks.state."a:b"` → ["hooks", "state", "a:b"]. */
export function tomlPath(text: string): string[] | null {
  const parts: string[] = [];
  const re = /\s*(?:"((?:[^"\\]|\\.)*)"|'([^']*)'|([A-Za-z0-9_-]+))\s*(\.|$)/y;
  let at = 0;
  while (at < text.length) {
    re.lastIndex = at;
    const m = re.exec(text);
    if (!m) return null;
    if (m[1] !== undefined) {
      const s = unquote(`"${m[1]}"`);
      if (s === null) return null;
      parts.push(s);
    } else parts.push(m[2] ?? m[3] ?? "");
    at = re.lastIndex;
    if (m[4] === "") break;
  }
  return parts.length ? parts : null;
}

function scalarOf(raw: string): TomlValue | null {
  const v = raw.trim();
  if (v === "true") return true;
  if (v === "false") return false;
  if (/^[+-]?\d[\d_]*(?:\.\d+)?$/.test(v)) return Number(v.replace(/_/g, ""));
  const s = unquote(v);
  if (s !== null) return s;
  if (v.startsWith("[") && v.endsWith("]")) {
    const inner = v.slice(1, -1).trim();
    if (inner === "") return [];
    const items = inner.match(/"(?:[^"\\]|\\.)*"|'[^']*'/g) ?? [];
    const strings = items.map(unquote);
    return strings.every((x) => x !== null) ? (strings as string[]) : null;
  }
  return null;
}

/** Strips a comment that is not inside a string. */
function uncomment(line: string): string {
  let quote: string | null = null;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quote) {
      if (c === "\\" && quote === '"') i++;
      else if (c === quote) quote = null;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === "#") return line.slice(0, i);
  }
  return line;
}

/** Every readable `key = value` of a TOML text, in order. */
export function tomlEntries(text: string): TomlEntry[] {
  const out: TomlEntry[] = [];
  let table: string[] = [];
  /** Each array of tables (its resolved path) and its newest element's index. */
  const arrays = new Map<string, number>();
  /** A header's path with the index of every array of tables it goes through (`[[a.b]]` in `[[a]]`). */
  const resolved = (path: string[]): string[] => {
    const out: string[] = [];
    for (const part of path) {
      out.push(part);
      const n = arrays.get(out.join("\u0000"));
      if (n !== undefined) out.push(String(n));
    }
    return out;
  };
  for (const rawLine of text.split(/\r?\n/)) {
    const line = uncomment(rawLine).trim();
    if (line === "") continue;
    const arr = /^\[\[(.+)\]\]$/.exec(line);
    if (arr?.[1]) {
      const path = tomlPath(arr[1]);
      if (!path) {
        table = ["\u0000unreadable"];
        continue;
      }
      const parent = resolved(path.slice(0, -1));
      const key = [...parent, path.at(-1) as string].join("\u0000");
      const n = (arrays.get(key) ?? -1) + 1;
      arrays.set(key, n);
      table = [...parent, path.at(-1) as string, String(n)];
      continue;
    }
    const head = /^\[(.+)\]$/.exec(line);
    if (head?.[1]) {
      const path = tomlPath(head[1]);
      table = path ? resolved(path) : ["\u0000unreadable"];
      continue;
    }
    const eq = /^((?:"(?:[^"\\]|\\.)*"|'[^']*'|[A-Za-z0-9_.-]+|\s)+?)\s*=\s*(.*)$/.exec(line);
    if (!eq?.[1] || eq[2] === undefined) continue;
    const keyPath = tomlPath(eq[1]);
    const value = scalarOf(eq[2]);
    if (!keyPath || value === null) continue;
    out.push({
      table: [...table, ...keyPath.slice(0, -1)],
      key: keyPath.at(-1) as string,
      value,
    });
  }
  return out;
}

/** The value at a table path and key, or undefined. */
export function tomlGet(entries: TomlEntry[], table: string[], key: string): TomlValue | undefined {
  const want = table.join("\u0000");
  return entries.findLast((e) => e.key === key && e.table.join("\u0000") === want)?.value;
}

/** A TOML basic string (JSON's escapes are TOML's for the text sheepdog writes). */
export const tomlString = (s: string): string => JSON.stringify(s);
