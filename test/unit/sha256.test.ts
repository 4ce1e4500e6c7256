// The plain-JS SHA-256 behind the machine id gives node:crypto's digest, for any text.
import { createHash } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { sha256Hex } from "../../src/util/sha256.js";

const ref = (s: string) => createHash("sha256").update(s).digest("hex");

describe("sha256Hex", () => {
  it.each([
    "",
    "abc",
    "sheepdog:0123456789abcdef0123456789abcdef",
    "x".repeat(55),
    "x".repeat(56),
    "x".repeat(64),
    "é✓🐑",
  ])("%j", (s) => expect(sha256Hex(s)).toBe(ref(s)));

  it("equals createHash('sha256') on any string, block boundaries included", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme", maxLength: 300 }), (s) => sha256Hex(s) === ref(s)),
      {
        numRuns: 500,
      },
    );
  });
});
