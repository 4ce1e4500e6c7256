const ENTITIES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

/**
 * Text from the journal (reasons, notes, titles a manager or a person wrote) made safe for
 * HTML and SVG, in text and in attribute values alike. Control characters other than tab and
 * newline are dropped: they are not allowed in XML and a journal line can carry anything.
 */
export function escapeHtml(text: string): string {
  let out = "";
  for (const ch of text) {
    const code = ch.codePointAt(0) ?? 0;
    if ((code < 0x20 && ch !== "\t" && ch !== "\n" && ch !== "\r") || code === 0x7f) continue;
    out += ENTITIES[ch] ?? ch;
  }
  return out;
}
