// The activity verdict (DESIGN §14) from the real Claude Code 2.1.328's transcript shapes
// (test/fixtures/claude-2.1.328/, written by `npm run capture:claude`).

import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { transcriptTail } from "../../src/usage/transcript-tail.js";
import {
  type ActivityEvidence,
  activityOf,
  apiCauseOf,
} from "../../src/watchdog/rules/activity.js";
import { FIXTURES } from "../helpers/fixtures.js";

const F = (name: string) => join(FIXTURES, "claude-2.1.328", name);
const NOW = Date.parse("2026-12-02T12:00:00.000Z");
const ago = (s: number) => new Date(NOW - s * 1000).toISOString();
const QUIET = 600_000;
/** Claude Code 2.1.332's usage-limit dialog under tmux (a reset days away). */
const LIMIT_DIALOG = [
  "❯ go on",
  "  ⎿  You've hit your Opus limit · resets Dec 6, 1:24pm (UTC)",
  "▔".repeat(80),
  "  What do you want to do?",
  "  ❯ 1. Stop and wait for limit to reset",
  "    2. Wait here, then continue automatically at Dec 6, 1:24pm",
  "    3. Upgrade your plan",
  "  Enter to confirm · Esc to cancel",
].join("\n");

describe("transcriptTail on 2.1.328's transcripts", () => {
  it.each([
    ["transcript-tool-turn.jsonl", "ended"],
    ["transcript-bash-open.jsonl", "tool_open"],
    ["transcript-permission-prompt.jsonl", "tool_open"],
    ["transcript-retrying.jsonl", "requesting"],
    ["transcript-background.jsonl", "ended"],
    ["transcript-after-compact.jsonl", "ended"],
    ["transcript-usage-limit.jsonl", "ended"],
  ])("%s ends %s", (file, state) => {
    expect(transcriptTail(F(file)).state).toBe(state);
  });
  it("an open Bash call carries its timeout input; a retry storm counts its tries", () => {
    const open = transcriptTail(F("transcript-bash-open.jsonl"));
    expect(open).toMatchObject({ tool: { name: "Bash", timeout_ms: 600000 } });
    const retrying = transcriptTail(F("transcript-retrying.jsonl"));
    expect(retrying).toMatchObject({ state: "requesting", tries: 3 });
    const limit = transcriptTail(F("transcript-usage-limit.jsonl"));
    expect(limit).toMatchObject({ error: { status: 429, error: "rate_limit" } });
  });
});

const base = (o: Partial<ActivityEvidence>): ActivityEvidence => ({
  transcript: "/t/s.jsonl",
  tail: { state: "ended", at: ago(700) },
  grew_at: ago(700),
  grew_in_subagent: false,
  children: [],
  cpu_ms: 0,
  cpu_window_ms: 1000,
  stop: { at: ago(700), background_count: 0, cron_count: 0 },
  notification: null,
  ...o,
});
const verdict = (o: Partial<ActivityEvidence>, nudged: number | null = null) =>
  activityOf(base(o), NOW, QUIET, nudged).verdict;
const tool = (since: number, timeout: number | null, name = "Bash") => ({
  state: "tool_open" as const,
  at: ago(since),
  tool: { name, id: "t", since: ago(since), timeout_ms: timeout },
});

