import { createHash, createHmac, timingSafeEqual } from "node:crypto";

// The token that lets a page's button carry out one command (DESIGN §8): an HMAC-SHA256, keyed
// by this host's secret, over the host, the program, the incident, the verb and an expiry. It
// travels in the `http` action's body, so anyone who can read the page topic can read it: it is
// worth exactly that one command, on this host, for that incident, while it is open, once,
// before it expires. Nothing else is derived from it, and the key never leaves the host.

/** A token is good for a day after its page was composed. */
export const TOKEN_TTL_MS = 24 * 3600_000;

/** What a token is over. `exp` is a Unix time in seconds. */
export interface CommandFields {
  host: string;
  program: string;
  incident: string;
  verb: string;
  exp: number;
}

/** The MAC's input: a JSON array is one unambiguous encoding of the fields. */
function macInput(f: CommandFields): string {
  return JSON.stringify(["sheepdog-remote-1", f.host, f.program, f.incident, f.verb, f.exp]);
}

function mac(key: Buffer, f: CommandFields): Buffer {
  return createHmac("sha256", key).update(macInput(f)).digest();
}

/** The token for these fields: the HMAC in base64url (43 characters). */
export function tokenOf(key: Buffer, f: CommandFields): string {
  return mac(key, f).toString("base64url");
}

const TOKEN = /^[A-Za-z0-9_-]{43}$/;

/**
 * Whether `token` is the one for these fields. The whole MAC is compared in constant time
 * (`equal`, crypto.timingSafeEqual: a test holds it to that), so the time taken says nothing
 * about how much of a guess was right; a token of the wrong shape is refused before any
 * comparison (its length is no secret), and so is one that is not the MAC's own spelling: 43
 * base64url characters carry 258 bits, and a decoder ignores the last 2, so four spellings
 * decode to one MAC. Single use is kept by the spelling's digest: only one may verify.
 */
export function tokenMatches(
  key: Buffer,
  f: CommandFields,
  token: string,
  equal: (a: Buffer, b: Buffer) => boolean = timingSafeEqual,
): boolean {
  if (!TOKEN.test(token)) return false;
  const given = Buffer.from(token, "base64url");
  if (given.toString("base64url") !== token) return false; // not the canonical spelling
  const want = mac(key, f);
  if (given.length !== want.length) return false;
  return equal(want, given);
}

/** What the journal keeps of a consumed token: enough to refuse it again, nothing to replay. */
export function tokenDigest(token: string): string {
  return createHash("sha256").update(token).digest("hex").slice(0, 32);
}

/** The text a button publishes to the control topic. */
export function commandText(f: CommandFields, token: string): string {
  return `sheepdog ${f.verb} ${f.program} incident=${f.incident} host=${f.host} exp=${f.exp} token=${token}`;
}

/** A control-topic message read as a command. */
export type Parsed =
  /** Not a sheepdog command at all (another use of the topic). */
  | { kind: "other" }
  /** Names a verb and a program, but the rest is not what sheepdog writes. */
  | { kind: "malformed"; verb: string; program: string; why: string }
  | { kind: "command"; fields: CommandFields; token: string };

const FIELD: Record<string, RegExp> = {
  incident: /^[a-z0-9]{1,64}$/,
  host: /^[a-z0-9]{1,64}$/,
  exp: /^[0-9]{1,12}$/,
  token: /^[A-Za-z0-9_-]{1,128}$/,
};

/** Reads `sheepdog VERB PROGRAM incident=… host=… exp=… token=…`, strictly. */
export function parseCommand(text: string): Parsed {
  const words = text.trim().split(" ");
  const [head, verb, program, ...rest] = words;
  if (head !== "sheepdog" || !verb || !program || !/^[a-z0-9][a-z0-9-]{0,62}$/.test(program))
    return { kind: "other" };
  const malformed = (why: string): Parsed => ({ kind: "malformed", verb, program, why });
  const got: Record<string, string> = {};
  for (const word of rest) {
    const eq = word.indexOf("=");
    const name = eq > 0 ? word.slice(0, eq) : word;
    const value = eq > 0 ? word.slice(eq + 1) : "";
    const shape = FIELD[name];
    if (!shape) return malformed(`unexpected ${JSON.stringify(name.slice(0, 40))}`);
    if (name in got) return malformed(`${name} given twice`);
    if (!shape.test(value)) return malformed(`${name} is not in the expected form`);
    got[name] = value;
  }
  for (const name of Object.keys(FIELD)) if (!(name in got)) return malformed(`no ${name}`);
  return {
    kind: "command",
    fields: {
      host: got.host as string,
      program,
      incident: got.incident as string,
      verb,
      exp: Number(got.exp),
    },
    token: got.token as string,
  };
}
