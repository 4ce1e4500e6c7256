import { shownText } from "../util/sanitize.js";

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
 * newline are shown as `\xNN` by the one output sanitiser (DESIGN §18): they are not allowed in
 * XML, and a journal line can carry anything.
 */
export function escapeHtml(text: string): string {
  return shownText(text).replace(/[&<>"']/g, (ch) => ENTITIES[ch] ?? ch);
}
