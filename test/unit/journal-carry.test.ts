// What a rotation copies to the head of the new journal file (src/journal/carry.ts): the newest
// event of each type, every incident still open with its page, every used token not yet
// expired, never an incident that closed; drawn from the whole view in append order, so a copy
// carried again is one copy, in its place. (The real rotation: journal-rotation.test.ts.)
import { describe, expect, it } from "vitest";
import {
  carriedForward,
  copiesInOrder,
  identityOf,
  type Staying,
  stayingOf,
} from "../../src/journal/carry.js";
import type { JournalEvent } from "../../src/journal/journal.js";
import { replay } from "../../src/journal/replay.js";
import { openIncidents } from "../../src/page/incident.js";
import { usedTokens } from "../../src/remote/judge.js";
import { asEvent, type LooseEvent } from "../helpers/events.js";

const NOW = Date.parse("2026-12-01T12:00:00.000Z");
let minute = 0;
const ev = (type: string, extra: Record<string, unknown> = {}): JournalEvent =>
  asEvent({ at: new Date(NOW - 600 * 60_000 + minute++ * 60_000).toISOString(), type, ...extra });
const opened = (incident: string, kind = "stood_down") => ev("incident_opened", { incident, kind });
const closed = (incident: string) => ev("incident_closed", { incident });
const paged = (incident: string) => ev("paged", { incident, kind: "stood_down" });
const accepted = (digest: string, expiresInMin: number) =>
  ev("remote_accepted", {
    token_sha256: digest,
    expires_at: new Date(NOW + expiresInMin * 60_000).toISOString(),
  });
const copy = (e: JournalEvent): JournalEvent => ({ ...e, carried: true });
const text = (events: JournalEvent[]) => events.map((e) => `${JSON.stringify(e)}\n`).join("");
const staying = (events: JournalEvent[] = []): Staying => stayingOf(text(events));
const pick = (events: JournalEvent[]) =>
  (events as LooseEvent[]).map(
    (e) =>
      `${e.type}${e.incident ? `:${e.incident}` : ""}${e.token_sha256 ? `:${e.token_sha256}` : ""}`,
  );

describe("carriedForward", () => {
  const cases: {
    name: string;
    leaving: () => JournalEvent[];
    staying?: () => JournalEvent[];
    want: string[];
  }[] = [
    {
      name: "an open incident outlives a later one that closed; its page with it; the newest of each type",
      leaving: () => [
        ev("stood_down"),
        opened("aaaa"),
        paged("aaaa"),
        opened("bbbb", "config_invalid"),
        paged("bbbb"),
        closed("bbbb"),
        ev("saved"),
      ],
      want: [
        "stood_down",
        "incident_opened:aaaa",
        "paged:aaaa",
        "paged:bbbb", // the newest page, as before (cooldowns)
        "incident_closed:bbbb", // the newest close, as before
        "saved",
      ],
    },
    {
      name: "closed in the file that stays in view: not carried (it would look open again)",
      leaving: () => [opened("aaaa"), paged("aaaa"), ev("cleared")],
      staying: () => [ev("saved"), closed("aaaa")],
      want: ["paged:aaaa", "cleared"],
    },
    {
      name: "closed later in the leaving file itself: not carried, even as the newest opening",
      leaving: () => [
        opened("cccc", "blocked"),
        opened("bbbb", "paused"),
        opened("aaaa"),
        closed("aaaa"),
        closed("bbbb"),
        ev("cleared"),
      ],
      want: ["incident_opened:cccc", "incident_closed:bbbb", "cleared"],
    },
    {
      name: "every used token not yet expired, not only the newest; an expired one not",
      leaving: () => [accepted("t1", 60), accepted("t2", -1), accepted("t3", 120)],
      want: ["remote_accepted:t1", "remote_accepted:t3"],
    },
    {
      name: "the newest token is kept as the newest of its type even when expired (as before)",
      leaving: () => [accepted("t1", 60), accepted("t2", -1)],
      want: ["remote_accepted:t1", "remote_accepted:t2"],
    },
    {
      name: "a close whose opening stays in view (a copy at the staying file's head) goes with it",
      leaving: () => [closed("aaaa"), closed("bbbb")],
      staying: () => [copy(opened("aaaa")), ev("saved")],
      want: ["incident_closed:aaaa", "incident_closed:bbbb"],
    },
  ];
  for (const c of cases)
    it(c.name, () => {
      expect(pick(carriedForward(c.leaving(), staying(c.staying?.() ?? []), NOW))).toEqual(c.want);
    });

  it("a copy carried again is one copy, in the place the newer file gave it", () => {
    const standDown = ev("stood_down");
    const cleared = ev("cleared");
    // The leaving file starts with a copy of the old stand-down; the staying file's copies
    // (drawn from the view before it, in append order) hold it and the `cleared` after it.
    const leaving = [copy(standDown), ev("saved")];
    const out = carriedForward(leaving, staying([copy(standDown), copy(cleared)]), NOW);
    expect(pick(out)).toEqual(["stood_down", "cleared", "saved"]);
    expect(new Set(out.map(identityOf)).size).toBe(out.length);
  });
});

