import { commandText, TOKEN_TTL_MS, tokenOf } from "../remote/token.js";
import { OFFERED, VERB_WORDS } from "../remote/verbs.js";
import type { IncidentKind } from "./incident.js";
import type { PageAction } from "./ntfy.js";
import { publishUrl } from "./ntfy.js";

// The buttons on a problem page (DESIGN §8, "A page a person can act on"): one `http` action
// per safe answer when `page.ntfy.control_topic` is set (it publishes the command, with its
// token, to that topic; the app adds no credential of its own), and `copy` with the exact
// command that answers the page.

/** A word safe on a shell line as it is, else single-quoted. */
function shellWord(word: string): string {
  return /^[A-Za-z0-9_./:@%+=-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** The one command that answers each kind of problem page (the one its message names). */
export function answerCommand(kind: IncidentKind, arg: string): string {
  const p = `--program ${shellWord(arg)}`;
  switch (kind) {
    case "stood_down":
      return `sheepdog resume ${p}`;
    case "tick_failed":
    case "start_failed":
      return `sheepdog journal ${p}`;
    case "config_invalid":
      return `sheepdog check ${p}`;
    case "lease_lost":
      return "sheepdog status --fleet";
    case "paused":
    case "blocked":
    case "api_errors":
      return `sheepdog status ${p}`;
  }
}

export interface ActionInput {
  kind: IncidentKind;
  program: string;
  /** How `--program` names it (a bare name, else its path). */
  arg: string;
  incident: string;
  /** Where the buttons publish; absent: the page carries only `copy`. */
  control: { server: string; topic: string; host: string; key: Buffer } | null;
  now: number;
}

/** The page's actions: the one-tap answers first (at most two), then `copy`. */
export function pageActions(input: ActionInput): PageAction[] {
  const out: PageAction[] = [];
  const c = input.control;
  if (c) {
    const exp = Math.floor((input.now + TOKEN_TTL_MS) / 1000);
    for (const verb of OFFERED[input.kind].slice(0, 2)) {
      const fields = { host: c.host, program: input.program, incident: input.incident, verb, exp };
      out.push({
        action: "http",
        label: VERB_WORDS[verb].label,
        url: `${publishUrl(c.server)}${c.topic}`,
        method: "POST",
        body: commandText(fields, tokenOf(c.key, fields)),
        clear: false,
      });
    }
  }
  out.push({
    action: "copy",
    label: "Copy command",
    value: answerCommand(input.kind, input.arg),
    clear: false,
  });
  return out;
}
