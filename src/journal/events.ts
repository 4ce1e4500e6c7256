// The journal's vocabulary: every event type sheepdog writes, its fields, and who writes it.
// One entry a type: the TypeScript types, the schema every line read is checked against, and
// every list of event names (relevance, pages, replay) come from EVENTS and nowhere else.
//
// To add an event type: add one entry below (its fields as zod/mini schemas, built from the
// shared ones; `by: "pass"` when only a watchdog pass writes it). `appendEvent` then accepts
// it, readers see it typed, and docs/commands.md's journal section should say what it means.
// test/unit/journal-written.test.ts holds each type's lines as the code writes them (a new type
// or field goes there too): each is read back whole, and each field of them must be declared.
//
// Fields are optional unless every sheepdog that ever wrote the type wrote them: a line of an
// old journal that does not fit is skipped, counted and said (journal.ts), never fatal, so a
// field made required too eagerly would hide old history.
import * as z from "zod/mini";

// Shared field schemas: one instance each (zod schemas are immutable), so this module costs a
// few objects at load; each type's object schema is built on first use (schemaOf).
const S = z.string();
const N = z.number();
const B = z.boolean();
const oS = z.optional(S);
const oN = z.optional(N);
const oB = z.optional(B);
const onS = z.optional(z.nullable(S));
const onN = z.optional(z.nullable(N));
const onB = z.optional(z.nullable(B));
const oStrings = z.optional(z.array(S));

/** A page as ntfy is sent it (page/ntfy.ts), kept in `page_failed` so it can be sent again. */
// z.object, not looseObject: a line is kept as written, fields unknown here included (checkEvent
// returns it whole); z.object only leaves them out of the type, which Page (an interface) needs.
const page = z.optional(
  z.object({
    title: S,
    message: S,
    priority: z.literal([1, 2, 3, 4, 5]),
    tags: z.array(S),
    sequence_id: oS,
    /** ntfy's action buttons (page/ntfy.ts `PageAction`), kept as sent. */
    actions: z.optional(z.array(z.object({ action: S, label: S }))),
  }),
);

/** What an activity verdict's note journals (DESIGN §14). */
const activityNote = {
  pid: onN,
  reason: oS,
  verdict: oS,
  evidence: oStrings,
  /** When the spell began (the turn's end, the call's start). */
  since: oS,
  /** `blocked`: the prompt on the pane's screen. */
  screen: oS,
  /** `blocked` of a start held before its claim (rule 12): what it waits for, which start. */
  waiting_for: oS,
  launch_began: oS,
  /** The hook's notification that told it (`idle_prompt`, `permission_prompt`). */
  notification: z.optional(z.object({ at: S, type: onS, message: onS })),
};

/** What a start journals of its launch (launch/types.ts `Launched`, and the intent before it). */
const launch = {
  reason: oS,
  planned: oB,
  launcher: oS,
  launch_began: oS,
  mono_ms: oN,
  boot: onS,
};

/**
 * Who writes an event: `pass` only a watchdog pass (its lines never wake another watch pass:
 * resident/relevance.ts); `manager` the manager's own commands; `person` a person's; `any` more
 * than one of them.
 */
type Writer = "pass" | "manager" | "person" | "any";

