// evidence/ keeps the newest 20 folders and at most 50 MB (DESIGN §18); the one just written
// always stays, whatever its size.
import { mkdirSync, readdirSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { EVIDENCE_KEPT, pruneEvidence } from "../../src/watchdog/act/evidence.js";
import { tempDir } from "../helpers/cli.js";

const MB = 1024 * 1024;
const name = (i: number) => `20260101T${String(i).padStart(6, "0")}Z-${1000 + i}`;

function folders(n: number, bytes: (i: number) => number = () => 10): string {
  const base = tempDir();
  for (let i = 0; i < n; i++) {
    const dir = join(base, name(i));
    mkdirSync(dir);
    writeFileSync(join(dir, "facts.json"), "{}");
    truncateSync(join(dir, "facts.json"), bytes(i)); // sparse: sizes without the disk
  }
  return base;
}

describe("pruneEvidence", () => {
  it("33 folders (28 simulated hours of restarts): the newest 20 stay", () => {
    const base = folders(33);
    const removed = pruneEvidence(base, join(base, name(32)));
    expect(removed).toHaveLength(13);
    expect(readdirSync(base).sort()).toEqual(Array.from({ length: 20 }, (_, i) => name(13 + i)));
    expect(EVIDENCE_KEPT).toBe(20);
  });

  it("at most 50 MB: the oldest go first, and none older than one that did not fit stays", () => {
    const base = folders(6, (i) => (i === 2 ? 1 : 15 * MB));
    pruneEvidence(base, join(base, name(5)));
    // 5, 4, 3 = 45 MB and 2 (tiny) fit; 1 would pass 50 MB: it and every older one go
    expect(readdirSync(base).sort()).toEqual([name(2), name(3), name(4), name(5)]);
  });

  it("the one just written stays even when it alone is over the bound; other names are left alone", () => {
    const base = folders(3, (i) => (i === 2 ? 60 * MB : 10));
    mkdirSync(join(base, "notes"));
    pruneEvidence(base, join(base, name(2)));
    expect(readdirSync(base).sort()).toEqual([name(2), "notes"]);
  });
});
