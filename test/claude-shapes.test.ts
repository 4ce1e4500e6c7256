// Claude Code's real shapes (test/fixtures/README.md; DESIGN §4, §5): compaction, nested cache
// writes, the statusline after /compact, the refusal is / is-not lists, per-session readings,
// project folder names. Pure readers first, then the built CLI on each fixture.
import {
  appendFileSync,
  copyFileSync,
  mkdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { gatherSaveFacts } from "../src/heartbeat/save.js";
import { identityOf, type ProcessIdentity } from "../src/process/identity.js";
import { judgeReadings } from "../src/usage/limit.js";
import { mergeReadings, parseReadings } from "../src/usage/readings.js";
import { parseRefusal } from "../src/usage/refusal.js";
import {
  contextTokensOf,
  findTranscript,
  projectFolderName,
  refusalAtEnd,
} from "../src/usage/transcript.js";
import { sheepdog, tempDir, tempProgram } from "./helpers/cli.js";
import { FIXTURES } from "./helpers/fixtures.js";
import { programWith } from "./helpers/launch.js";
import { assistantLine } from "./helpers/usage.js";

const fixture = (name: string) => join(FIXTURES, name);
const json = (name: string) => JSON.parse(readFileSync(fixture(name), "utf8"));

/** Each transcript fixture and the context `save` must report for it. */
const CONTEXTS: [string, number | null][] = [
  ["transcript-basic.jsonl", 143210],
  ["transcript-limit.jsonl", 143210],
  ["transcript-compacted.jsonl", 9812],
  ["transcript-compacted-no-post.jsonl", null],
  ["transcript-nested-cache.jsonl", 102003],
  ["transcript-rate-limit-429.jsonl", 143210],
  ["transcript-context-limit.jsonl", 143210],
  ["transcript-limit-upsell.jsonl", 143210],
];

describe("context of a transcript", () => {
  it.each(CONTEXTS)("%s → %s", (name, want) => {
    expect(contextTokensOf(fixture(name))).toBe(want);
  });

  it("after a compaction, the next assistant message counts again", () => {
    const path = join(tempDir(), "t.jsonl");
    copyFileSync(fixture("transcript-compacted.jsonl"), path);
    appendFileSync(path, `${assistantLine({ input: 7, cc: 1200, cr: 9812 })}\n`);
    expect(contextTokensOf(path)).toBe(7 + 1200 + 9812);
  });

  // 2.1.328 runs a call as soon as it has streamed in and writes its entry a moment later.
  const resultLine = JSON.stringify({
    type: "user",
    isSidechain: false,
    message: {
      role: "user",
      content: [{ type: "tool_result", tool_use_id: "toolu_prev", content: "claimed" }],
    },
    timestamp: new Date().toISOString(),
  });
  const saveCall = [
    { type: "tool_use", id: "toolu_save", name: "Bash", input: { command: "sheepdog save" } },
  ];

  /** A program, and a copy of transcript-basic.jsonl for its save to read. */
  const saveOnBasic = () => {
    const path = join(tempDir(), "t.jsonl");
    copyFileSync(fixture("transcript-basic.jsonl"), path);
    return { program: programWith("demo", {}), path };
  };

  it("a save that runs before Claude Code has written its own call waits for the entry", async () => {
    const { program, path } = saveOnBasic();
    appendFileSync(path, `${resultLine}\n`);
    const manager = identityOf(process.pid) as ProcessIdentity;
    const facts = gatherSaveFacts(program, { manager, transcript: path });
    setTimeout(() => {
      appendFileSync(
        path,
        `${assistantLine({ input: 7, cc: 1200, cr: 150_000 }, { content: saveCall })}\n`,
      );
    }, 150);
    expect((await facts).contextTokens).toBe(7 + 1200 + 150_000);
  });

  it.each([
    ["Bash", { command: "sheepdog claim acquire" }],
    ["Bash", { command: "git stash save wip" }],
    ["Read", { file_path: "/tmp/x" }],
  ])(
    "a save that finds the last call (%s %j) still open at the end waits for its own",
    async (name, input) => {
      const { program, path } = saveOnBasic();
      const claimCall = [{ type: "tool_use", id: "toolu_last", name, input }];
      appendFileSync(
        path,
        `${assistantLine({ input: 7, cc: 1200, cr: 149_000 }, { content: claimCall })}\n`,
      );
      const manager = identityOf(process.pid) as ProcessIdentity;
      const facts = gatherSaveFacts(program, { manager, transcript: path });
      setTimeout(() => {
        appendFileSync(path, `${resultLine}\n`);
        appendFileSync(
          path,
          `${assistantLine({ input: 7, cc: 1200, cr: 150_000 }, { content: saveCall })}\n`,
        );
      }, 150);
      expect((await facts).contextTokens).toBe(7 + 1200 + 150_000);
    },
  );

  it("a save mid-request whose call never comes reads what there is", async () => {
    const { program, path } = saveOnBasic();
    appendFileSync(path, `${resultLine}\n`);
    const manager = identityOf(process.pid) as ProcessIdentity;
    expect((await gatherSaveFacts(program, { manager, transcript: path })).contextTokens).toBe(
      143210,
    );
  });

  it("a sub-agent's compaction (sidechain) is not the manager's", () => {
    const path = join(tempDir(), "t.jsonl");
    copyFileSync(fixture("transcript-basic.jsonl"), path);
    const boundary = {
      type: "system",
      subtype: "compact_boundary",
      isSidechain: true,
      compactMetadata: { trigger: "auto", preTokens: 150000, postTokens: 4000 },
    };
    appendFileSync(path, `${JSON.stringify(boundary)}\n`);
    expect(contextTokensOf(path)).toBe(143210);
  });
});

describe("usage-limit refusals (DESIGN §5)", () => {
  const table = json("refusal-texts.json") as {
    entry_time: string;
    local_zone: string;
    is: {
      text: string;
      window: string;
      resets: string | null;
      /** The row's own entry time, when not the table's. */
      entry_time?: string;
      /** A named reset that does not fit its window (DESIGN §5): not trusted. */
      untrusted_reset?: string;
    }[];
    is_not: string[];
  };
  const t = Date.parse(table.entry_time);
  it.each(table.is)("is: $text (at $entry_time)", (row) => {
    const r = parseRefusal(
      row.text,
      row.entry_time ? Date.parse(row.entry_time) : t,
      table.local_zone,
    );
    expect(r).not.toBeNull();
    expect(r?.window).toBe(row.window);
    expect(r?.resets_at === null ? null : new Date((r?.resets_at ?? 0) * 1000).toISOString()).toBe(
      row.resets,
    );
    expect(r?.untrusted_reset).toBe(row.untrusted_reset);
  });
  it.each(table.is_not)("is not: %s", (text) => {
    expect(parseRefusal(text, t, table.local_zone)).toBeNull();
  });

  it.each([
    ["transcript-rate-limit-429.jsonl", null],
    ["transcript-context-limit.jsonl", null],
    ["transcript-limit-server-error.jsonl", null],
    ["transcript-limit-upsell.jsonl", "2026-11-12T16:00:00.000Z"],
    ["transcript-limit.jsonl", "2026-11-12T18:00:00.000Z"],
  ])("at the end of %s: %s", (name, resets) => {
    const r = refusalAtEnd(fixture(name), "UTC");
    expect(r === null ? null : new Date((r.resets_at ?? 0) * 1000).toISOString()).toBe(resets);
  });

  it("a compaction after a refusal means the refusal is over", () => {
    const path = join(tempDir(), "t.jsonl");
    copyFileSync(fixture("transcript-limit.jsonl"), path);
    const boundary = { type: "system", subtype: "compact_boundary", compactMetadata: {} };
    appendFileSync(path, `${JSON.stringify(boundary)}\n`);
    expect(refusalAtEnd(path)).toBeNull();
  });
});

describe("readings merge per session (DESIGN §5)", () => {
  const NOW = Date.parse("2026-11-30T12:00:00Z");
  const readings = (name: string) => parseReadings(readFileSync(fixture(name), "utf8"));

  it("an idle session's stale low reading never hides another session's 100 %", () => {
    const r = readings("readings-stale-idle.jsonl");
    expect(mergeReadings(r, NOW).five_hour).toEqual({
      used_percentage: 100,
      resets_at: Date.parse("2026-11-30T14:00:00Z"),
      reset: false,
    });
    expect(judgeReadings(r, 100, NOW)).toMatchObject({
      limited: true,
      until: "2026-11-30T14:00:00.000Z",
    });
  });

  it("a newer reading whose reset moved earlier is not ignored", () => {
    const r = readings("readings-reset-moved-earlier.jsonl");
    expect(mergeReadings(r, NOW).seven_day).toEqual({
      used_percentage: 22,
      resets_at: Date.parse("2026-11-30T11:50:00Z"),
      reset: true,
    });
    expect(judgeReadings(r, 100, NOW).limited).toBe(false);
    // Before that reset it read 22 %: not limited either.
    expect(judgeReadings(r, 100, Date.parse("2026-11-30T11:10:00Z")).limited).toBe(false);
  });

  it("through the CLI: a stale idle session's statusline never lifts another's 100 %", () => {
    const state = tempDir();
    const seat = join(state, "seat");
    const vars = { SHEEPDOG_STATE_DIR: state, CLAUDE_CONFIG_DIR: seat };
    const resets = Math.floor(Date.now() / 1000) + 3600;
    const render = (session: string, pct: number) =>
      sheepdog(["statusline"], {
        env: vars,
        input: JSON.stringify({
          session_id: session,
          rate_limits: { five_hour: { used_percentage: pct, resets_at: resets } },
        }),
      });
    expect(render("busy", 100).code).toBe(0);
    expect(render("idle", 12).code).toBe(0);
    expect(render("idle", 12).code).toBe(0);
    const r = sheepdog(["usage", "--seat", seat, "--json"], { env: vars });
    const [s] = JSON.parse(r.stdout).seats;
    expect(s.limited).toBe(true);
    expect(s.windows.five_hour.used_percentage).toBe(100);
  });
});

describe("project folder names", () => {
  const cases = json("project-folders.json").cases as { cwd: string; folder: string }[];
  it.each(cases)("$cwd", ({ cwd, folder }) => {
    expect(projectFolderName(cwd, {})).toBe(folder);
  });

  it("a 201-character cwd: cut to 200, `-` and the hash; save finds its transcript there", () => {
    const c = cases.find((x) => x.cwd.length === 201) as { cwd: string; folder: string };
    expect(c.folder).toMatch(/^.{200}-[0-9a-z]+$/);
    const seat = tempDir();
    const dir = join(seat, "projects", c.folder);
    mkdirSync(dir, { recursive: true });
    copyFileSync(fixture("transcript-basic.jsonl"), join(dir, "s.jsonl"));
    expect(findTranscript({ seat, cwd: c.cwd, env: {} })).toBe(join(dir, "s.jsonl"));
    // The cwd need not exist for the name; a real one proves save uses the same rule.
    const p = tempProgram("demo", { usage: { seat } });
    let cwd = join(p.home, "w");
    while (cwd.length < 201) cwd = join(cwd, "deeply-nested");
    cwd = cwd.slice(0, 201).replace(/\/$/, "x");
    mkdirSync(cwd, { recursive: true });
    const folder = join(seat, "projects", projectFolderName(cwd, {}));
    expect(folder.length - join(seat, "projects").length - 1).toBeGreaterThan(200);
    mkdirSync(folder, { recursive: true });
    copyFileSync(fixture("transcript-compacted.jsonl"), join(folder, "m.jsonl"));
    const r = sheepdog(["save", "--pid", String(process.pid)], { env: p.env, cwd });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({
      transcript: join(folder, "m.jsonl"),
      context_tokens: 9812,
    });
  });

  it("a cwd reached through a symlink: the folder is named after the real path, as Claude Code 2.1.328 names it", () => {
    const home = tempDir();
    const real = join(home, "real-root");
    mkdirSync(real);
    const link = join(home, "linked");
    symlinkSync(real, link);
    expect(projectFolderName(link, {})).toBe(projectFolderName(real, {}));
    expect(projectFolderName(link, {})).toContain("real-root");
    const seat = tempDir();
    const dir = join(seat, "projects", projectFolderName(real, {}));
    mkdirSync(dir, { recursive: true });
    copyFileSync(fixture("transcript-basic.jsonl"), join(dir, "s.jsonl"));
    expect(findTranscript({ seat, cwd: link, env: {} })).toBe(join(dir, "s.jsonl"));
  });

  it("CLAUDE_CODE_PROJECT_DIR_NAME names the folder", () => {
    expect(projectFolderName("/any/where", { CLAUDE_CODE_PROJECT_DIR_NAME: "my-proj" })).toBe(
      "my-proj",
    );
    const seat = tempDir();
    mkdirSync(join(seat, "projects", "my-proj"), { recursive: true });
    writeFileSync(join(seat, "projects", "my-proj", "a.jsonl"), "");
    const env = { CLAUDE_CODE_PROJECT_DIR_NAME: "my-proj" };
    expect(findTranscript({ seat, cwd: "/any/where", env })).toBe(
      join(seat, "projects", "my-proj", "a.jsonl"),
    );
  });
});

describe("through the built CLI", () => {
  it.each(CONTEXTS)("save --transcript %s → context_tokens %s", (name, want) => {
    const p = tempProgram("demo", { hand_over_tokens: 100000 });
    const r = sheepdog(["save", "--pid", String(process.pid), "--transcript", fixture(name)], {
      env: p.env,
    });
    expect(r.code).toBe(0);
    const answer = JSON.parse(r.stdout);
    expect(answer.context_tokens).toBe(want);
    expect(answer.hand_over).toBe(want !== null && want >= 100000);
  });

  it.each([
    ["statusline-input.json", {}, "Opus 4.6 · ctx 143k/200k · 5h 30%"],
    ["statusline-after-compact.json", {}, "Opus 4.6 · ctx 10k/200k · 5h 30%"],
    [
      "statusline-after-compact-no-percentage.json",
      { transcript_path: fixture("transcript-compacted.jsonl") },
      "Opus 4.6 · ctx 10k/1M · 5h 30%",
    ],
    [
      "statusline-after-compact-no-percentage.json",
      { transcript_path: fixture("transcript-compacted-no-post.jsonl") },
      "Opus 4.6 · 5h 30%",
    ],
    ["statusline-nested-cache.json", {}, "Opus 4.6 · ctx 102k/200k · 5h 30%"],
  ])("statusline on %s %j", (name, extra, prefix) => {
    const state = tempDir();
    const input = { ...json(name), ...extra };
    const r = sheepdog(["statusline"], {
      env: { SHEEPDOG_STATE_DIR: state, CLAUDE_CONFIG_DIR: join(state, "seat"), TZ: "UTC" },
      input: JSON.stringify(input),
    });
    expect(r.code).toBe(0);
    expect(r.stderr).toBe("");
    expect(r.stdout.startsWith(prefix)).toBe(true);
  });
});
