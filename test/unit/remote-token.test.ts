// The phone's command token (DESIGN §8) and the judgement of a command read from the control
// topic: its fields, its expiry, single use, the constant-time comparison, and every refusal.

import { randomBytes, timingSafeEqual } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { JournalEvent } from "../../src/journal/journal.js";
import { judgeCommand } from "../../src/remote/judge.js";
import {
  type CommandFields,
  commandText,
  parseCommand,
  tokenDigest,
  tokenMatches,
  tokenOf,
} from "../../src/remote/token.js";
import { asEvent } from "../helpers/events.js";

const KEY = Buffer.alloc(32, 7);
const NOW = Date.parse("2026-11-30T03:00:00.000Z");
const HOST = "0a1b2c3d4e5f6071";
const FIELDS: CommandFields = {
  host: HOST,
  program: "catalog",
  incident: "k3j2h4g5f6d7",
  verb: "resume",
  exp: NOW / 1000 + 3600,
};

describe("the token", () => {
  const token = tokenOf(KEY, FIELDS);

  it("is 43 characters of base64url, and matches its own fields under its own key", () => {
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(tokenMatches(KEY, FIELDS, token)).toBe(true);
  });

  const changes: [string, Partial<CommandFields>][] = [
    ["host", { host: "ffffffffffffffff" }],
    ["program", { program: "catalog2" }],
    ["incident", { incident: "k3j2h4g5f6d8" }],
    ["verb", { verb: "unpause" }],
    ["verb finish", { verb: "finish" }],
    ["expiry, a second later", { exp: FIELDS.exp + 1 }],
  ];
  for (const [what, change] of changes)
    it(`covers the ${what}: another value, another token`, () => {
      const other = { ...FIELDS, ...change };
      expect(tokenOf(KEY, other)).not.toBe(token);
      expect(tokenMatches(KEY, other, token)).toBe(false);
    });

  it("is this host's: another key makes another token", () => {
    expect(tokenMatches(randomBytes(32), FIELDS, token)).toBe(false);
  });

  it("cannot be shifted between fields (the encoding is unambiguous)", () => {
    const a = { ...FIELDS, program: "cat", incident: "alog" };
    const b = { ...FIELDS, program: "catalog", incident: "" };
    expect(tokenOf(KEY, a)).not.toBe(tokenOf(KEY, b));
  });

  it("is compared whole, in constant time, whichever byte is wrong", () => {
    const calls: [Buffer, Buffer][] = [];
    const equal = (a: Buffer, b: Buffer) => {
      calls.push([a, b]);
      return timingSafeEqual(a, b);
    };
    const flip = (i: number) => {
      const bytes = Buffer.from(token, "base64url");
      bytes[i] = (bytes[i] as number) ^ 1;
      return bytes.toString("base64url");
    };
    expect(tokenMatches(KEY, FIELDS, flip(0), equal)).toBe(false);
    expect(tokenMatches(KEY, FIELDS, flip(31), equal)).toBe(false);
    expect(tokenMatches(KEY, FIELDS, token, equal)).toBe(true);
    expect(calls).toHaveLength(3);
    for (const [a, b] of calls) expect([a.length, b.length]).toEqual([32, 32]);
    // The real comparator is the default.
    expect(tokenMatches(KEY, FIELDS, flip(5))).toBe(false);
  });

  it.each(["", "short", `${token}A`, `${token.slice(0, 42)}!`])(
    "refuses a token of the wrong shape before comparing: %j",
    (bad) => {
      let compared = false;
      const equal = () => {
        compared = true;
        return true;
      };
      expect(tokenMatches(KEY, FIELDS, bad, equal)).toBe(false);
      expect(compared).toBe(false);
    },
  );

  it("has one spelling: the three others that decode to the same MAC are refused", () => {
    const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    const last = B64.indexOf(token.at(-1) as string);
    const others = [0, 1, 2, 3]
      .map((low) => `${token.slice(0, 42)}${B64[(last & ~3) | low]}`)
      .filter((t) => t !== token);
    expect(others).toHaveLength(3);
    for (const other of others) {
      // the same 32 bytes to a decoder (its last 2 bits are padding)…
      expect(Buffer.from(other, "base64url").equals(Buffer.from(token, "base64url"))).toBe(true);
      // …but another digest, so it would be a second use: not this host's token
      expect(tokenDigest(other)).not.toBe(tokenDigest(token));
      expect(tokenMatches(KEY, FIELDS, other)).toBe(false);
    }
  });

  it("keeps a digest that refuses it again but cannot be pressed", () => {
    const d = tokenDigest(token);
    expect(d).toMatch(/^[0-9a-f]{32}$/);
    expect(d).not.toContain(token);
    expect(tokenDigest(tokenOf(KEY, { ...FIELDS, verb: "unpause" }))).not.toBe(d);
  });
});

describe("the command text", () => {
  it("reads back exactly what a button sends", () => {
    const text = commandText(FIELDS, tokenOf(KEY, FIELDS));
    expect(parseCommand(text)).toEqual({
      kind: "command",
      fields: FIELDS,
      token: tokenOf(KEY, FIELDS),
    });
  });
  const rows: [string, string, string][] = [
    ["hello", "other", ""],
    ["sheepdog", "other", ""],
    ["sheepdog resume Catalog incident=a host=b exp=1 token=c", "other", ""],
    ["sheepdog resume catalog", "malformed", "no incident"],
    ["sheepdog resume catalog incident=a host=b exp=x token=c", "malformed", "exp is not"],
    ["sheepdog resume catalog incident=a incident=a host=b exp=1 token=c", "malformed", "twice"],
    ["sheepdog resume catalog incident=a host=b exp=1 token=c now=1", "malformed", "unexpected"],
    ["sheepdog finish catalog incident=a host=b exp=1 token=c", "command", ""],
  ];
  for (const [text, kind, why] of rows)
    it(`${JSON.stringify(text)} → ${kind}`, () => {
      const got = parseCommand(text);
      expect(got.kind).toBe(kind);
      if (got.kind === "malformed") expect(got.why).toContain(why);
    });
});

