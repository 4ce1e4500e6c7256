// Pure parts of install: interval → schedule, the plist writer, systemd quoting.
import { spawnSync } from "node:child_process";
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { int, parsePlist, writePlist } from "../src/install/plist.js";
import { launchdCalendar, scheduleOf, systemdOnCalendar } from "../src/install/schedule.js";
import { quoteAssignment, quoteExecWord, splitWords } from "../src/install/systemd.js";
import { durationOption } from "../src/util/args.js";
import { formatDuration, parseDuration } from "../src/util/duration.js";
import { tempDir } from "./helpers/cli.js";
import { parsePlistWithPython } from "./helpers/install.js";

const M = 60_000;
const H = 60 * M;

describe("interval → schedule", () => {
  it.each([
    ["5m", "*:0/5", { kind: "minutes", step: 5 }],
    ["1m", "*:0/1", { kind: "minutes", step: 1 }],
    ["15m", "*:0/15", { kind: "minutes", step: 15 }],
    ["30m", "*:0/30", { kind: "minutes", step: 30 }],
    ["60m", "0/1:00", { kind: "hours", step: 1 }],
    ["1h", "0/1:00", { kind: "hours", step: 1 }],
    ["2h", "0/2:00", { kind: "hours", step: 2 }],
    ["1d", "0/24:00", { kind: "hours", step: 24 }],
  ])("%s → OnCalendar=%s", (interval, onCalendar, schedule) => {
    expect(systemdOnCalendar(parseDuration(interval))).toBe(onCalendar);
    expect(
      scheduleOf(
        Number.parseInt(interval, 10) *
          (interval.endsWith("m") ? M : interval.endsWith("h") ? H : 24 * H),
      ),
    ).toEqual(schedule);
  });

  it.each(["7m", "90s", "45m", "5h", "1h30m", "2d", "30s"])(
    "%s cannot be a systemd calendar: exit 2 naming it and what is accepted",
    (interval) => {
      let err: unknown;
      try {
        systemdOnCalendar(parseDuration(interval));
      } catch (e) {
        err = e;
      }
      expect((err as { exitCode?: number }).exitCode).toBe(2);
      expect((err as Error).message).toContain(
        `--interval ${formatDuration(parseDuration(interval))}`,
      );
      expect((err as Error).message).toContain("5m");
      expect((err as Error).message).toContain("1h");
    },
  );

  it.each(["0s", "abc", "", "5", "-5m"])("%j is not an interval: exit 2", (interval) => {
    expect(() => durationOption("interval", interval)).toThrow(
      `--interval: expected a positive duration such as 90s, 5m, 2h or 1d, got ${JSON.stringify(interval)}`,
    );
  });

  it.each([
    [5 * M, Array.from({ length: 12 }, (_, i) => ({ Minute: i * 5 }))],
    [20 * M, [{ Minute: 0 }, { Minute: 20 }, { Minute: 40 }]],
    [H, [{ Minute: 0 }]],
    [6 * H, [0, 6, 12, 18].map((Hour) => ({ Hour, Minute: 0 }))],
    [7 * M, null],
    [90_000, null],
  ])("launchd calendar for %i ms", (ms, entries) => {
    expect(launchdCalendar(scheduleOf(ms))).toEqual(entries);
  });

  it("falls back to StartInterval seconds", () => {
    expect(scheduleOf(7 * M)).toEqual({ kind: "seconds", seconds: 420 });
    expect(scheduleOf(90_000)).toEqual({ kind: "seconds", seconds: 90 });
    expect(scheduleOf(5 * H)).toEqual({ kind: "seconds", seconds: 18_000 });
  });
});