export const EVENTS = {
  // The claim (DESIGN §3).
  claimed: { by: "manager", fields: { pid: N, start_time: oS, hostname: oS, lease_epoch: oN } },
  /** Also written by `claim acquire --break-stale`, whose `claimed` follows and wakes a pass. */
  claim_broken: {
    by: "pass",
    fields: { reason: oS, holder_state: oS, pid: oN, start_time: oS, problem: oS },
  },
  released: { by: "any", fields: { pid: oN, start_time: oS, note: oS, forced: oB } },
  // The manager's saves and hand-overs (DESIGN §4).
  saved: {
    by: "manager",
    fields: { pid: oN, start_time: oS, context_tokens: onN, progress: onS, pushed: onB },
  },
  hand_over: {
    by: "manager",
    fields: {
      pid: oN,
      start_time: oS,
      context_tokens: onN,
      note: oS,
      progress: onS,
      pushed: onB,
    },
  },
  finished: { by: "any", fields: { note: oS, pid: oN, forced: oB, holder_pid: oN } },
  reopened: { by: "person", fields: { finished_at: oS, note: oS } },
  // Stand-downs and pauses (DESIGN §5, §6).
  /** `holder_state`: what became of the claim's holder (alive, dead, stopped…), for the report. */
  stood_down: { by: "pass", fields: { reason: oS, holder_state: oS, holder_pid: oN } },
  /** `by: "phone"` (and its `incident`): a page's button answered (DESIGN §8). */
  cleared: { by: "person", fields: { stood_down_at: oS, note: oS, by: oS, incident: oS } },
  paused: {
    by: "any",
    fields: {
      until: S,
      reason: oS,
      window: onS,
      /** A refusal naming no reset (DESIGN §5): what its text says a person must do. */
      needs_person: oS,
      limit_text: oS,
      by: oS,
      incident: oS,
    },
  },
  /** `by`: "person" (`sheepdog unpause`) or "phone" (a page's button). */
  unpaused: { by: "any", fields: { reason: oS, by: oS, incident: oS } },
  // Starts and stops (DESIGN §6).
  manager_starting: { by: "pass", fields: launch },
  manager_started: {
    by: "pass",
    fields: {
      ...launch,
      pid: oN,
      start_time: oS,
      exited: oB,
      pane: oS,
      window: oS,
      agent: oS,
      workspace: oS,
      transcript: oS,
      unit: oS,
    },
  },
  manager_start_failed: {
    by: "pass",
    fields: { launcher: oS, reason: oS, screen: oS, workspace: oS, planned: oB },
  },
  manager_stopped: {
    by: "pass",
    fields: {
      pid: oN,
      start_time: oS,
      pane: oS,
      window: oS,
      reason: oS,
      planned: oB,
      decision: oS,
      evidence: onS,
      evidence_error: oS,
      outcome: oS,
      group: oB,
      /** What was stopped: the holder, the manager that handed over, a leftover start. */
      who: oS,
      /** A leftover start's launch, so replay knows which start it ended. */
      launch_began: oS,
    },
  },
  start_cut_short: { by: "pass", fields: { launcher: oS, launch_began: oS, reason: oS } },
  // What a holder is doing (DESIGN §14).
  nudged: {
    by: "pass",
    fields: { pid: oN, reason: oS, text: oS, since: oS, via: oS, error: oS },
  },
  /** The resume line typed into an agent that does not go on by itself after a limit (§19). */
  resume_typed: {
    by: "pass",
    fields: { pid: oN, reason: oS, text: oS, via: oS, error: oS },
  },
  api_errors: { by: "pass", fields: activityNote },
  blocked: { by: "pass", fields: activityNote },
  restart_idle: { by: "pass", fields: activityNote },
  restart_wedged: { by: "pass", fields: activityNote },
  // The lease (DESIGN §15).
  lease_acquired: {
    by: "pass",
    fields: {
      how: oS,
      epoch: oN,
      ref: oS,
      from: oS,
      from_machine_id: oS,
      from_epoch: oN,
      reason: oS,
    },
  },
  lease_lost: { by: "pass", fields: { reason: oS, cause: oS, holder: oS, epoch: oN } },
  // The watchdog itself.
  tick_failed: { by: "pass", fields: { error: oS } },
  tick_lock_broken: { by: "pass", fields: { reason: oS, pid: oN, locked_at: oS } },
  /** A pass kept from acting by a lock a live process held (src/lock/dir-lock.ts). */
  lock_busy: { by: "pass", fields: { lock: S, pid: oN, since: oS, reason: oS } },
  sleep_gap: { by: "pass", fields: { from: oS, to: oS, discounted_ms: oN } },
  config_invalid: { by: "pass", fields: { file: oS, error: oS } },
  // Pages (DESIGN §7).
  paged: {
    by: "pass",
    fields: {
      kind: oS,
      priority: oN,
      title: oS,
      topic: oS,
      id: onS,
      retry: oB,
      reminder: oN,
      incident: oS,
      actions_error: oS,
      copy_dropped: oB,
    },
  },
  page_failed: {
    by: "pass",
    fields: {
      kind: oS,
      error: oS,
      /** The HTTP status ntfy answered (none when it gave no answer: down, timed out). */
      status: oN,
      /** The page, on its first failure; a retry that fails again journals a count instead. */
      page,
      failures: oN,
      /** Refused for good (a permanent 4xx): never sent again. */
      permanent: oB,
      retry: oB,
      reminder: oN,
      incident: oS,
      actions_error: oS,
    },
  },
  heartbeat_failed: { by: "pass", fields: { error: oS } },
  // Incidents: a problem page and its close (DESIGN §8).
  incident_opened: {
    by: "pass",
    fields: { incident: S, kind: oS, sequence_id: oS, title: oS, since: oS },
  },
  incident_closed: {
    by: "pass",
    fields: { incident: S, kind: oS, how: oS, ended_at: oS, after_ms: onN, pid: oN },
  },
  // A person's answer from the phone, on the control topic (DESIGN §8).
  remote_accepted: {
    by: "pass",
    fields: {
      by: oS,
      verb: oS,
      incident: oS,
      token_sha256: oS,
      expires_at: oS,
      message_id: oS,
      sent_at: oS,
    },
  },
  remote_refused: {
    by: "pass",
    fields: {
      reason: oS,
      detail: oS,
      verb: oS,
      incident: oS,
      count: oN,
      message_id: oS,
      sent_at: oS,
    },
  },
  remote_poll_failed: { by: "pass", fields: { topic: oS, error: oS } },
  // The merge lock (DESIGN §10).
  merge_lock_acquired: { by: "manager", fields: { pid: oN, item: onS, ref: oS } },
  merge_lock_released: {
    by: "any",
    fields: { pid: oN, item: onS, ref: oS, stale: oB, holder_state: oS },
  },
} as const satisfies Record<string, { by: Writer; fields: z.core.$ZodLooseShape }>;

