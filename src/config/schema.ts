import * as z from "zod/mini";
import { AGENTS } from "../agent/kinds.js";
import { unsupportedGlobSyntax } from "../progress/syntax.js";
import { DURATION_EXPECTED, isPositiveDuration } from "../util/duration.js";

export const NAME_PATTERN = /^[a-z0-9][a-z0-9-]{0,62}$/;
export const LAUNCHERS = ["command", "tmux", "herdr"] as const;
export type LauncherKind = (typeof LAUNCHERS)[number];

export const DEFAULT_PROMPT =
  "Read {root}/MANAGER-PROMPT.md and follow it. You were started by sheepdog: {reason}.";

/** Defaults spelled out by `init` and filled in by the loader (DESIGN §9). */
export const DEFAULTS = {
  watchdog: {
    interval: "5m",
    stale_after: "45m",
    claim_grace: "10m",
    merge_max: "2h",
    quiet_after: "10m",
    nudge_wait: "3m",
    crash_loop: { starts: 3, within: "1h" },
    no_progress_hand_overs: 3,
  },
  /** `"auto"`: 75 % of the manager session's context window (DESIGN §4). */
  hand_over_tokens: "auto",
  usage: { pause_at_percent: 100, pause_fallback: "1h" },
  merge_lock: { ref: "refs/looprunner/merge-lock" },
  ledger: { remote: "origin", branch: "ledger" },
  lease: { remote: "origin", margin: "2m" },
  page: {
    server: "https://ntfy.sh",
    cooldown: "6h",
    remind_every: "4h",
    reminders: 2,
  },
} as const;

const text = () => z.string().check(z.minLength(1, { message: "a non-empty string" }));
// Zero is refused (DESIGN §16): `stale_after: "0s"` would stop a healthy manager on every tick.
const duration = (fallback: string) =>
  z._default(
    z
      .string({ message: DURATION_EXPECTED })
      .check(z.refine(isPositiveDuration, { message: DURATION_EXPECTED })),
    fallback,
  );
const count = (fallback: number) =>
  z._default(
    z
      .number({ message: "a positive integer" })
      .check(
        z.int({ message: "a positive integer" }),
        z.positive({ message: "a positive integer" }),
      ),
    fallback,
  );
const GLOB_EXPECTED =
  "a glob using only * ? [..] ** and \\ escapes (no {a,b}, leading !, or extglobs)";
const progressGlob = () =>
  text().check(
    z.refine((p: string) => unsupportedGlobSyntax(p) === null, { message: GLOB_EXPECTED }),
  );
/** A URL's user name or password would be sent to a server as is, and journaled with it. */
function withoutUserinfo(value: string): boolean {
  try {
    const u = new URL(value);
    return u.username === "" && u.password === "";
  } catch {
    return true; // the pattern says what is wrong
  }
}
const URL_EXPECTED = "an http(s) URL";
/** An http(s) URL with no user name or password in it (DESIGN §18: secrets stay secret). */
const httpUrl = () =>
  z.string().check(
    z.regex(/^https?:\/\/\S+$/, { message: URL_EXPECTED }),
    z.refine(withoutUserinfo, {
      message: `${URL_EXPECTED} without a user name or password in it (a token goes in page.ntfy.token_env or token_file)`,
    }),
  );
const argv = () =>
  z.array(z.string()).check(z.minLength(1, { message: "a non-empty array of strings" }));

export const herdrSchema = z.strictObject({
  workspace: z.optional(text()),
  agent: z._default(
    z.string().check(
      z.regex(/^[a-z][a-z0-9_-]{0,31}$/, {
        message: "an agent name matching [a-z][a-z0-9_-]{0,31}",
      }),
    ),
    "manager",
  ),
  kind: z._default(text(), "claude"),
  args: z._default(z.array(z.string()), []),
  /**
   * Answer the agent's folder-trust dialog when a start is held at it (Claude's; Codex's "Trust
   * this folder?" and "Hooks need review").
   */
  accept_trust_dialog: z._default(z.boolean(), false),
});

export const tmuxSchema = z.strictObject({
  session: z.optional(text()),
  command: z._default(argv(), ["claude", "{prompt}"]),
  /**
   * Answer the agent's folder-trust dialog when a start is held at it (Claude's; Codex's "Trust
   * this folder?" and "Hooks need review").
   */
  accept_trust_dialog: z._default(z.boolean(), false),
});

const NAME_EXPECTED =
  "a name matching [a-z0-9][a-z0-9-]{0,62} (lower-case letters, digits, dashes)";

