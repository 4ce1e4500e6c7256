// Every usage-limit refusal Claude Code 2.1.328 and 2.1.332 print, and the 429 headers that make
// each one (read from the CLI's own message builder, `strings` on bin/claude.exe, and checked on
// the real CLI: test/claude-limits-2.1.332.test.ts). A subscriber (CLAUDE_CODE_OAUTH_TOKEN)
// builds the message only when a 429 carries `…-representative-claim`, `…-overage-status` or
// `…-overage-daily-cap-paused: true`; otherwise it prints "Server is temporarily limiting
// requests (not your usage limit)". The reset it prints is `…-unified-reset`, rounded down to
// the minute, in the local zone.
//
// No per-window utilization headers are sent (`…-5h-utilization` and the like): the statusline
// then has no 100 % reading of its own, so a pause can only come from the refusal.

const H = "anthropic-ratelimit-unified-";

export interface LimitCase {
  id: string;
  /** What the headers say, in words. */
  what: string;
  headers(resetSec: number): Record<string, string>;
  /** The text `claude -p` prints (and writes in the transcript's synthetic entry). */
  text: RegExp;
  /** `apiErrorParams.rate_limit_info.rateLimitType` (null: none; undefined: no such entry). */
  limitType: string | null | undefined;
  /** The reading's window: five_hour, or seven_day for every other type (DESIGN §5). */
  window: "five_hour" | "seven_day";
  /** Whether the text names a reset; a refusal naming none pauses for usage.pause_fallback. */
  namesReset: boolean;
  /** What a person is told to do, when the refusal names no reset. */
  needsPerson?: RegExp;
  /** False for the 429 that is not a usage limit (c14). */
  limit: boolean;
  /** Where the reset lies from now: minutes (a five-hour family) or days (the dialog). */
  resetIn: "minutes" | "days";
}

const rejected = (reset: number, extra: Record<string, string>) => ({
  [`${H}status`]: "rejected",
  [`${H}reset`]: String(reset),
  ...extra,
});
const claim =
  (type: string, more: Record<string, string> = {}) =>
  (reset: number) =>
    rejected(reset, { [`${H}representative-claim`]: type, ...more });
const overage = (reason?: string, more: Record<string, string> = {}) => ({
  [`${H}overage-status`]: "rejected",
  ...(reason ? { [`${H}overage-disabled-reason`]: reason } : {}),
  ...more,
});

/** A clock reset as the CLI prints it, in UTC: `12:25pm (UTC)` or `Dec 5, 6:58pm (UTC)`. */
const CLOCK = String.raw`\d{1,2}(?::\d\d)?[ap]m \(UTC\)`;
const DATED = String.raw`[A-Z][a-z]{2} \d{1,2}, ${CLOCK}`;
const re = (s: string) => new RegExp(`^${s}$`);