type Events = typeof EVENTS;
export type EventType = keyof Events;
type FieldsOf<K extends EventType> = z.infer<z.ZodMiniObject<Events[K]["fields"]>>;

/** One journal line of type K (each of them, for a union): `at` (ISO-8601 UTC), `type`, fields. */
export type EventOf<K extends EventType> = K extends EventType
  ? {
      at: string;
      type: K;
      /** Set on an event copied forward when the journal rotated. */
      carried?: boolean;
    } & FieldsOf<K>
  : never;

/** Any journal line, narrowed by its `type`. */
export type JournalEvent = { [K in EventType]: EventOf<K> }[EventType];

/** What `appendEvent` takes: an event without its `at`. */
export type NewEvent = { [K in EventType]: { type: K } & FieldsOf<K> }[EventType];

/** Every event type, in the order of EVENTS. */
export const EVENT_TYPES = Object.keys(EVENTS) as EventType[];

export function isEventType(type: unknown): type is EventType {
  return typeof type === "string" && Object.hasOwn(EVENTS, type);
}

/** The types only a watchdog pass writes (they never wake another watch pass). */
export const PASS_EVENT_TYPES: ReadonlySet<EventType> = new Set(
  EVENT_TYPES.filter((t) => EVENTS[t].by === "pass"),
);

const built = new Map<EventType, z.ZodMiniType>();

/** The schema of one event type's lines (unknown fields kept: a newer sheepdog's, say). */
export function schemaOf(type: EventType): z.ZodMiniType {
  let schema = built.get(type);
  if (!schema) {
    schema = z.looseObject({ at: S, type: z.literal(type), carried: oB, ...EVENTS[type].fields });
    built.set(type, schema);
  }
  return schema;
}