export const programSchema = z.strictObject({
  // The same words for a missing name, a number and a bad string: say what a name looks like.
  name: z
    .string({ message: NAME_EXPECTED })
    .check(z.regex(NAME_PATTERN, { message: NAME_EXPECTED })),
  manager: z._default(
    z.strictObject({
      launcher: z._default(
        z.enum(LAUNCHERS, { message: `one of ${LAUNCHERS.join(", ")}` }),
        "command",
      ),
      /** The agent the manager is (DESIGN §19): Claude Code unless it says codex. */
      agent: z._default(z.enum(AGENTS, { message: `one of ${AGENTS.join(", ")}` }), "claude"),
      prompt: z._default(text(), DEFAULT_PROMPT),
      /** Typed into a live holder at its prompt when a usage pause ends (an agent that does not go on by itself). */
      resume_line: z.optional(
        z.string({ message: "one line of text" }).check(
          z.refine((t: string) => t.trim() !== "" && !/[\r\n]/.test(t), {
            message: "one line of text",
          }),
        ),
      ),
      env: z._default(z.record(z.string(), z.string()), {}),
      herdr: z.optional(herdrSchema),
      tmux: z.optional(tmuxSchema),
      command: z.optional(argv()),
    }),
    { launcher: "command", agent: "claude", prompt: DEFAULT_PROMPT, env: {} },
  ),
  watchdog: z._default(
    z.strictObject({
      interval: duration(DEFAULTS.watchdog.interval),
      stale_after: duration(DEFAULTS.watchdog.stale_after),
      claim_grace: duration(DEFAULTS.watchdog.claim_grace),
      merge_max: duration(DEFAULTS.watchdog.merge_max),
      quiet_after: duration(DEFAULTS.watchdog.quiet_after),
      nudge_wait: duration(DEFAULTS.watchdog.nudge_wait),
      crash_loop: z._default(
        z.strictObject({
          starts: count(DEFAULTS.watchdog.crash_loop.starts),
          within: duration(DEFAULTS.watchdog.crash_loop.within),
        }),
        { ...DEFAULTS.watchdog.crash_loop },
      ),
      no_progress_hand_overs: count(DEFAULTS.watchdog.no_progress_hand_overs),
    }),
    { ...DEFAULTS.watchdog, crash_loop: { ...DEFAULTS.watchdog.crash_loop } },
  ),
  hand_over_tokens: z._default(
    z.union([z.literal("auto"), z.number().check(z.int(), z.positive())], {
      message: '"auto" or a positive integer',
    }),
    DEFAULTS.hand_over_tokens,
  ),
  usage: z._default(
    z.strictObject({
      seat: z.optional(text()),
      pause_at_percent: z._default(
        z
          .number({ message: "a number from 1 to 100" })
          .check(
            z.gte(1, { message: "a number from 1 to 100" }),
            z.lte(100, { message: "a number from 1 to 100" }),
          ),
        DEFAULTS.usage.pause_at_percent,
      ),
      pause_fallback: duration(DEFAULTS.usage.pause_fallback),
    }),
    { ...DEFAULTS.usage },
  ),
  merge_lock: z.optional(
    z.strictObject({
      repo: text(),
      remote: z.optional(text()),
      ref: z._default(
        z.string().check(z.regex(/^refs\/[^\s~^:?*[\\]+$/, { message: "a git ref under refs/" })),
        DEFAULTS.merge_lock.ref,
      ),
    }),
  ),
  ledger: z.optional(
    z.strictObject({
      repo: text(),
      remote: z._default(text(), DEFAULTS.ledger.remote),
      branch: z._default(text(), DEFAULTS.ledger.branch),
    }),
  ),
  // More than one host (DESIGN §15): the program's lease on its git remote. `ref` defaults to
  // refs/sheepdog/lease/<name> (load fills it in); ttl against margin and interval is checked
  // at load.
  lease: z.optional(
    z.strictObject({
      repo: text(),
      remote: z._default(text(), DEFAULTS.lease.remote),
      ref: z.optional(
        z.string().check(z.regex(/^refs\/[^\s~^:?*[\\]+$/, { message: "a git ref under refs/" })),
      ),
      ttl: z
        .string({ message: DURATION_EXPECTED })
        .check(z.refine(isPositiveDuration, { message: DURATION_EXPECTED })),
      margin: duration(DEFAULTS.lease.margin),
    }),
  ),
  progress: z.optional(z.strictObject({ paths: z.array(progressGlob()) })),
  page: z.optional(
    z.strictObject({
      ntfy: z.optional(
        z.strictObject({
          server: z._default(httpUrl(), DEFAULTS.page.server),
          topic: z.string().check(
            z.regex(/^[A-Za-z0-9_-]{1,64}$/, {
              message: "an ntfy topic (letters, digits, _ and -)",
            }),
          ),
          token_env: z.optional(text()),
          token_file: z.optional(text()),
          // Where a page's `http` actions publish a person's answer (DESIGN §8); read by
          // every tick (a poll) and by `watch` (a stream), never a port of ours.
          control_topic: z.optional(
            z.string().check(
              z.regex(/^[A-Za-z0-9_-]{1,64}$/, {
                message: "an ntfy topic (letters, digits, _ and -)",
              }),
            ),
          ),
        }),
      ),
      cooldown: duration(DEFAULTS.page.cooldown),
      remind_every: duration(DEFAULTS.page.remind_every),
      reminders: z._default(
        z
          .number({ message: "a whole number, 0 or more" })
          .check(
            z.int({ message: "a whole number, 0 or more" }),
            z.gte(0, { message: "a whole number, 0 or more" }),
          ),
        DEFAULTS.page.reminders,
      ),
      heartbeat_url: z.optional(httpUrl()),
      /** Whether pages may quote the manager's screen (blocked, start_failed); default true. */
      screen: z._default(z.boolean({ message: "true or false" }), true),
    }),
  ),
});

/** The validated program.json, defaults filled in, `~` not yet expanded. */
export type ProgramConfig = z.infer<typeof programSchema>;
