import { parseArgs } from "node:util";
import { UsageError } from "../errors.js";
import { nearest } from "./nearest.js";

type Options = NonNullable<Parameters<typeof parseArgs>[0]>["options"];

/** node:util parseArgs with errors turned into exit-2 usage errors naming the command. */
export function parseCommandArgs<O extends Options>(
  command: string,
  argv: string[],
  options: O,
  allowPositionals = true,
) {
  try {
    return parseArgs({ args: argv, options: options as O, allowPositionals, strict: true });
  } catch (err) {
    let text = (err as Error).message.replace(/\. To specify .*$/s, "");
    const unknown = /^Unknown option '(-{1,2}[^']+)'/.exec(text)?.[1];
    if (unknown) {
      const names = Object.keys(options ?? {}).map((n) => `--${n}`);
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
