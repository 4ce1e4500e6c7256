// What a new Claude Code release's captures say differently from a tested version's (DESIGN
// §17): every file the two folders share, compared line by line after what changes at every run
// (times, ids, epochs, clock times in texts, durations) is replaced by a placeholder.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { basename, join } from "node:path";

/** A capture's text with what differs at every run replaced by placeholders. */
export function normalized(text: string): string {
  return text
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z/g, "{TIME}")
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, "{UUID}")
    .replace(/\b(?:req|msg|toolu)_[0-9A-Za-z]+/g, "{ID}")
    .replace(/\b1[0-9]{9}(?:[0-9]{3,9})?\b/g, "{EPOCH}")
    .replace(/\b[A-Z][a-z]{2} \d{1,2}, /g, "{DATE} ")
    .replace(/\b\d{1,2}(?::\d\d)?\s?(?:[ap]m|[AP]M)\b/g, "{CLOCK}")
    .replace(/\b\d+(?:\.\d+)?(?:ms|s|m)\b/g, "{DUR}")
    .replace(/"(?:\w*[Dd]uration_?[Mm]s|ttftMs|\w*cost_usd|pid)":\s*[\d.]+/g, '"{N}"')
    .replace(/"version":\s*"[\d.]+"/g, '"version": "{VERSION}"')
    .replace(/Claude Code v[\d.]+/g, "Claude Code v{VERSION}")
    .replace(/snapshot-bash-\{EPOCH\}-[a-z0-9]+/g, "snapshot-bash-{EPOCH}-{ID}");
}

/**
 * A transcript line by its shape (type, subtype and keys): contents move at every run, and a
 * new field or entry type is what a new release changes.
 */
function shapeOf(line: string): string {
  try {
    const e = JSON.parse(line) as Record<string, unknown>;
    const sub = typeof e.subtype === "string" ? `:${e.subtype}` : "";
    const msg = e.message as Record<string, unknown> | undefined;
    const inner =
      msg && typeof msg === "object" ? ` message{${Object.keys(msg).sort().join(",")}}` : "";
    return `${String(e.type)}${sub} {${Object.keys(e).sort().join(",")}}${inner}`;
  } catch {
    return normalized(line);
  }
}

/** A file's lines as compared: transcripts by shape, the rest normalized. */
function comparable(file: string): string[] {
  const text = readFileSync(file, "utf8");
  if (file.endsWith(".jsonl")) return [...new Set(text.split("\n").filter(Boolean).map(shapeOf))];
  return normalized(text).split("\n");
}

function files(dir: string): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  const walk = (d: string, rel: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (e.isDirectory()) walk(join(d, e.name), join(rel, e.name));
      else if (e.name !== "README.md") out.push(join(rel, e.name));
    }
  };
  walk(dir, "");
  return out.sort();
}

/** Lines of `a` not in `b`, as a multiset (a line moved counts as the same). */
function missing(a: string[], b: string[]): string[] {
  const left = new Map<string, number>();
  for (const l of b) left.set(l, (left.get(l) ?? 0) + 1);
  return a.filter((l) => {
    const n = left.get(l) ?? 0;
    if (n > 0) {
      left.set(l, n - 1);
      return false;
    }
    return true;
  });
}

/** The report `npm run capture:claude` prints: what the new folder says differently. */
export function diffCaptures(fresh: string, tested: string, maxLines = 8): string {
  const name = (d: string) => basename(d);
  if (!existsSync(tested)) return `capture: no ${name(tested)} to compare ${name(fresh)} with\n`;
  const a = files(fresh);
  const b = files(tested);
  const out = [`capture: ${name(fresh)} compared with ${name(tested)}:`];
  const onlyNew = a.filter((f) => !b.includes(f));
  const onlyOld = b.filter((f) => !a.includes(f));
  let same = 0;
  for (const f of a.filter((x) => b.includes(x))) {
    const la = comparable(join(fresh, f));
    const lb = comparable(join(tested, f));
    const added = missing(la, lb);
    const gone = missing(lb, la);
    if (added.length === 0 && gone.length === 0) {
      same++;
      continue;
    }
    out.push(`  differs: ${f} (${gone.length} line(s) gone, ${added.length} new)`);
    const clip = (l: string) => (l.length > 160 ? `${l.slice(0, 159)}…` : l);
    for (const l of gone.slice(0, maxLines)) out.push(`    - ${clip(l.trim())}`);
    for (const l of added.slice(0, maxLines)) out.push(`    + ${clip(l.trim())}`);
  }
  out.push(`  the same (but for times and ids): ${same} file(s)`);
  if (onlyNew.length) out.push(`  only in ${name(fresh)}: ${onlyNew.join(", ")}`);
  if (onlyOld.length) out.push(`  only in ${name(tested)}: ${onlyOld.join(", ")}`);
  return `${out.join("\n")}\n`;
}
