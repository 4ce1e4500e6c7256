// The one output sanitiser (DESIGN §18): what each form shows for every class of control.
import { describe, expect, it } from "vitest";
import { shownJson, shownLine, shownText, strippedLine } from "../../src/util/sanitize.js";

// biome-ignore lint/suspicious/noControlCharactersInRegex: what must not be there
const RAW = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;
const OSC52 = "\u001b]52;c;aGVsbG8=\u0007";
const OSC8 = "\u001b]8;;https://evil.example/\u001b\\click\u001b]8;;\u001b\\";

describe("shownLine: one line, every control shown", () => {
  it.each([
    ["C0 (ESC, BEL, NUL)", "a\u001b[2Jb\u0007\u0000", "a\\x1b[2Jb\\x07\\x00"],
    ["CR and LF", "a\r\nforged", "a\\x0d\\x0aforged"],
    ["tab", "a\tb", "a\\x09b"],
    ["DEL", "a\u007fb", "a\\x7fb"],
    ["C1 (CSI 0x9b, NEL 0x85)", "a\u009b2Jb\u0085", "a\\x9b2Jb\\x85"],
    ["U+2028 and U+2029", "a\u2028b\u2029", "a\\u2028b\\u2029"],
    ["OSC 52", OSC52, "\\x1b]52;c;aGVsbG8=\\x07"],
    [
      "plain text and other Unicode",
      "Opus 4.6 · ctx 143k — ok ✓ 🐑",
      "Opus 4.6 · ctx 143k — ok ✓ 🐑",
    ],
  ])("%s", (_what, input, shown) => {
    expect(shownLine(input)).toBe(shown);
  });

  it("leaves nothing a terminal acts on", () => {
    let all = "";
    for (let c = 0; c < 0xa0; c++) all += String.fromCharCode(c);
    expect(shownLine(`${all}\u2028\u2029${OSC8}`)).not.toMatch(RAW);
  });
});

describe("shownText: a block of lines", () => {
  it("keeps newline and tab, shows the rest", () => {
    expect(shownText("a\tb\nc\r\u001b[31mred\u009b\u2028")).toBe(
      "a\tb\nc\\x0d\\x1b[31mred\\x9b\\u2028",
    );
  });
});

describe("shownJson: the same value, nothing raw", () => {
  it("escapes what JSON.stringify leaves raw, and parses back to the very same value", () => {
    const value = { note: `x\u007fy\u0085z\u009b\u2028\u2029${OSC52}\r\n` };
    const out = shownJson(JSON.stringify(value));
    expect(out).not.toMatch(RAW);
    expect(JSON.parse(out)).toEqual(value);
  });
});

describe("strippedLine: the statusline's one row", () => {
  it("turns each run of controls into one space", () => {
    expect(strippedLine(`Opus\u001b]52;c;x\u0007\n4.6\u009b\u2028!`)).toBe("Opus ]52;c;x 4.6 !");
  });
});
