// The one read-JSON-validate-or-null of the state files sheepdog keeps (DESIGN §2: every file
// it reads goes through zod): a file that is absent, torn, not JSON or refused by its schema is
// not there, for every reader alike. Loaded by hot commands too: it brings no zod of its own.
import { readFileSync } from "node:fs";
import type * as z from "zod/mini";

/** `text` as JSON that `schema` accepts (its output: fallbacks filled in), or null. */
export function parseJsonWith<T>(text: string, schema: z.ZodMiniType<T>): T | null {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return null;
  }
  const parsed = schema.safeParse(raw);
  return parsed.success ? parsed.data : null;
}

/** The file at `path` as parseJsonWith reads its text; null when it cannot be read at all. */
export function readJsonFile<T>(path: string, schema: z.ZodMiniType<T>): T | null {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    return null;
  }
  return parseJsonWith(text, schema);
}