export const LIMIT_CASES: LimitCase[] = [
  {
    id: "c01",
    what: "claim five_hour",
    headers: claim("five_hour"),
    text: re(`You've hit your 5-hour limit · resets ${CLOCK}`),
    limitType: "five_hour",
    window: "five_hour",
    namesReset: true,
    limit: true,
    resetIn: "minutes",
  },
  {
    id: "c02",
    what: "claim seven_day",
    headers: claim("seven_day"),
    text: re(`You've hit your weekly limit · resets ${DATED}`),
    limitType: "seven_day",
    window: "seven_day",
    namesReset: true,
    limit: true,
    resetIn: "days",
  },
  {
    id: "c03",
    what: "claim seven_day_opus",
    headers: claim("seven_day_opus"),
    text: re(`You've hit your Opus limit · resets ${DATED}`),
    limitType: "seven_day_opus",
    window: "seven_day",
    namesReset: true,
    limit: true,
    resetIn: "days",
  },
  {
    id: "c04",
    what: "claim seven_day_sonnet",
    headers: claim("seven_day_sonnet"),
    text: re(`You've hit your Sonnet limit · resets ${DATED}`),
    limitType: "seven_day_sonnet",
    window: "seven_day",
    namesReset: true,
    limit: true,
    resetIn: "days",
  },
  {
    id: "c05",
    what: "claim seven_day_overage_included",
    headers: claim("seven_day_overage_included"),
    // -p adds the last sentence; the interactive CLI does not.
    text: re(
      `You've hit your Fable limit · resets ${DATED}(?:\\. Switch to another model to continue\\.)?`,
    ),
    limitType: "seven_day_overage_included",
    window: "seven_day",
    namesReset: true,
    limit: true,
    resetIn: "days",
  },
  {
    id: "c06",
    what: "claim five_hour, overage rejected, reason out_of_credits",
    headers: claim("five_hour", overage("out_of_credits")),
    text: re(`You've hit your 5-hour limit · resets ${CLOCK}`),
    limitType: "five_hour",
    window: "five_hour",
    namesReset: true,
    limit: true,
    resetIn: "minutes",
  },
  {
    id: "c07",
    what: "claim overage, overage rejected, reason out_of_credits",
    headers: claim("overage", overage("out_of_credits")),
    text: re(`You're out of usage credits · resets ${CLOCK}`),
    limitType: "overage",
    window: "seven_day",
    namesReset: true,
    limit: true,
    resetIn: "minutes",
  },
  {
    id: "c08",
    what: "claim five_hour, overage rejected",
    headers: claim("five_hour", overage()),
    text: re(`You've hit your limit · resets ${CLOCK}`),
    limitType: "five_hour",
    window: "five_hour",
    namesReset: true,
    limit: true,
    resetIn: "minutes",
  },
  {
    id: "c09",
    what: "claim five_hour, overage rejected, reason org_spend_cap_reached",
    headers: claim("five_hour", overage("org_spend_cap_reached")),
    text: re(
      `You've hit your individual spend limit · ask your admin to raise it at https://claude\\.ai/admin-settings/usage · your 5-hour limit resets ${CLOCK}`,
    ),
    limitType: "five_hour",
    window: "five_hour",
    namesReset: true,
    limit: true,
    resetIn: "minutes",
  },
  {
    id: "c10",
    what: "claim five_hour, reason org_level_disabled_until",
    headers: claim("five_hour", {
      [`${H}overage-disabled-reason`]: "org_level_disabled_until",
    }),
    text: re(
      `You've hit your org's monthly spend limit · ask your admin to raise it at https://claude\\.ai/admin-settings/usage · your 5-hour limit resets ${CLOCK}`,
    ),
    limitType: "five_hour",
    window: "five_hour",
    namesReset: true,
    limit: true,
    resetIn: "minutes",
  },
  {
    id: "c11",
    what: "claim overage, reason org_level_disabled_until",
    headers: claim("overage", overage("org_level_disabled_until")),
    text: re(
      "You've hit your org's monthly spend limit · ask your admin to raise it at https://claude\\.ai/admin-settings/usage",
    ),
    limitType: "overage",
    window: "seven_day",
    namesReset: false,
    needsPerson: /^ask your admin to raise it at https:\/\/claude\.ai\/admin-settings\/usage$/,
    limit: true,
    resetIn: "minutes",
  },
  {
    id: "c12",
    what: "claim five_hour, overage scope group_pool",
    headers: claim("five_hour", { [`${H}overage-scope`]: "group_pool" }),
    text: re(
      `You've hit your team's pooled group budget · ask your admin to raise it at https://claude\\.ai/admin-settings/usage · your 5-hour limit resets ${CLOCK}`,
    ),
    limitType: "five_hour",
    window: "five_hour",
    namesReset: true,
    limit: true,
    resetIn: "minutes",
  },
  {
    id: "c13",
    what: "overage-daily-cap-paused: true",
    headers: (reset) => rejected(reset, { [`${H}overage-daily-cap-paused`]: "true" }),
    text: re("Usage is paused for your organization\\. For help, please contact support\\."),
    limitType: null,
    window: "seven_day",
    namesReset: false,
    needsPerson: /^For help, please contact support\.$/,
    limit: true,
    resetIn: "minutes",
  },
  {
    id: "c14",
    what: "rejected, no claim, no overage status",
    headers: (reset) => rejected(reset, {}),
    text: /^API Error: Server is temporarily limiting requests \(not your usage limit\)/,
    limitType: undefined,
    window: "five_hour",
    namesReset: false,
    limit: false,
    resetIn: "minutes",
  },
];

export const limitCase = (id: string): LimitCase => {
  const c = LIMIT_CASES.find((x) => x.id === id);
  if (!c) throw new Error(`no limit case ${id}`);
  return c;
};

/**
 * A reset 40 minutes ahead (`minutes`: auto-continue territory) or 3 days ahead (`days`: more
 * than a day away, so the interactive CLI draws its limit dialog), 25 s into its minute: the
 * text's reset (rounded down to the minute) and the header's differ by 25 s, so a reading from
 * the text can be told from the structured one.
 */
export function resetIn(kind: "minutes" | "days", now = Date.now()): number {
  const ahead = kind === "minutes" ? 40 * 60 : 3 * 86_400;
  return Math.floor((now / 1000 + ahead) / 60) * 60 + 25;
}
