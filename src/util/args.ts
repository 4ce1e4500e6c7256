import { parseArgs } from "node:util";
import {
  COMMAND_SPECS,
  type CommandName,
  type CommandSpec,
  type OptionValues,
  parserOptions,
  type When,
} from "../cli-spec.js";
import { UsageError } from "../errors.js";
import { DURATION_EXPECTED, isDuration, isPositiveDuration, parseDuration } from "./duration.js";
import { nearest } from "./nearest.js";

/**
 * node:util parseArgs over the options `cli-spec.ts` lists for `command`, with errors turned
 * into exit-2 usage errors naming the command.
 */
export function parseCommandArgs<C extends CommandName>(
  command: C,
  argv: string[],
): { values: OptionValues<C>; positionals: string[] } {
  const options = parserOptions(command);
  const spec: CommandSpec = COMMAND_SPECS[command];
  const allowPositionals = spec.positionals === true;
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args: argv, options, allowPositionals, strict: true });
  } catch (err) {
    let text = (err as Error).message.replace(/\. To specify .*$/s, "");
    const unknown = /^Unknown option '(-{1,2}[^']+)'/.exec(text)?.[1];
    if (unknown) {
      const names = Object.keys(options).map((n) => `--${n}`);
      const near = nearest(unknown.replace(/=.*$/, ""), names);
      text = `unknown option ${unknown}${near ? ` (did you mean ${near}?)` : ""}; sheepdog ${command} --help lists them`;
    }
    throw new UsageError(`sheepdog ${command}: ${text}`);
  }
  const values: Record<string, unknown> = { ...parsed.values };
  for (const [name, o] of Object.entries(spec.options)) {
    const text = values[name];
    if (typeof text !== "string") continue;
    if (o.type === "duration") values[name] = durationOption(name, text);
    else if (o.type === "when") values[name] = whenOption(name, text);
  }
  return { values: values as OptionValues<C>, positionals: parsed.positionals };
}

/** A `duration` option's value in ms: a positive duration, or exit 2 saying what was expected. */
export function durationOption(name: string, text: string): number {
  if (!isPositiveDuration(text))
    throw new UsageError(`--${name}: expected ${DURATION_EXPECTED}, got ${JSON.stringify(text)}`);
  return parseDuration(text);
}

/** A `when` option's value: a duration (from now, either way: the command's) or an ISO-8601 time. */
export function whenOption(name: string, text: string): When {
  if (isDuration(text)) return { duration: parseDuration(text) };
  const at = /^\d{4}-\d{2}-\d{2}/.test(text) ? Date.parse(text) : Number.NaN;
  if (Number.isNaN(at))
    throw new UsageError(
      `--${name}: expected a duration such as 2h or an ISO-8601 time such as 2026-11-30T18:00:00Z, got ${JSON.stringify(text)}`,
    );
  return { at };
}

/** A `when` as a moment: `now` less its duration (`--since`), or plus it (`--until`). */
export function whenAt(w: When, now: number, direction: "back" | "ahead"): number {
  if ("at" in w) return w.at;
  return direction === "back" ? now - w.duration : now + w.duration;
}

/** Parses `--pid N`. */
export function pidOption(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || Number(value) <= 0)
    throw new UsageError(`--pid: expected a positive integer, got ${JSON.stringify(value)}`);
  return Number(value);
}
