import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { LINE_CAP, linesBackward } from "../../src/usage/backward.js";
import { parseRefusal } from "../../src/usage/refusal.js";
import {
  contextTokensOf,
  findTranscript,
  projectDirOf,
  readTail,
  refusalAtEnd,
} from "../../src/usage/transcript.js";
import { tempDir } from "../helpers/cli.js";
import {
  age,
  apiErrorLine,
  assistantLine,
  FIXTURES,
  toolResultLine,
  userLine,
  writeTranscript,
} from "../helpers/usage.js";

const BASIC = join(FIXTURES, "transcript-basic.jsonl");
const LIMIT = join(FIXTURES, "transcript-limit.jsonl");
const basicLines = () => readFileSync(BASIC, "utf8").split("\n").filter(Boolean);

describe("contextTokensOf", () => {
  it("reads the last main-thread assistant usage of both fixtures", () => {
    expect(contextTokensOf(BASIC)).toBe(143210);
    expect(contextTokensOf(LIMIT)).toBe(143210);
  });

  it("skips a torn last line, even one that would have a bigger context", () => {
    const dir = tempDir();
    const whole = assistantLine({ input: 9, cc: 9, cr: 190000 });
    const p = writeTranscript(
      join(dir, "t.jsonl"),
      basicLines(),
      whole.slice(0, whole.length - 40),
    );
    expect(contextTokensOf(p)).toBe(143210);
    // The same line once whole (its newline written) counts.
    writeFileSync(p, `${readFileSync(p, "utf8")}${whole.slice(-40)}\n`);
    expect(contextTokensOf(p)).toBe(190018);
  });

  it("walks past a 20 MB tool result at the end, terminated or torn", () => {
    const dir = tempDir();
    const big = toolResultLine(20 * 1024 * 1024);
    const p = writeTranscript(join(dir, "t.jsonl"), [...basicLines(), big]);
    expect(contextTokensOf(p)).toBe(143210);
    const q = writeTranscript(join(dir, "u.jsonl"), basicLines(), big.slice(0, 15_000_000));
    expect(contextTokensOf(q)).toBe(143210);
  });

  it("reads an over-sized assistant entry (a huge Write input) from its two ends", () => {
    const dir = tempDir();
    const huge = assistantLine(
      { input: 3, cc: 1000, cr: 150000 },
      {
        content: [
          { type: "tool_use", name: "Write", input: { content: "y".repeat(LINE_CAP + 5) } },
        ],
      },
    );
    const p = writeTranscript(join(dir, "t.jsonl"), [...basicLines(), huge, toolResultLine(100)]);
    expect(contextTokensOf(p)).toBe(151003);
  });

  it("ignores sidechain and synthetic entries after the last main-thread one", () => {
    const dir = tempDir();
    const p = writeTranscript(join(dir, "t.jsonl"), [
      ...basicLines(),
      assistantLine({ input: 1, cc: 1, cr: 199000 }, { sidechain: true }),
      apiErrorLine("API Error: 529 overloaded"),
    ]);
    expect(contextTokensOf(p)).toBe(143210);
  });

  it("is null without any assistant entry, or for a missing file", () => {
    const dir = tempDir();
    const p = writeTranscript(join(dir, "t.jsonl"), [userLine("hello"), toolResultLine(70_000)]);
    expect(contextTokensOf(p)).toBeNull();
    expect(contextTokensOf(writeTranscript(join(dir, "e.jsonl"), []))).toBeNull();
    expect(contextTokensOf(join(dir, "absent.jsonl"))).toBeNull();
  });
});

