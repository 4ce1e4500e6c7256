/**
 * A small XML property-list writer (and a reader for the same subset), so a launchd agent is
 * always built from a typed object and serialised with escaping, never pasted together as text.
 */

/** An integer in a property list (`<integer>`); plain numbers are refused to keep types honest. */
export interface PlistInteger {
  readonly integer: number;
}

export type PlistValue =
  | string
  | boolean
  | PlistInteger
  | readonly PlistValue[]
  | { readonly [key: string]: PlistValue | undefined };

export function int(n: number): PlistInteger {
  if (!Number.isSafeInteger(n)) throw new Error(`plist integer: not an integer: ${n}`);
  return { integer: n };
}

function isInteger(v: PlistValue): v is PlistInteger {
  return (
    typeof v === "object" &&
    v !== null &&
    !Array.isArray(v) &&
    Object.keys(v).length === 1 &&
    typeof (v as { integer?: unknown }).integer === "number"
  );
}

// XML 1.0 cannot carry most control characters at all, not even escaped.
// biome-ignore lint/suspicious/noControlCharactersInRegex: that is exactly what it looks for
const FORBIDDEN = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/;

export function escapeXml(text: string): string {
  if (FORBIDDEN.test(text))
    throw new Error(`plist string: control character in ${JSON.stringify(text)}`);
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

function serialise(value: PlistValue, indent: string, out: string[]): void {
  const inner = `${indent}\t`;
  if (typeof value === "string") out.push(`${indent}<string>${escapeXml(value)}</string>`);
  else if (typeof value === "boolean") out.push(`${indent}<${value ? "true" : "false"}/>`);
  else if (isInteger(value)) out.push(`${indent}<integer>${value.integer}</integer>`);
  else if (Array.isArray(value)) {
    out.push(`${indent}<array>`);
    for (const item of value as readonly PlistValue[]) serialise(item, inner, out);
    out.push(`${indent}</array>`);
  } else {
    out.push(`${indent}<dict>`);
    for (const [key, item] of Object.entries(value as Record<string, PlistValue | undefined>)) {
      if (item === undefined) continue; // an optional key left out
      out.push(`${inner}<key>${escapeXml(key)}</key>`);
      serialise(item, inner, out);
    }
    out.push(`${indent}</dict>`);
  }
}

/**
 * The XML text of a property list. `comment` (one line, no `--`) goes before the root element:
 * it is how `uninstall` recognises a file sheepdog wrote.
 */
export function writePlist(root: PlistValue, comment?: string): string {
  const out = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">',
  ];
  if (comment !== undefined) {
    if (comment.includes("--") || comment.includes("\n") || comment.endsWith("-"))
      throw new Error("plist comment: may not contain -- or a newline");
    out.push(`<!-- ${comment} -->`);
  }
  out.push('<plist version="1.0">');
  serialise(root, "", out);
  out.push("</plist>", "");
  return out.join("\n");
}

/** A value read back from a plist: plain numbers for integers and reals. */
export type ParsedPlist =
  | string
  | number
  | boolean
  | ParsedPlist[]
  | { [key: string]: ParsedPlist };

function unescapeXml(text: string): string {
  return text.replace(/&(amp|lt|gt|quot|apos|#x[0-9a-fA-F]+|#\d+);/g, (_, e: string) => {
    if (e === "amp") return "&";
    if (e === "lt") return "<";
    if (e === "gt") return ">";
    if (e === "quot") return '"';
    if (e === "apos") return "'";
    return String.fromCodePoint(
      e[1] === "x" ? Number.parseInt(e.slice(2), 16) : Number(e.slice(1)),
    );
  });
}

/**
 * Reads the subset of XML property lists that `writePlist` produces (plus `<real>`, empty
 * elements and entity references), for `doctor` and `uninstall` to look inside an installed
 * agent. Throws on anything else; callers treat that as "not a file of ours".
 */
export function parsePlist(text: string): ParsedPlist {
  const tokens = [
    ...text
      .replace(/<\?[\s\S]*?\?>/g, "")
      .replace(/<!--[\s\S]*?-->/g, "")
      .replace(/<!DOCTYPE[^>]*>/g, "")
      .matchAll(/<(\/?)([A-Za-z]+)[^>]*?(\/?)>|([^<]+)/g),
  ].map((m) =>
    m[4] !== undefined
      ? { text: m[4] }
      : { tag: m[2] as string, close: m[1] === "/", empty: m[3] === "/" },
  );
  let i = 0;
  const next = () => {
    // whitespace between elements carries nothing
    for (let t = tokens[i]; t && "text" in t && !t.text?.trim(); t = tokens[++i]);
    const t = tokens[i++];
    if (!t) throw new Error("plist: unexpected end");
    return t;
  };
  const textUntil = (tag: string): string => {
    let s = "";
    for (;;) {
      const t = tokens[i++];
      if (!t) throw new Error(`plist: unterminated <${tag}>`);
      if ("text" in t) s += t.text;
      else if (t.close && t.tag === tag) return unescapeXml(s);
      else throw new Error(`plist: unexpected <${t.tag}> inside <${tag}>`);
    }
  };
  const value = (t: ReturnType<typeof next>): ParsedPlist => {
    if ("text" in t || t.close) throw new Error("plist: expected a value");
    switch (t.tag) {
      case "true":
      case "false":
        if (!t.empty && textUntil(t.tag).trim()) throw new Error(`plist: <${t.tag}> with content`);
        return t.tag === "true";
      case "string":
        return t.empty ? "" : textUntil("string");
      case "integer":
      case "real": {
        const n = Number(textUntil(t.tag).trim());
        if (!Number.isFinite(n)) throw new Error(`plist: bad <${t.tag}>`);
        return n;
      }
      case "array": {
        const items: ParsedPlist[] = [];
        if (t.empty) return items;
        for (;;) {
          const u = next();
          if (!("text" in u) && u.close && u.tag === "array") return items;
          items.push(value(u));
        }
      }
      case "dict": {
        const dict: Record<string, ParsedPlist> = {};
        if (t.empty) return dict;
        for (;;) {
          const u = next();
          if (!("text" in u) && u.close && u.tag === "dict") return dict;
          if ("text" in u || u.tag !== "key") throw new Error("plist: expected <key> in <dict>");
          const key = textUntil("key");
          dict[key] = value(next());
        }
      }
      default:
        throw new Error(`plist: unsupported element <${t.tag}>`);
    }
  };
  const open = next();
  if ("text" in open || open.tag !== "plist") throw new Error("plist: no <plist> root");
  const root = value(next());
  const close = next();
  if ("text" in close || !close.close || close.tag !== "plist")
    throw new Error("plist: trailing content");
  return root;
}
