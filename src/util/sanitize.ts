// Nothing an agent wrote reaches a terminal raw (DESIGN §18): the one sanitiser every human
// output goes through. A note, a progress text, a hostname or a folder name can hold OSC 52
// (sets the clipboard), OSC 8 (a disguised link), ESC[2J or a lone \r (forged output): each
// control character is shown as `\xNN` instead, so a person sees what is there and the
// terminal acts on none of it.

// C0 (0x00–0x1f), DEL, C1 (0x80–0x9f), and the two Unicode line breaks a terminal or a
// JavaScript reader may take as a new line.
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds
const CONTROLS = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g;
// The same without newline and tab: what a whole block of lines may hold.
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds
const CONTROLS_BUT_LINES = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029]/g;
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds
const CONTROL_RUNS = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g;
// What JSON.stringify leaves raw (it escapes every C0 itself).
const JSON_RAW = /[\u007f-\u009f\u2028\u2029]/g;

function hex(ch: string): string {
  const code = ch.charCodeAt(0);
  return code > 0xff ? `\\u${code.toString(16)}` : `\\x${code.toString(16).padStart(2, "0")}`;
}

/** One line's worth of text (a cell, a field): every control shown, newlines and tabs too. */
export function shownLine(text: string): string {
  return text.replace(CONTROLS, hex);
}

/** A block of lines as a command prints it: every control shown except newline and tab. */
export function shownText(text: string): string {
  return text.replace(CONTROLS_BUT_LINES, hex);
}

/**
 * A JSON document with what JSON.stringify leaves raw (DEL, C1, U+2028/9) written as `\uXXXX`:
 * the very same value for a parser, and nothing for a terminal to act on.
 */
export function shownJson(text: string): string {
  return text.replace(JSON_RAW, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** A line with every control removed, runs of them one space (the statusline's one row). */
export function strippedLine(text: string): string {
  return text.replace(CONTROL_RUNS, " ");
}

type Write = typeof process.stdout.write;

/**
 * Routes everything written to `stream` through `shown` (the output layer's one gate): string
 * chunks only; a Buffer is passed as it is (sheepdog writes none to a terminal).
 */
export function guardStream(stream: NodeJS.WriteStream, shown: (text: string) => string): void {
  const write = stream.write.bind(stream) as Write;
  stream.write = ((chunk: unknown, ...rest: unknown[]) =>
    (write as (c: unknown, ...r: unknown[]) => boolean)(
      typeof chunk === "string" ? shown(chunk) : chunk,
      ...rest,
    )) as Write;
}