describe("linesBackward", () => {
  it("yields every line, last first, across 64 KB chunk edges", () => {
    const dir = tempDir();
    const sizes = [1, 65535, 65536, 65537, 10, 131072, 0, 3, 200_000, 64 * 1024 - 1, 7];
    const lines = sizes.map((s, i) => `${i}:${"z".repeat(s)}`);
    const p = join(dir, "l.jsonl");
    writeFileSync(p, `${lines.join("\n")}\n`);
    const seen = [...linesBackward(p)].map((l) => l.text);
    expect(seen).toEqual([...lines].reverse());
  });

  it("gives only the two ends of an over-sized line, and marks a torn last line", () => {
    const dir = tempDir();
    const p = join(dir, "l.jsonl");
    const big = `HEAD${"m".repeat(LINE_CAP)}TAIL`;
    writeFileSync(p, `first\n${big}\nlast-no-newline`);
    const [last, mid, first] = [...linesBackward(p)];
    expect(last).toMatchObject({ text: "last-no-newline", terminated: false });
    expect(mid?.text).toBeNull();
    expect(mid?.head.startsWith("HEADmmm")).toBe(true);
    expect(mid?.tail.endsWith("mmmTAIL")).toBe(true);
    expect(mid?.head.length).toBeLessThanOrEqual(64 * 1024);
    expect(first).toMatchObject({ text: "first", terminated: true });
  });
});

describe("findTranscript", () => {
  it("takes the newest *.jsonl directly in the project folder, never a sub-agent's file", () => {
    const seat = tempDir();
    const cwd = "/Users/ops/loops/catalog.v2";
    const project = projectDirOf(seat, cwd);
    expect(project).toBe(join(seat, "projects", "-Users-ops-loops-catalog-v2"));
    const older = writeTranscript(join(project, "aaaa.jsonl"), [
      assistantLine({ input: 1, cc: 1, cr: 1 }),
    ]);
    age(older, 600);
    const session = "5c0f4a7e";
    const main = join(project, `${session}.jsonl`);
    copyFileSync(BASIC, main);
    age(main, 60);
    const sub = writeTranscript(join(project, session, "subagents", "agent-x.jsonl"), [
      assistantLine({ input: 1, cc: 1, cr: 180000 }, { sidechain: true }),
      assistantLine({ input: 1, cc: 1, cr: 190000 }),
    ]);
    writeFileSync(join(project, session, "subagents", "agent-x.meta.json"), "{}");
    age(sub, 0);
    const found = findTranscript({ seat, cwd });
    expect(found).toBe(main);
    expect(contextTokensOf(found as string)).toBe(143210);
  });

  it("prefers an explicit path and is null when the project folder is empty or absent", () => {
    const seat = tempDir();
    expect(findTranscript({ seat, cwd: "/nowhere", explicit: "rel/t.jsonl" })).toBe(
      join(process.cwd(), "rel/t.jsonl"),
    );
    expect(findTranscript({ seat, cwd: "/nowhere" })).toBeNull();
    mkdirSync(projectDirOf(seat, "/empty"), { recursive: true });
    expect(findTranscript({ seat, cwd: "/empty" })).toBeNull();
  });
});

describe("readTail", () => {
  it("returns the end of the file from a line start", () => {
    const dir = tempDir();
    const p = writeTranscript(join(dir, "t.jsonl"), ["aaaa", "bbbb", "cccc"]);
    expect(readTail(p, 7)).toBe("cccc\n");
    expect(readTail(p, 100)).toBe("aaaa\nbbbb\ncccc\n");
    expect(readTail(join(dir, "absent"), 100)).toBe("");
  });
});