describe("copiesInOrder and stayingOf", () => {
  it("the older file's copies that the newer file carried again are read once, at the newer place", () => {
    const a = ev("stood_down");
    const b = ev("paused", { until: new Date(NOW).toISOString() });
    const c = ev("cleared");
    expect(pick(copiesInOrder([copy(a), copy(b)], [copy(a), copy(c)]))).toEqual([
      "paused",
      "stood_down",
      "cleared",
    ]);
  });

  it("names the incidents a file opens and closes and its copies; torn lines and others name none", () => {
    const body = [
      JSON.stringify(copy(opened("cccc"))),
      JSON.stringify(closed("aaaa")),
      JSON.stringify(opened("bbbb", "paused")),
      '{"type":"incident_closed","incident":"dddd"', // torn
      JSON.stringify(ev("paged", { title: '"incident_closed" "carried":true' })),
      "",
    ].join("\n");
    const s = stayingOf(body);
    expect([...s.opened]).toEqual(["cccc", "bbbb"]);
    expect([...s.closed]).toEqual(["aaaa"]);
    expect(pick([...s.carried])).toEqual(["incident_opened:cccc"]);
  });

  it("leaves out what a reader would skip: a copy that does not fit is not carried again, a close that does not fit closes nothing", () => {
    const body = [
      JSON.stringify({ ...copy(closed("eeee")), pid: "not a number" }),
      JSON.stringify({ ...closed("ffff"), ended_at: 12 }),
      JSON.stringify(copy(opened("gggg"))),
      "",
    ].join("\n");
    const s = stayingOf(body);
    expect(pick([...s.carried])).toEqual(["incident_opened:gggg"]);
    expect([...s.closed]).toEqual([]);
  });
});

describe("many rotations (the pure rule, file after file)", () => {
  it("the copies do not grow, an open incident and the unexpired tokens stay, what closed goes", () => {
    // Each round writes the same kinds of events to the current file, then rotates: the new
    // file starts with carriedForward(journal.1, the current file).
    let previous: JournalEvent[] = [];
    let current: JournalEvent[] = [];
    const heads: number[] = [];
    let now = NOW;
    current.push(opened("keep"), paged("keep"), ev("stood_down"));
    for (let r = 0; r < 40; r++) {
      now += 3600_000; // an hour a round: a token lives 24 rounds
      current.push(
        ev("saved", { r }),
        accepted(`t${r}`, (now - NOW) / 60_000 + 24 * 60),
        opened(`i${r}`, "blocked"),
        paged(`i${r}`),
      );
      current.push(closed(`i${r}`)); // each round's own incident closes in its round
      if (r === 0) current.push(ev("cleared"));
      const head = carriedForward(previous, stayingOf(text(current)), now).map(copy);
      heads.push(head.length);
      expect(new Set(head.map(identityOf)).size).toBe(head.length);
      previous = current;
      current = head;
    }
    // bounded once the first tokens expire: the newest of each type, the open incident and its
    // page, the day's tokens
    expect(new Set(heads.slice(24))).toEqual(new Set([heads[24]]));
    expect(heads[24]).toBeLessThan(35);
    const view = [
      ...copiesInOrder(
        previous.filter((e) => e.carried),
        current.filter((e) => e.carried),
      ),
      ...previous.filter((e) => !e.carried),
      ...current.filter((e) => !e.carried),
    ];
    expect([...openIncidents(view).values()].map((i) => i.id)).toEqual(["keep"]);
    expect(replay(view).stoodDown).toBeNull();
    const used = usedTokens(view);
    for (let r = 40 - 23; r < 40; r++) expect(used.has(`t${r}`), `t${r}`).toBe(true);
    expect(used.has("t2")).toBe(false); // expired long ago: let go
  });
});
