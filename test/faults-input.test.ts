// Generated bad input (issue 14): program.json values of every wrong type, shape and size;
// statusline input of any JSON and any bytes; transcripts and journals with torn, huge, binary or
// malformed lines; Herdr answers of wrong shapes. The pure readers take thousands of cases in
// process; a smaller number go end to end through the built CLI.
//   SHEEPDOG_FAULT_RUNS=N   cases per in-process property (default 300; CLI properties take N/10)
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseConfig } from "../src/config/load.js";
import { SheepdogError } from "../src/errors.js";
import { parseJournal } from "../src/journal/journal.js";
import { history, replay } from "../src/journal/replay.js";
import { results, successResponse } from "../src/launch/herdr-schema.js";
import { readingsOf, readStatusInput, statusLine } from "../src/usage/status-input.js";
import { contextTokensOf, refusalAtEnd } from "../src/usage/transcript.js";
import { sheepdog, tempDir, tempProgram } from "./helpers/cli.js";

const RUNS = Number(process.env.SHEEPDOG_FAULT_RUNS) || 300;
const CLI_RUNS = Math.max(6, Math.floor(RUNS / 40));
/** Each CLI case runs a few commands; under load one can take seconds. */
const CLI_TIMEOUT = 60_000 + CLI_RUNS * 8_000;
/** A stack trace line as Node prints one. */
const STACK = /\n\s+at .+\(?.*:\d+:\d+\)?/;

/** Every setting's JSON path in program.json, so a wrong value can be put at each one. */
const PATHS = [
  "name",
  "manager",
  "manager.launcher",
  "manager.prompt",
  "manager.env",
  "manager.command",
  "manager.tmux",
  "manager.tmux.session",
  "manager.tmux.command",
  "manager.herdr",
  "manager.herdr.agent",
  "manager.herdr.args",
  "watchdog",
  "watchdog.interval",
  "watchdog.stale_after",
  "watchdog.claim_grace",
  "watchdog.merge_max",
  "watchdog.crash_loop",
  "watchdog.crash_loop.starts",
  "watchdog.crash_loop.within",
  "watchdog.no_progress_hand_overs",
  "hand_over_tokens",
  "usage",
  "usage.seat",
  "usage.pause_at_percent",
  "usage.pause_fallback",
  "merge_lock",
  "merge_lock.repo",
  "merge_lock.remote",
  "merge_lock.ref",
  "ledger",
  "ledger.repo",
  "ledger.branch",
  "progress",
  "progress.paths",
  "page",
  "page.ntfy",
];

/** Sets `path` in a copy of a valid config, making the objects on the way. */
function withValue(path: string, value: unknown): Record<string, unknown> {
  const config: Record<string, unknown> = {
    name: "demo",
    merge_lock: { repo: "app" },
    ledger: { repo: "ledger" },
    progress: { paths: ["runs/*"] },
  };
  const keys = path.split(".");
  let at = config;
  for (const key of keys.slice(0, -1)) {
    if (!at[key] || typeof at[key] !== "object") at[key] = {};
    at = at[key] as Record<string, unknown>;
  }
  at[keys.at(-1) as string] = value;
  return config;
}

/** Wrong values of every type, shape and size. */
const wrong = fc.oneof(
  fc.anything({ maxDepth: 3 }),
  fc.string({ maxLength: 40 }),
  fc.constantFrom(
    "",
    "5 min",
    "-1s",
    "0s",
    "1e400",
    "x".repeat(100_000),
    -1,
    0,
    1.5,
    1e308,
    -0,
    Number.MAX_SAFE_INTEGER + 2,
    [],
    [""],
    [1, 2],
    {},
    { __proto__: null },
    null,
    true,
  ),
  fc.array(fc.anything({ maxDepth: 1 }), { maxLength: 5 }),
);