// --- judging a command --------------------------------------------------------------------

const INCIDENT = FIELDS.incident;
const at = (min: number) => new Date(NOW + min * 60_000).toISOString();
const ev = (min: number, type: string, extra: Record<string, unknown> = {}): JournalEvent =>
  asEvent({ at: at(min), type, ...extra });
/** A stand-down whose page (incident INCIDENT) went out. */
const STOOD_DOWN: JournalEvent[] = [
  ev(-30, "stood_down", { reason: "crash loop" }),
  ev(-30, "incident_opened", {
    incident: INCIDENT,
    kind: "stood_down",
    title: "catalog stood down",
  }),
  ev(-30, "paged", { kind: "stood_down", incident: INCIDENT }),
];
let nextId = 0;
function message(fields: Partial<CommandFields> = {}, token?: string) {
  const f = { ...FIELDS, ...fields };
  return {
    id: `msg${String(nextId++).padStart(9, "0")}`,
    time: NOW / 1000,
    message: commandText(f, token ?? tokenOf(KEY, f)),
  };
}
function judge(m: ReturnType<typeof message>, journal = STOOD_DOWN, extra = {}) {
  return judgeCommand(m, {
    program: "catalog",
    host: HOST,
    key: KEY,
    journal,
    now: NOW,
    configInvalid: false,
    ...extra,
  });
}
const reason = (j: ReturnType<typeof judge>) => (j.kind === "refuse" ? j.reason : j.kind);

describe("judging a command from the control topic", () => {
  it("accepts a good one: its verb, incident, digest and expiry", () => {
    const m = message();
    const j = judge(m);
    expect(j).toMatchObject({ kind: "accept", verb: "resume", exp: FIELDS.exp });
    if (j.kind === "accept") {
      expect(j.incident.id).toBe(INCIDENT);
      expect(j.digest).toBe(tokenDigest(tokenOf(KEY, FIELDS)));
    }
  });

  const used = [
    ...STOOD_DOWN,
    ev(-1, "remote_accepted", {
      incident: INCIDENT,
      token_sha256: tokenDigest(tokenOf(KEY, FIELDS)),
      message_id: "first0000000",
    }),
  ];
  const rows: [string, () => ReturnType<typeof judge>, string][] = [
    [
      "another program's command on a shared topic",
      () => judge(message({ program: "books" })),
      "ignore",
    ],
    ["text that is not a command", () => judge({ id: "x1", time: 0, message: "hello" }), "ignore"],
    [
      "a message already answered",
      () => judge({ ...message(), id: "first0000000" }, used),
      "ignore",
    ],
    ["finish", () => judge(message({ verb: "finish" })), "unknown_verb"],
    ["stop", () => judge(message({ verb: "stop" })), "unknown_verb"],
    ["another host's program", () => judge(message({ host: "ffffffffffffffff" })), "other_host"],
    ["a forged token", () => judge(message({}, tokenOf(randomBytes(32), FIELDS))), "forged"],
    ["a host with no key", () => judge(message(), STOOD_DOWN, { key: null }), "forged"],
    ["an expired token", () => judge(message({ exp: NOW / 1000 - 1 })), "expired"],
    ["a token that expires now", () => judge(message({ exp: NOW / 1000 })), "expired"],
    ["an unknown incident", () => judge(message({ incident: "zzzzzzzzzzzz" })), "unknown_incident"],
    ["a used token (single use)", () => judge(message(), used), "replayed"],
    [
      "a used token spelt another way (its last character's padding bits set)",
      () => {
        const token = tokenOf(KEY, FIELDS);
        const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
        const other = `${token.slice(0, 42)}${B64[B64.indexOf(token.at(-1) as string) ^ 1]}`;
        return judge(message({}, other), used);
      },
      "forged",
    ],
    [
      "a closed incident",
      () =>
        judge(message(), [
          ...STOOD_DOWN,
          ev(-5, "cleared"),
          ev(-5, "incident_closed", { incident: INCIDENT, kind: "stood_down" }),
        ]),
      "incident_closed",
    ],
    [
      "an incident whose condition ended (not yet closed)",
      () => judge(message(), [...STOOD_DOWN, ev(-5, "cleared")]),
      "incident_closed",
    ],
    ["a verb not offered on that page", () => judge(message({ verb: "unpause" })), "not_offered"],
    [
      "an invalid program.json",
      () => judge(message(), STOOD_DOWN, { configInvalid: true }),
      "config_invalid",
    ],
    [
      "malformed",
      () => judge({ id: "m1", time: 0, message: "sheepdog resume catalog x" }),
      "malformed",
    ],
  ];
  for (const [name, run, want] of rows)
    it(`${name} → ${want}`, () => expect(reason(run())).toBe(want));

  it("an expired token for another host is refused as another host's: no key of theirs is tried", () => {
    expect(reason(judge(message({ host: "ffffffffffffffff", exp: 1 })))).toBe("other_host");
  });
});