describe("plist writer", () => {
  const value = {
    Label: "dev.sheepdog.x",
    Text: `a <b> & "c" 'd' ]]> é 🐑`,
    Empty: "",
    Yes: true,
    No: false,
    Count: int(42),
    Negative: int(-7),
    List: ["one", int(2), false, { Nested: "deep" }],
    EmptyList: [],
    EmptyDict: {},
    Left: undefined,
  };

  it("round-trips through our reader and through Python's plistlib", () => {
    const text = writePlist(value, "a marker comment");
    const expected = {
      Label: "dev.sheepdog.x",
      Text: `a <b> & "c" 'd' ]]> é 🐑`,
      Empty: "",
      Yes: true,
      No: false,
      Count: 42,
      Negative: -7,
      List: ["one", 2, false, { Nested: "deep" }],
      EmptyList: [],
      EmptyDict: {},
    };
    expect(parsePlist(text)).toEqual(expected);
    const dir = tempDir();
    writeFileSync(join(dir, "x.plist"), text);
    expect(parsePlistWithPython(join(dir, "x.plist"))).toEqual(expected);
  });

  it.each([
    ["a control character", () => writePlist({ S: "a\u0001b" })],
    ["a non-integer integer", () => int(1.5)],
    ["a comment with --", () => writePlist({}, "a -- b")],
  ])("refuses %s", (_, f) => {
    expect(f).toThrow();
  });

  it.each([
    ["no plist root", "<dict></dict>"],
    ["a key without a value", "<plist><dict><key>A</key></dict></plist>"],
    ["an unknown element", "<plist><date>2020</date></plist>"],
    ["truncated", "<plist><dict><key>A</key><string>x"],
  ])("reader refuses %s", (_, text) => {
    expect(() => parsePlist(text)).toThrow();
  });
});

describe("systemd quoting", () => {
  it.each([
    ["/usr/bin/node", 0, "/usr/bin/node"],
    ["/a b/node", 0, '"/a b/node"'],
    ["/a%b/node", 0, "/a%%b/node"],
    ["/a$b/node", 0, "/a$b/node"],
    ["/a$b/x", 1, "/a$$b/x"],
    ['say "hi"', 1, '"say \\"hi\\""'],
    ["back\\slash", 1, '"back\\\\slash"'],
    [";", 1, '";"'],
    ["", 1, '""'],
  ])("%j (word %i) → %s", (word, position, expected) => {
    expect(quoteExecWord(word, position)).toBe(expected);
    expect(splitWords(`x ${expected}`).slice(1)).toEqual([word]);
  });

  it("splits a whole command line back into the words it was made of", () => {
    const words = [
      "/opt/my node/node",
      "/x/cli.js",
      "tick",
      "--program",
      "/home/u/loops/it's 100% $HOME",
    ];
    const line = words.map((w, i) => quoteExecWord(w, i)).join(" ");
    expect(splitWords(line)).toEqual(words);
  });

  it.each([
    ["PATH", "/usr/bin:/bin", "PATH=/usr/bin:/bin"],
    ["PATH", "/a b/bin:/bin", '"PATH=/a b/bin:/bin"'],
    ["X", "50%", "X=50%%"],
  ])("Environment=%s", (name, value, expected) => {
    expect(quoteAssignment(name, value)).toBe(expected);
    expect(splitWords(expected, { dollar: false })).toEqual([`${name}=${value}`]);
  });

  it("systemd-analyze reads a quoted executable path the way we wrote it", () => {
    // a real executable whose path needs quoting and escaping: verify fails unless systemd
    // parses our quoted word back into exactly this path
    const dir = mkdtempSync(join(tmpdir(), "sheepdog quote "));
    const exe = join(dir, "tr%ue $x");
    copyFileSync("/bin/true", exe);
    chmodSync(exe, 0o755);
    const unitDir = tempDir();
    mkdirSync(unitDir, { recursive: true });
    const unit = join(unitDir, "sheepdog-quote.service");
    writeFileSync(
      unit,
      `[Unit]\nDescription=q\n\n[Service]\nType=oneshot\nExecStart=${quoteExecWord(exe, 0)} ${quoteExecWord("a b", 1)}\n`,
    );
    const runtime = mkdtempSync(join(tmpdir(), "xdg-")); // mkdtemp makes it 0700, as verify wants
    const r = spawnSync("systemd-analyze", ["--user", "--man=no", "verify", unit], {
      env: { ...process.env, XDG_RUNTIME_DIR: runtime },
      encoding: "utf8",
    });
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
  });
});
