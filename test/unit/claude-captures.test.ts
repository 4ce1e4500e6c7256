// What sheepdog reads off every tested Claude Code version's own captures
// (test/fixtures/claude-<version>/, written by `npm run capture:claude -- --version X`): every
// limit case's refused turn and StopFailure payload, the limit dialog, a person's Esc, the
// Settings Warning and its list of hook events.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { showsDialog, showsLimitDialog } from "../../src/launch/claude-screen.js";
import { HOOK_EVENTS, TESTED_VERSIONS } from "../../src/usage/claude-versions.js";
import { readStopFailure, refusalOfStopFailure } from "../../src/usage/stop-failure.js";
import { refusalAtEnd } from "../../src/usage/transcript.js";
import { transcriptTail } from "../../src/usage/transcript-tail.js";
import { activityOf } from "../../src/watchdog/rules/activity.js";
import { tempDir } from "../helpers/cli.js";
import { FIXTURES } from "../helpers/fixtures.js";
import { LIMIT_CASES, limitCase } from "../helpers/limit-cases.js";
import { apiErrorLine, writeTranscript } from "../helpers/usage.js";

interface Row {
  case: string;
  reset: number;
  text: string;
  // biome-ignore lint/suspicious/noExplicitAny: the entry's fields as written
  entry: Record<string, any> | null;
  stop_failure: { error: string; last_assistant_message: string } | null;
}

describe.each(TESTED_VERSIONS)("Claude Code %s's captures", (version) => {
  const file = (name: string) => join(FIXTURES, `claude-${version}`, name);
  const text = (name: string) => readFileSync(file(name), "utf8");
  const rows = JSON.parse(text("limits.json")) as Row[];

  it("holds every case of the shared list, each text as test/helpers/limit-cases.ts has it", () => {
    expect(rows.map((r) => r.case)).toEqual(LIMIT_CASES.map((c) => c.id));
    for (const r of rows) expect(r.text, r.case).toMatch(limitCase(r.case).text);
    expect(rows.filter((r) => r.stop_failure !== null).length).toBeGreaterThanOrEqual(12);
  });

  it.each(LIMIT_CASES.map((c) => c.id))(
    "%s: the refused turn's entry, read as the tick reads it",
    (id) => {
      const c = limitCase(id);
      const r = rows.find((x) => x.case === id) as Row;
      // The captured entry's own time, else (an older capture) when its reset was set from.
      const at =
        r.entry?.timestamp ??
        new Date((r.reset - (c.resetIn === "days" ? 3 * 86_400 : 2400)) * 1000).toISOString();
      const line = JSON.stringify({
        ...JSON.parse(apiErrorLine(r.entry?.text ?? "", at)),
        ...r.entry,
        timestamp: at,
      });
      const path = writeTranscript(join(tempDir(), "t.jsonl"), [line]);
      const found = refusalAtEnd(path, "UTC");
      if (!c.limit) {
        expect(found).toBeNull();
        return;
      }
      expect(found?.window).toBe(c.window);
      expect(found?.limit_type).toBe(c.limitType ?? undefined);
      if (c.namesReset) expect(found).toMatchObject({ resets_at: r.reset, exact: true });
      else {
        expect(found?.resets_at).toBeNull();
        expect(found?.needs_person).toMatch(c.needsPerson as RegExp);
      }
    },
  );

  it.each(LIMIT_CASES.map((c) => c.id))(
    "%s: the StopFailure payload (text only): its minute, rounded down",
    (id) => {
      const c = limitCase(id);
      const r = rows.find((x) => x.case === id) as Row;
      // `-p` sometimes gives its hook an empty stdin (it kills hooks as it exits): nothing to read.
      if (r.stop_failure === null) return;
      expect(r.stop_failure.error).toBe("rate_limit");
      expect(r.stop_failure?.last_assistant_message).toBe(r.text);
      const now = (r.reset - (c.resetIn === "days" ? 3 * 86_400 : 2400)) * 1000;
      const stop = readStopFailure({ hook_event_name: "StopFailure", ...r.stop_failure });
      const found = stop ? refusalOfStopFailure(stop, now, "UTC") : null;
      if (!c.limit) expect(found).toBeNull();
      else if (c.namesReset) expect(found?.resets_at).toBe(Math.floor(r.reset / 60) * 60);
      else expect(found).toMatchObject({ resets_at: null, needs_person: expect.any(String) });
    },
  );

  it("the limit dialog (a reset days away) is at_limit; the five-hour wait, the trust dialog and the Settings Warning are not", () => {
    expect(showsLimitDialog(text("screen-limit-dialog.txt"))).toBe(true);
    expect(showsLimitDialog(text("screen-limit-auto-continue.txt"))).toBe(false);
    expect(showsLimitDialog(text("screen-trust-dialog.txt"))).toBe(false);
    expect(showsLimitDialog(text("screen-settings-warning.txt"))).toBe(false);
    expect(showsLimitDialog(text("screen-interrupted.txt"))).toBe(false);
    const verdict = activityOf(
      {
        transcript: null,
        tail: { state: "unknown", at: null },
        grew_at: null,
        grew_in_subagent: false,
        children: [],
        cpu_ms: 0,
        cpu_window_ms: 1000,
        stop: null,
        notification: null,
        screen: text("screen-limit-dialog.txt"),
      },
      Date.now(),
      600_000,
    );
    expect(verdict.verdict).toBe("at_limit");
  });

  it("the Settings Warning is a dialog that holds a start", () => {
    expect(showsDialog(text("screen-settings-warning.txt"))).toBe(true);
  });

  it("Esc during a Bash call: the transcript ends interrupted, and no hook ran for it", () => {
    expect(transcriptTail(file("transcript-limits-interrupted.jsonl"))).toMatchObject({
      state: "interrupted",
      text: "[Request interrupted by user for tool use]",
    });
    const hooks = text("hooks-after-interrupt.txt").split("\n").filter(Boolean);
    expect(hooks.filter((h) => h !== "SessionStart" && h !== "StopFailure")).toEqual([]);
  });

  it("the hook events its Settings Warning lists are the ones sheepdog names for it", () => {
    expect(JSON.parse(text("hook-events.json"))).toEqual(HOOK_EVENTS[version]);
  });
});
