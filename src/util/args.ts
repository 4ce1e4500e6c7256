import { parseArgs } from "node:util";
import {
  COMMAND_SPECS,
  type CommandName,
  type CommandSpec,
  type OptionValues,
  parserOptions,
} from "../cli-spec.js";
import { UsageError } from "../errors.js";
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
  try {
    const parsed = parseArgs({ args: argv, options, allowPositionals, strict: true });
    return {
      values: parsed.values as OptionValues<C>,
      positionals: parsed.positionals,
    };
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
}

/** Parses `--pid N`. */
export function pidOption(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || Number(value) <= 0)
    throw new UsageError(`--pid: expected a positive integer, got ${JSON.stringify(value)}`);
  return Number(value);
}
