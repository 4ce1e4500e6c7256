import type * as z from "zod/mini";
import { nearest } from "../util/nearest.js";
import { programSchema } from "./schema.js";

type Issue = z.core.$ZodIssue;

/** `manager.env.X`, `watchdog.crash_loop.starts`, `(top level)`. */
export function jsonPath(path: readonly PropertyKey[]): string {
  if (path.length === 0) return "(top level)";
  return path.map((p, i) => segment(p, i === 0)).join("");
}

/** `.key`, or `["a key"]` when dots would hide it (an empty key, a space, a dot). */
function segment(p: PropertyKey, first: boolean): string {
  if (typeof p === "number") return `[${p}]`;
  const key = String(p);
  if (!/^[\w$-]+$/.test(key)) return `[${JSON.stringify(key)}]`;
  return first ? key : `.${key}`;
}

function valueAt(raw: unknown, path: readonly PropertyKey[]): unknown {
  let v: unknown = raw;
  for (const p of path) {
    if (v === null || typeof v !== "object") return undefined;
    v = (v as Record<PropertyKey, unknown>)[p];
  }
  return v;
}

function shown(value: unknown): string {
  if (value === undefined) return "nothing";
  // A URL's user name and password never reach an error (it is journaled and paged).
  const s = JSON.stringify(value).replace(/(\/\/)[^/@\s"]*@/g, "$1…@");
  return s.length > 60 ? `${s.slice(0, 57)}...` : s;
}

function kindOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object") return "an object";
  return `${typeof value} ${shown(value)}`;
}

/** The keys a strict object at `path` of the program schema accepts. */
function keysAt(path: readonly PropertyKey[]): string[] {
  // biome-ignore lint/suspicious/noExplicitAny: walking zod's internal definition tree
  let schema: any = programSchema;
  const unwrap = () => {
    while (
      schema?._zod?.def &&
      ["default", "optional", "prefault", "nullable"].includes(schema._zod.def.type)
    ) {
      schema = schema._zod.def.innerType;
    }
  };
  unwrap();
  for (const p of path) {
    schema = schema?._zod?.def?.shape?.[p as string];
    unwrap();
  }
  return Object.keys(schema?._zod?.def?.shape ?? {});
}

/** One line naming the JSON path and what was expected. */
export function describeIssue(issue: Issue, raw: unknown): string {
  const where = jsonPath(issue.path);
  const value = valueAt(raw, issue.path);
  switch (issue.code) {
    case "unrecognized_keys": {
      const valid = keysAt(issue.path);
      return issue.keys
        .map((key) => {
          const at = `${issue.path.length ? where : ""}${segment(key, issue.path.length === 0)}`;
          const guess = nearest(key, valid);
          const hint = guess ? `did you mean "${guess}"?` : `valid keys: ${valid.join(", ")}`;
          return `${at}: unknown key "${key}" (${hint})`;
        })
        .join("\n");
    }
    case "invalid_type": {
      const expected =
        issue.message && issue.message !== "Invalid input"
          ? issue.message
          : describeType(issue.expected);
      if (value === undefined) return `${where}: missing; expected ${expected}`;
      return `${where}: expected ${expected}, got ${kindOf(value)}`;
    }
    case "invalid_value":
      return `${where}: expected one of ${issue.values.map((v) => JSON.stringify(v)).join(", ")}, got ${shown(value)}`;
    default: {
      const expected =
        issue.message && issue.message !== "Invalid input" ? issue.message : "a valid value";
      return `${where}: expected ${expected}, got ${shown(value)}`;
    }
  }
}

function describeType(expected: string): string {
  switch (expected) {
    case "object":
      return "an object";
    case "array":
      return "an array";
    case "int":
      return "a whole number";
    default:
      return `a ${expected}`;
  }
}