describe("refusalAtEnd", () => {
  it("finds the limit fixture's refusal with its reset, and none in the basic fixture", () => {
    expect(refusalAtEnd(LIMIT)).toEqual({
      text: "Claude AI usage limit reached|1794506400",
      resets_at: 1794506400,
      at: "2026-11-12T14:00:09.063Z",
      window: "five_hour",
      session: "5c0f4a7e-2b1d-4c55-9a53-0f1e2d3c4b5a",
      from: "transcript",
    });
    expect(refusalAtEnd(BASIC)).toBeNull();
  });

  it("ignores a refusal followed by a real assistant message, and a warning", () => {
    const dir = tempDir();
    const answered = writeTranscript(join(dir, "a.jsonl"), [
      ...basicLines(),
      apiErrorLine("5-hour limit reached ∙ resets 3pm"),
      userLine("continue"),
      assistantLine({ input: 1, cc: 1, cr: 1 }),
    ]);
    expect(refusalAtEnd(answered)).toBeNull();
    const warned = writeTranscript(join(dir, "w.jsonl"), [
      ...basicLines(),
      apiErrorLine("Approaching usage limit · 75% used"),
    ]);
    expect(refusalAtEnd(warned)).toBeNull();
  });

  it("reads a weekly refusal in the named zone, past trailing user lines and a big tool result", () => {
    const dir = tempDir();
    const p = writeTranscript(join(dir, "a.jsonl"), [
      ...basicLines(),
      apiErrorLine("You've hit your weekly limit · resets Tuesday", "2026-11-12T14:00:00.000Z"),
      userLine("are you there?"),
      toolResultLine(3 * 1024 * 1024),
    ]);
    expect(refusalAtEnd(p, "UTC")).toMatchObject({
      resets_at: Date.parse("2026-11-17T00:00:00Z") / 1000,
      window: "seven_day",
    });
  });
});

describe("parseRefusal", () => {
  const at = Date.parse("2026-11-12T14:00:09Z"); // a Thursday
  const s = (isoTime: string) => Date.parse(isoTime) / 1000;
  const cases: [string, string, number | null | "none", string?][] = [
    ["Claude AI usage limit reached|1794506400", "UTC", 1794506400],
    ["Claude AI usage limit reached|1794506400000", "UTC", 1794506400],
    // a year before the entry (DESIGN §5): not trusted, as if it named no reset
    ["Claude AI usage limit reached|1763028000", "UTC", null],
    ["5-hour limit reached ∙ resets 3pm", "UTC", s("2026-11-12T15:00:00Z")],
    ["5-hour limit reached ∙ resets 1pm", "America/New_York", s("2026-11-12T18:00:00Z")],
    ["5-hour limit reached ∙ resets 3pm", "America/New_York", null], // 6 h ahead
    // 23 h and 22 h ahead: no five-hour window is that long (DESIGN §5), so not trusted
    ["5-hour limit reached ∙ resets 1pm", "UTC", null],
    ["You've hit your session limit · resets 8:20pm (Asia/Singapore)", "UTC", null],
    ["You've hit your session limit · resets 6:20pm (Asia/Singapore)", "UTC", null],
    [
      "You've hit your session limit · resets 11:20pm (Asia/Singapore)",
      "UTC",
      s("2026-11-12T15:20:00Z"),
    ],
    [
      "You've hit your weekly limit · resets Tuesday",
      "UTC",
      s("2026-11-17T00:00:00Z"),
      "seven_day",
    ],
    [
      "You've hit your weekly limit · resets Tuesday",
      "Asia/Singapore",
      s("2026-11-16T16:00:00Z"),
      "seven_day",
    ],
    ["You've hit your weekly limit · resets Thursday", "UTC", null, "seven_day"],
    ["Weekly limit reached ∙ resets Nov 17, 9am", "UTC", s("2026-11-17T09:00:00Z"), "seven_day"],
    ["You've hit your limit · resets 3pm (Mars/Olympus)", "UTC", null],
    ["You've hit your session limit", "UTC", null],
    ["Approaching usage limit · 75% used", "UTC", "none"],
    ["Approaching weekly limit · 90% used", "UTC", "none"],
    ['API Error: 529 {"type":"overloaded_error"}', "UTC", "none"],
    ["Working on it: resets the cache at 3pm", "UTC", "none"],
  ];
  it.each(cases)("%s (%s)", (text, zone, expected, window = "five_hour") => {
    const r = parseRefusal(text, at, zone);
    if (expected === "none") expect(r).toBeNull();
    else expect(r).toMatchObject({ resets_at: expected, window });
  });
});