describe("program.json: every wrong value is exit 2 naming its field", () => {
  it("parseConfig accepts a value or throws a usage error naming the file and the field", () => {
    fc.assert(
      fc.property(fc.constantFrom(...PATHS), wrong, (path, value) => {
        const text = JSON.stringify(withValue(path, value));
        try {
          parseConfig(text, "/p/program.json");
        } catch (err) {
          expect(err).toBeInstanceOf(SheepdogError);
          expect((err as SheepdogError).exitCode).toBe(2);
          const message = (err as Error).message;
          for (const line of message.split("\n")) {
            expect(line.startsWith("/p/program.json: ")).toBe(true);
            expect(line.length).toBeLessThan(2000);
          }
          // The first line names the field set (or one inside it).
          expect(message).toContain(path);
        }
      }),
      { numRuns: RUNS * 3 },
    );
  });

  it("any text at all: a config or a usage error, never another exception", () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.string(), fc.json(), fc.stringMatching(/^[{}[\]",:0-9a-z\s]*$/)),
        (text) => {
          try {
            parseConfig(text, "/p/program.json");
          } catch (err) {
            expect(err).toBeInstanceOf(SheepdogError);
            expect((err as SheepdogError).exitCode).toBe(2);
          }
        },
      ),
      { numRuns: RUNS },
    );
  });

  it(
    "end to end: check, tick and save refuse with exit 2, naming the field, with no stack trace",
    () => {
      fc.assert(
        fc.property(
          fc.constantFrom(...PATHS.filter((p) => p !== "name")),
          wrong,
          fc.constantFrom("check", "tick", "save"),
          (path, value, command) => {
            const p = tempProgram("demo");
            const config = withValue(path, value);
            writeFileSync(join(p.root, "program.json"), JSON.stringify(config));
            let valid = true;
            try {
              parseConfig(JSON.stringify(config), "x");
            } catch {
              valid = false;
            }
            fc.pre(!valid);
            const r = sheepdog([command], { env: p.env });
            expect(r.code, r.stderr).toBe(2);
            expect(r.stderr).toContain(`${p.root}/program.json: `);
            expect(r.stderr).toContain(path);
            expect(r.stderr).not.toMatch(STACK);
            // Refused before creating any state.
            expect(existsSync(p.stateDir)).toBe(false);
          },
        ),
        { numRuns: CLI_RUNS },
      );
    },
    CLI_TIMEOUT,
  );
});

/** Statusline input: arbitrary JSON, Claude-shaped JSON with wrong fields, or arbitrary bytes. */
const claudeShaped = fc.record(
  {
    model: fc.oneof(
      fc.anything({ maxDepth: 1 }),
      fc.record({ display_name: fc.string({ unit: "binary" }) }),
      fc.string({ unit: "binary" }),
    ),
    transcript_path: fc.anything({ maxDepth: 0 }),
    session_id: fc.string({ unit: "binary" }),
    cwd: fc.string({ unit: "binary" }),
    context_window: fc.anything({ maxDepth: 2 }),
    rate_limits: fc.oneof(
      fc.anything({ maxDepth: 2 }),
      fc.record({
        five_hour: fc.record({
          used_percentage: fc.oneof(fc.double(), fc.integer(), fc.string()),
          resets_at: fc.oneof(fc.double(), fc.integer(), fc.string(), fc.constant(null)),
        }),
      }),
    ),
  },
  { requiredKeys: [] },
);

