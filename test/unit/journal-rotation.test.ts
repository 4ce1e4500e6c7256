// The journal's rotation through the real appendEvent, many times over (DESIGN §2): replay's
// view (journal.1 and the current file) keeps what is still true and reads nothing twice, and
// the copies at the new file's head do not grow.
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { appendEvent, JOURNAL, type JournalEvent, readEvents } from "../../src/journal/journal.js";
import { replay } from "../../src/journal/replay.js";
import { openIncidents } from "../../src/page/incident.js";
import { usedTokens } from "../../src/remote/judge.js";

/** An event without its `carried` mark: a copy and its original are one event. */
const identity = ({ carried: _c, ...rest }: JournalEvent) => JSON.stringify(rest);

describe("many rotations through appendEvent", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "sheepdog-carry-"));
    process.env.SHEEPDOG_JOURNAL_MAX_BYTES = "1500";
  });
  afterEach(() => {
    delete process.env.SHEEPDOG_JOURNAL_MAX_BYTES;
  });
  let n = 0;
  const pad = (count: number) => {
    for (let i = 0; i < count; i++)
      appendEvent(dir, { type: "heartbeat_failed", error: `${n++} ${"x".repeat(200)}` });
  };
  const head = () =>
    readFileSync(join(dir, JOURNAL), "utf8")
      .split("\n")
      .filter((l) => l.includes('"carried":true')).length;

  it("a stand-down cleared in the next file stays cleared, rotation after rotation", () => {
    appendEvent(dir, { type: "stood_down", reason: "crash loop" });
    pad(8); // the stand-down's file fills and rotates
    appendEvent(dir, { type: "cleared" });
    const seen: string[] = [];
    for (let r = 0; r < 12; r++) {
      pad(8);
      seen.push(replay(readEvents(dir)).stoodDown ? "stood down" : "clear");
    }
    expect(seen).toEqual(Array(12).fill("clear"));
  });

  it("an open incident and a used token stay in view; the copies at the head do not grow", () => {
    const until = new Date(Date.now() + 3600_000).toISOString();
    appendEvent(dir, { type: "incident_opened", incident: "aaaaaaaaaaaa", kind: "blocked" });
    appendEvent(dir, { type: "remote_accepted", token_sha256: "t1", expires_at: until });
    appendEvent(dir, { type: "incident_opened", incident: "bbbbbbbbbbbb", kind: "paused" });
    appendEvent(dir, { type: "incident_closed", incident: "bbbbbbbbbbbb", kind: "paused" });
    appendEvent(dir, { type: "remote_accepted", token_sha256: "t2", expires_at: until });
    const heads: number[] = [];
    for (let r = 0; r < 20; r++) {
      pad(8);
      heads.push(head());
      const view = readEvents(dir);
      // (the originals left the view at the second rotation: only copies hold them now)
      if (r > 0) expect(view.filter((e) => !e.carried && e.type === "remote_accepted")).toEqual([]);
      expect([...openIncidents(view).values()].map((i) => i.id)).toEqual(["aaaaaaaaaaaa"]);
      expect([...usedTokens(view)].sort()).toEqual(["t1", "t2"]);
      expect(new Set(view.map(identity)).size).toBe(view.length); // nothing read twice
    }
    expect(new Set(heads.slice(4)).size).toBe(1);
  });
});