describe("activityOf", () => {
  it.each([
    ["a turn that ended quiet_after ago with nothing to wake it", {}, "idle"],
    [
      "a turn that ended 2 minutes ago",
      { tail: { state: "ended", at: ago(120) }, grew_at: ago(120) },
      "working",
    ],
    [
      "the same with a live sheepdog wait child",
      { children: [{ pid: 9, what: "node: sheepdog wait", wakes: true }] },
      "waiting",
    ],
    [
      "the same with a Stop listing a background task",
      { stop: { at: ago(700), background_count: 1, cron_count: 0 } },
      "waiting",
    ],
    [
      "the same with a session cron",
      { stop: { at: ago(700), background_count: 0, cron_count: 1 } },
      "waiting",
    ],
    ["the same with CPU in the tree", { cpu_ms: 400 }, "working"],
    [
      "a sub-agent transcript that grew a minute ago",
      { grew_at: ago(60), grew_in_subagent: true },
      "working",
    ],
    [
      "a 9-minute Bash call inside its 10-minute timeout",
      { tail: tool(540, 600_000), grew_at: ago(540) },
      "working",
    ],
    [
      "a Bash call past its limit plus quiet_after",
      { tail: tool(800, 120_000), grew_at: ago(800) },
      "wedged",
    ],
    [
      "the same with no hook records and no child",
      { tail: tool(800, 120_000), grew_at: ago(800), stop: null },
      "unknown",
    ],
    [
      "a tool with no limit the watchdog knows",
      { tail: tool(3000, null, "mcp__x"), grew_at: ago(3000) },
      "working",
    ],
    [
      "retries in flight",
      { tail: { state: "requesting", at: ago(700), tries: 4, first_try: ago(690) } },
      "api_retry",
    ],
    [
      "a turn that a 529 ended",
      {
        tail: {
          state: "ended",
          at: ago(700),
          error: { status: 529, error: "server_error", text: "Overloaded" },
        },
      },
      "api_retry",
    ],
    [
      "a permission prompt after the open call",
      {
        tail: tool(700, null),
        notification: {
          at: ago(690),
          type: "permission_prompt",
          message: "Claude needs your permission",
        },
      },
      "blocked",
    ],
    [
      "an idle_prompt notification is not blocking",
      { notification: { at: ago(640), type: "idle_prompt", message: "waiting" } },
      "idle",
    ],
    [
      "a turn a usage-limit refusal ended: at_limit (the refusal rule's), not api_retry",
      {
        tail: {
          state: "ended",
          at: ago(700),
          error: {
            status: 429,
            error: "rate_limit",
            text: "You've hit your Opus limit · resets Dec 5, 6:58pm (UTC)",
          },
        },
      },
      "at_limit",
    ],
    [
      "Claude Code's limit dialog on the screen: at_limit, never blocked",
      {
        screen: LIMIT_DIALOG,
        notification: { at: ago(10), type: "permission_prompt", message: "x" },
        tail: tool(700, null),
      },
      "at_limit",
    ],
    [
      "the same dialog with no transcript and no hook",
      { screen: LIMIT_DIALOG, transcript: null, stop: null, tail: { state: "unknown", at: null } },
      "at_limit",
    ],
    [
      "a person pressed Esc: interrupted, even with CPU in the tree",
      {
        tail: {
          state: "interrupted",
          at: ago(700),
          text: "[Request interrupted by user for tool use]",
        },
        cpu_ms: 400,
      },
      "interrupted",
    ],
    [
      "no transcript and no hooks",
      { transcript: null, stop: null, tail: { state: "unknown", at: null } },
      "unknown",
    ],
  ] as [string, Partial<ActivityEvidence>, string][])("%s: %s", (_what, ev, expected) => {
    expect(verdict(ev)).toBe(expected);
  });

  it("once nudged, a turn that ended again (recently) with nothing to wake it is idle", () => {
    const ev = { tail: { state: "ended" as const, at: ago(20) }, grew_at: ago(20) };
    expect(verdict(ev)).toBe("working");
    expect(verdict(ev, NOW - 60_000)).toBe("idle");
  });

  it("API errors by cause", () => {
    expect(apiCauseOf({ status: 401, error: "authentication_failed", text: "" })).toBe("auth");
    expect(apiCauseOf({ status: 400, error: "billing_error", text: "" })).toBe("auth");
    expect(
      apiCauseOf({
        status: 429,
        error: "rate_limit",
        text: "You've hit your 5-hour limit · resets 7:14am (UTC)",
      }),
    ).toBe("usage_limit");
    expect(
      apiCauseOf({
        status: 429,
        error: "rate_limit",
        text: "Server is temporarily limiting requests (not your usage limit)",
      }),
    ).toBe("transient");
    expect(apiCauseOf({ status: 529, error: "server_error", text: "" })).toBe("transient");
  });
});