describe("statusline: any input prints one line, exit 0; invalid data records no reading", () => {
  it("in process: the line is one line, and every reading is a percentage at a valid time", () => {
    fc.assert(
      fc.property(fc.oneof(fc.anything(), claudeShaped), (value) => {
        const input = readStatusInput(value);
        const line = statusLine(input, input.context_tokens);
        expect(line).not.toMatch(/[\r\n]/);
        for (const r of readingsOf(input)) {
          expect(Number.isFinite(r.used_percentage)).toBe(true);
          expect(r.used_percentage).toBeGreaterThanOrEqual(0);
          expect(r.used_percentage).toBeLessThanOrEqual(100);
          expect(Number.isNaN(Date.parse(r.resets_at))).toBe(false);
        }
      }),
      { numRuns: RUNS * 3 },
    );
  });

  it(
    "end to end: arbitrary bytes or JSON on stdin",
    () => {
      fc.assert(
        fc.property(
          fc.oneof(
            fc.uint8Array({ maxLength: 300 }).map((b) => Buffer.from(b).toString("latin1")),
            fc.json(),
            claudeShaped.map((v) => JSON.stringify(v)),
          ),
          (input) => {
            const state = tempDir();
            const r = sheepdog(["statusline"], {
              env: { SHEEPDOG_STATE_DIR: state, CLAUDE_CONFIG_DIR: join(state, "seat") },
              input,
            });
            expect(r.code).toBe(0);
            expect(r.stdout.endsWith("\n")).toBe(true);
            expect(r.stdout.slice(0, -1)).not.toMatch(/[\r\n]/);
            expect(r.stderr).toBe("");
            // A reading only from a five_hour/seven_day window with a percentage from 0 to 100.
            const usage = join(state, "usage");
            if (existsSync(usage) && readdirSync(usage).some((f) => f.endsWith(".jsonl"))) {
              const v = JSON.parse(input) as {
                rate_limits: Record<string, { used_percentage: unknown }>;
              };
              const pcts = Object.values(v.rate_limits).map((w) => w?.used_percentage);
              expect(pcts.some((p) => typeof p === "number" && p >= 0 && p <= 100)).toBe(true);
            }
          },
        ),
        { numRuns: CLI_RUNS },
      );
    },
    CLI_TIMEOUT,
  );
});

/** Transcript lines: torn, huge, binary, malformed, or Claude-shaped with wrong field types. */
const transcriptLine = fc.oneof(
  fc.string(),
  fc.json(),
  fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b).toString("latin1")),
  fc.constantFrom("x".repeat(300_000), '{"type":"assistant","message":{"usage":', "\u0000\u0000"),
  fc
    .record({
      type: fc.constantFrom("assistant", "user", "system"),
      isSidechain: fc.anything({ maxDepth: 0 }),
      isApiErrorMessage: fc.anything({ maxDepth: 0 }),
      timestamp: fc.anything({ maxDepth: 0 }),
      message: fc.oneof(
        fc.anything({ maxDepth: 2 }),
        fc.record({
          model: fc.constantFrom("<synthetic>", "claude-opus", 5),
          content: fc.anything({ maxDepth: 2 }),
          usage: fc.oneof(
            fc.anything({ maxDepth: 1 }),
            fc.record({
              input_tokens: fc.anything({ maxDepth: 0 }),
              cache_read_input_tokens: fc.anything({ maxDepth: 0 }),
            }),
          ),
        }),
      ),
    })
    .map((v) => JSON.stringify(v)),
);

describe("transcripts with bad lines: readers and save never throw", () => {
  it("in process: context tokens are null or a whole non-negative number; refusal never throws", () => {
    const dir = tempDir();
    fc.assert(
      fc.property(fc.array(transcriptLine, { maxLength: 12 }), fc.boolean(), (lines, torn) => {
        const path = join(dir, "t.jsonl");
        writeFileSync(path, lines.join("\n") + (torn ? "" : "\n"));
        const tokens = contextTokensOf(path);
        if (tokens !== null) {
          expect(Number.isFinite(tokens)).toBe(true);
          expect(tokens).toBeGreaterThanOrEqual(0);
        }
        refusalAtEnd(path);
      }),
      { numRuns: RUNS },
    );
  });

  it(
    "end to end: save --transcript prints its JSON and exits 0",
    () => {
      fc.assert(
        fc.property(fc.array(transcriptLine, { maxLength: 8 }), (lines) => {
          const p = tempProgram("demo");
          const path = join(p.home, "t.jsonl");
          writeFileSync(path, lines.join("\n"));
          const r = sheepdog(["save", "--pid", String(process.pid), "--transcript", path], {
            env: p.env,
          });
          expect(r.code, r.stderr).toBe(0);
          const out = JSON.parse(r.stdout);
          expect(out.context_tokens === null || Number.isFinite(out.context_tokens)).toBe(true);
          expect(r.stderr).not.toMatch(STACK);
        }),
        { numRuns: CLI_RUNS },
      );
    },
    CLI_TIMEOUT,
  );
});

