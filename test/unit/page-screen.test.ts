// `page.screen: false` (DESIGN §18): a blocked or start_failed page carries no screen text.

import { describe, expect, it } from "vitest";
import { programSchema } from "../../src/config/schema.js";
import type { JournalEvent } from "../../src/journal/journal.js";
import { composePage } from "../../src/page/compose.js";
import { asEvent } from "../helpers/events.js";

const SCREEN = "│ Do you want to proceed?\n│ ❯ 1. Yes\n│   2. No  (token sk-live-123 on screen)";
const at = "2026-12-01T00:00:00.000Z";
const events: [string, JournalEvent][] = [
  [
    "blocked",
    asEvent({ at, type: "blocked", pid: 1, reason: "a permission prompt", screen: SCREEN }),
  ],
  [
    "start_failed",
    asEvent({ at, type: "manager_start_failed", error: "held at a dialog", screen: SCREEN }),
  ],
];

describe("page.screen", () => {
  it.each(events)("%s: the screen by default, none with page.screen false", (kind, e) => {
    const shown = composePage(kind as "blocked", e, { name: "p", arg: "p" }, Date.parse(at));
    expect(shown.message).toContain("sk-live-123");
    const hidden = composePage(kind as "blocked", e, { name: "p", arg: "p", screen: false }, 0);
    expect(hidden.message).not.toContain("sk-live-123");
    expect(hidden.message).not.toMatch(/screen show/);
    expect(hidden.title).toBe(shown.title);
  });

  it("defaults to true and takes only a boolean", () => {
    const ok = programSchema.safeParse({ name: "p", page: {} });
    expect(ok.success && ok.data.page?.screen).toBe(true);
    expect(programSchema.safeParse({ name: "p", page: { screen: false } }).success).toBe(true);
    expect(programSchema.safeParse({ name: "p", page: { screen: "no" } }).success).toBe(false);
  });
});
