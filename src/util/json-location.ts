/**
 * Finds where JSON text stops being valid, as a 1-based line and column. V8's messages
 * do not always carry a position, so this scans the text itself.
 */
export function jsonErrorLocation(text: string): { line: number; column: number; offset: number } {
  const offset = findErrorOffset(text);
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text[i] === "\n") {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: offset - lineStart + 1, offset };
}

class Stop {
  constructor(readonly at: number) {}
}

function findErrorOffset(text: string): number {
  const scan = new JsonScanner(text);
  try {
    scan.value();
    scan.ws();
    if (scan.i < text.length) scan.fail();
    return text.length;
  } catch (err) {
    if (err instanceof Stop) return Math.min(err.at, text.length);
    throw err;
  }
}

/** A strict JSON recogniser that throws `Stop` at the first offset that cannot be JSON. */
class JsonScanner {
  i = 0;
  constructor(private readonly text: string) {}

  fail(): never {
    throw new Stop(this.i);
  }

  ws(): void {
    while (this.i < this.text.length && " \t\r\n".includes(this.text[this.i] as string)) this.i++;
  }

  value(): void {
    this.ws();
    const ch = this.text[this.i];
    if (ch === "{") this.object();
    else if (ch === "[") this.array();
    else if (ch === '"') this.string();
    else if (ch === "t") this.literal("true");
    else if (ch === "f") this.literal("false");
    else if (ch === "n") this.literal("null");
    else this.number();
  }

  private object(): void {
    const text = this.text;
    this.i++;
    this.ws();
    if (text[this.i] === "}") {
      this.i++;
      return;
    }
    for (;;) {
      this.ws();
      if (text[this.i] !== '"') this.fail();
      this.string();
      this.ws();
      if (text[this.i] !== ":") this.fail();
      this.i++;
      this.value();
      if (this.endOfItem("}")) return;
    }
  }

  private array(): void {
    this.i++;
    this.ws();
    if (this.text[this.i] === "]") {
      this.i++;
      return;
    }
    for (;;) {
      this.value();
      if (this.endOfItem("]")) return;
    }
  }

  /** After an item: a comma (more follow, false) or the closing bracket (true). */
  private endOfItem(close: string): boolean {
    this.ws();
    const ch = this.text[this.i];
    if (ch === "," || ch === close) {
      this.i++;
      return ch === close;
    }
    return this.fail();
  }

  private literal(word: string): void {
    for (const ch of word) {
      if (this.text[this.i] !== ch) this.fail();
      this.i++;
    }
  }

  private string(): void {
    const text = this.text;
    this.i++; // opening quote
    while (this.i < text.length) {
      const ch = text[this.i] as string;
      if (ch === '"') {
        this.i++;
        return;
      }
      if (ch === "\\") this.escape();
      else if (ch < " ") this.fail();
      else this.i++;
    }
    this.fail();
  }

  private escape(): void {
    const text = this.text;
    this.i++;
    const esc = text[this.i];
    if (esc === "u") {
      for (let k = 1; k <= 4; k++) if (!/[0-9a-fA-F]/.test(text[this.i + k] ?? "")) this.fail();
      this.i += 5;
    } else if (esc !== undefined && '"\\/bfnrt'.includes(esc)) this.i++;
    else this.fail();
  }

  private number(): void {
    const m = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(this.text.slice(this.i));
    if (!m) this.fail();
    this.i += m[0].length;
  }
}
