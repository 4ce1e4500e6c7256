// Issue 30, part 4: no import circle in src/, type-only imports included (six there were, the
// worst page/ ↔ watchdog/{facts,rule-context}). Read from the sources, so a new one fails here.
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import { describe, expect, it } from "vitest";

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) =>
    d.isDirectory()
      ? sources(join(dir, d.name))
      : d.name.endsWith(".ts")
        ? [join(dir, d.name)]
        : [],
  );
}

/** Every relative import and re-export of each file (static, type-only or dynamic). */
function graph(): Map<string, string[]> {
  const edges = new Map<string, string[]>();
  const pattern =
    /(?:^(?:import|export)\b[^"'`;]*?from\s+|^import\s+|\bimport\()\s*["'](\.[^"']+)["']/gm;
  for (const file of sources("src")) {
    const text = readFileSync(file, "utf8");
    const to = [...text.matchAll(pattern)].map((m) =>
      normalize(join(dirname(file), (m[1] as string).replace(/\.js$/, ".ts"))),
    );
    edges.set(normalize(file), to);
  }
  return edges;
}

/** One circle per strongly connected group of files (Tarjan), as the files in it. */
function circles(edges: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const on = new Set<string>();
  const out: string[][] = [];
  let n = 0;
  const visit = (v: string) => {
    index.set(v, n);
    low.set(v, n++);
    stack.push(v);
    on.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!edges.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v) as number, index.get(w) as number));
    }
    if (low.get(v) !== index.get(v)) return;
    const group: string[] = [];
    for (let w = stack.pop(); w !== undefined; w = stack.pop()) {
      on.delete(w);
      group.push(w);
      if (w === v) break;
    }
    if (group.length > 1) out.push(group.sort());
  };
  for (const v of edges.keys()) if (!index.has(v)) visit(v);
  return out;
}

describe("src/ imports", () => {
  it("form no circle, type-only imports included", () => {
    expect(circles(graph())).toEqual([]);
  });

  it("the check finds a circle when there is one", () => {
    const edges = new Map([
      ["a.ts", ["b.ts"]],
      ["b.ts", ["c.ts"]],
      ["c.ts", ["a.ts"]],
      ["d.ts", ["a.ts"]],
    ]);
    expect(circles(edges)).toEqual([["a.ts", "b.ts", "c.ts"]]);
  });
});