/** Journal lines: random text, or events of known types with fields of any type. */
const TYPES = [
  "claimed",
  "released",
  "claim_broken",
  "saved",
  "hand_over",
  "manager_started",
  "manager_stopped",
  "paused",
  "unpaused",
  "stood_down",
  "cleared",
  "finished",
  "reopened",
  "tick_failed",
  "page_sent",
  "tick_lock_broken",
];
const journalLine = fc.oneof(
  fc.string(),
  fc.json(),
  fc
    .record(
      {
        at: fc.oneof(
          fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
          fc.string(),
        ),
        type: fc.constantFrom(...TYPES),
        pid: fc.anything({ maxDepth: 0 }),
        start_time: fc.anything({ maxDepth: 0 }),
        until: fc.oneof(
          fc.anything({ maxDepth: 0 }),
          fc.date().map((d) => String(d)),
        ),
        reason: fc.anything({ maxDepth: 1 }),
        planned: fc.anything({ maxDepth: 0 }),
        progress: fc.anything({ maxDepth: 0 }),
        launcher: fc.anything({ maxDepth: 0 }),
        carried: fc.anything({ maxDepth: 0 }),
      },
      { requiredKeys: ["at", "type"] },
    )
    .map((v) => JSON.stringify(v)),
);

describe("journals with random lines: journal, status and tick never crash", () => {
  it("in process: parse, replay and history never throw", () => {
    fc.assert(
      fc.property(fc.array(journalLine, { maxLength: 30 }), (lines) => {
        const events = parseJournal(lines.join("\n"));
        replay(events);
        history(events);
      }),
      { numRuns: RUNS * 3 },
    );
  });

  it(
    "end to end: journal, status and tick --dry-run exit 0 (or say why) with no stack trace",
    () => {
      fc.assert(
        fc.property(fc.array(journalLine, { minLength: 1, maxLength: 20 }), (lines) => {
          const p = tempProgram("demo", {
            manager: { launcher: "command", command: ["/bin/true"] },
          });
          mkdirSync(p.stateDir, { mode: 0o700 });
          writeFileSync(join(p.stateDir, "journal.jsonl"), `${lines.join("\n")}\n`);
          for (const args of [
            ["journal"],
            ["journal", "--json"],
            ["status", "--json"],
            ["tick", "--dry-run"],
          ]) {
            const r = sheepdog(args, { env: p.env });
            expect(r.stderr, args.join(" ")).not.toMatch(STACK);
            expect(r.code, `${args.join(" ")}: ${r.stderr}`).toBe(0);
          }
        }),
        { numRuns: CLI_RUNS },
      );
    },
    CLI_TIMEOUT,
  );
});

describe("Herdr answers of wrong shapes are rejected by the schema, never thrown past it", () => {
  it("every result schema: safeParse of anything returns, and accepts only what it names", () => {
    const schemas = Object.entries(results);
    fc.assert(
      fc.property(fc.constantFrom(...schemas), fc.anything(), ([, schema], value) => {
        const r = schema.safeParse(value);
        if (r.success) expect(typeof (r.data as { type: unknown }).type).toBe("string");
        successResponse.safeParse(value);
      }),
      { numRuns: RUNS * 3 },
    );
  });
});
