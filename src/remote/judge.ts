import type { JournalEvent } from "../journal/journal.js";
import { type Incident, incidentsOf, stillOpen } from "../page/incident.js";
import type { ControlMessage } from "./control-topic.js";
import { parseCommand, tokenDigest, tokenMatches } from "./token.js";
import { isVerb, OFFERED, type Verb } from "./verbs.js";

// Whether a command read from the control topic is carried out (DESIGN §8). Pure: the key, the
// journal and the time come in. The checks run in an order that says no more than it must: the
// token is checked before anything about this host's incidents is looked up.

export type Refusal =
  /** Names this program but is not what a sheepdog button sends. */
  | "malformed"
  /** A verb no page offers (`finish`, `stop`, …). */
  | "unknown_verb"
  /** For the same program on another host. */
  | "other_host"
  /** The token is not this host's for these fields. */
  | "forged"
  | "expired"
  /** The token was used already. */
  | "replayed"
  /** No incident of that id here. */
  | "unknown_incident"
  /** The incident is over. */
  | "incident_closed"
  /** The verb was not offered on that incident's page. */
  | "not_offered"
  /** program.json is invalid: the CLI command would refuse too. */
  | "config_invalid";

export type Judgement =
  /** Not for this program (another use of a shared topic), or a message already handled. */
  | { kind: "ignore" }
  | { kind: "refuse"; reason: Refusal; detail: string; verb?: string; incident?: string }
  | { kind: "accept"; verb: Verb; incident: Incident; digest: string; exp: number };

export interface JudgeContext {
  program: string;
  host: string;
  /** This host's key; null when it has none (it never sent a page with buttons). */
  key: Buffer | null;
  journal: readonly JournalEvent[];
  now: number;
  configInvalid: boolean;
}

/** The ntfy ids of the messages already answered (accepted or refused). */
export function handledIds(journal: readonly JournalEvent[]): Set<string> {
  const out = new Set<string>();
  for (const e of journal)
    if (
      (e.type === "remote_accepted" || e.type === "remote_refused") &&
      typeof e.message_id === "string"
    )
      out.add(e.message_id);
  return out;
}

/** The digests of the tokens already used. */
export function usedTokens(journal: readonly JournalEvent[]): Set<string> {
  const out = new Set<string>();
  for (const e of journal)
    if (e.type === "remote_accepted" && typeof e.token_sha256 === "string") out.add(e.token_sha256);
  return out;
}

export function judgeCommand(
  m: ControlMessage,
  ctx: JudgeContext,
  seen: { handled: Set<string>; used: Set<string> } = {
    handled: handledIds(ctx.journal),
    used: usedTokens(ctx.journal),
  },
): Judgement {
  const parsed = parseCommand(m.message);
  if (parsed.kind === "other") return { kind: "ignore" };
  const program = parsed.kind === "command" ? parsed.fields.program : parsed.program;
  if (program !== ctx.program || seen.handled.has(m.id)) return { kind: "ignore" };
  const refuse = (reason: Refusal, detail: string, incident?: string): Judgement => ({
    kind: "refuse",
    reason,
    detail,
    verb: parsed.kind === "command" ? parsed.fields.verb : parsed.verb,
    ...(incident ? { incident } : {}),
  });
  if (parsed.kind === "malformed") return refuse("malformed", parsed.why);
  const { fields, token } = parsed;
  if (!isVerb(fields.verb))
    return refuse("unknown_verb", `no page offers "${fields.verb.slice(0, 40)}"`);
  if (fields.host !== ctx.host)
    return refuse("other_host", `for host ${fields.host}; this host is ${ctx.host}`);
  if (!ctx.key) return refuse("forged", "this host has no key: it sent no page with buttons");
  if (!tokenMatches(ctx.key, fields, token))
    return refuse("forged", "the token does not match this host's key for these fields");
  const incidentId = fields.incident;
  if (fields.exp * 1000 <= ctx.now)
    return refuse(
      "expired",
      `the token expired at ${new Date(fields.exp * 1000).toISOString()}`,
      incidentId,
    );
  const incident = incidentsOf(ctx.journal).get(incidentId);
  if (!incident) return refuse("unknown_incident", "no such incident here", incidentId);
  const digest = tokenDigest(token);
  if (seen.used.has(digest)) return refuse("replayed", "the token was used already", incidentId);
  if (!stillOpen(incident, ctx.journal))
    return refuse("incident_closed", `the ${incident.kind} incident is over`, incidentId);
  if (!OFFERED[incident.kind].includes(fields.verb))
    return refuse("not_offered", `not an answer to a ${incident.kind} page`, incidentId);
  if (ctx.configInvalid)
    return refuse(
      "config_invalid",
      "program.json is invalid: sheepdog refuses every command but tick, watch, status, journal and doctor until it loads",
      incidentId,
    );
  return { kind: "accept", verb: fields.verb, incident, digest, exp: fields.exp };
}