/**
 * Every event type's schema as one discriminated union (what a journal line is). Readers use
 * checkEvent, the same schemas compiled into a predicate (zod's own parse cost a 10 MB journal
 * ~300 ms more); test/unit/journal-events.test.ts holds the two to each other.
 */
export function journalEventSchema() {
  return z.discriminatedUnion(
    "type",
    EVENT_TYPES.map((t) => schemaOf(t)) as unknown as [
      z.ZodMiniObject<{ type: z.ZodMiniLiteral<string> }>,
    ],
  );
}

type Check = (v: unknown) => boolean;

/**
 * A predicate that accepts exactly what `schema` accepts, compiled once from its definition:
 * a journal holds tens of thousands of lines and every tick reads them, and zod's own parse
 * costs microseconds a line (it builds a result), the predicate a few typeof checks. What it
 * does not know how to compile is left to zod. test/unit/journal-events.test.ts holds the two
 * to the same answers.
 */
export function compileCheck(schema: z.ZodMiniType): Check {
  // biome-ignore lint/suspicious/noExplicitAny: reading zod's definition tree
  const def = (schema as any)._zod.def;
  const viaZod: Check = (v) => schema.safeParse(v).success;
  if (def.checks?.length) return viaZod;
  switch (def.type) {
    case "string":
      return (v) => typeof v === "string";
    case "number":
      return (v) => typeof v === "number" && Number.isFinite(v);
    case "boolean":
      return (v) => typeof v === "boolean";
    case "literal": {
      const values: unknown[] = def.values;
      return (v) => values.includes(v);
    }
    case "optional": {
      const inner = compileCheck(def.innerType);
      return (v) => v === undefined || inner(v);
    }
    case "nullable": {
      const inner = compileCheck(def.innerType);
      return (v) => v === null || inner(v);
    }
    case "array": {
      const element = compileCheck(def.element);
      return (v) => Array.isArray(v) && v.every(element);
    }
    case "object": {
      // A strict object refuses unknown keys: zod's own parse says so.
      if (def.catchall?._zod.def.type === "never") return viaZod;
      const fields = Object.entries(def.shape as Record<string, z.ZodMiniType>).map(
        ([k, f]) => [k, compileCheck(f)] as const,
      );
      return (v) => {
        if (typeof v !== "object" || v === null || Array.isArray(v)) return false;
        const o = v as Record<string, unknown>;
        for (const [k, check] of fields) if (!check(o[k])) return false;
        return true;
      };
    }
    default:
      return viaZod;
  }
}

const checks = new Map<EventType, Check>();

function checkOf(type: EventType): Check {
  let check = checks.get(type);
  if (!check) {
    check = compileCheck(schemaOf(type));
    checks.set(type, check);
  }
  return check;
}

/**
 * Checks one parsed journal line: the event itself (as written: unknown fields stay), or why it
 * is not one (`manager_started: pid: expected number`).
 */
export function checkEvent(v: unknown): { event: JournalEvent } | { problem: string } {
  if (!v || typeof v !== "object" || Array.isArray(v)) return { problem: "not a JSON object" };
  const type = (v as { type?: unknown }).type;
  if (!isEventType(type))
    return {
      problem: typeof type === "string" ? `unknown event type ${JSON.stringify(type)}` : "no type",
    };
  if (checkOf(type)(v)) return { event: v as JournalEvent };
  // Refused (rare): zod's parse says where and what it expected.
  const parsed = schemaOf(type).safeParse(v);
  if (parsed.success) return { event: v as JournalEvent };
  const issue = parsed.error.issues[0];
  const where = issue?.path.length ? issue.path.join(".") : "(line)";
  const expected = issue && "expected" in issue ? `expected ${String(issue.expected)}` : "invalid";
  return { problem: `${type}: ${where}: ${expected}` };
}
