// Helpers for the tmux and herdr launcher tests: programs, a recording fake manager, the
// Herdr stand-in's log and state, and a small JSON-schema check against Herdr's published schema.
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { openProgramAt, type ProgramContext } from "../../src/config/context.js";
import type { LaunchRequest } from "../../src/launch/types.js";
import { PYTHON3, tempDir, tempProgram } from "./cli.js";
import { FIXTURES } from "./fixtures.js";

/**
 * The folder to put first on PATH for the Herdr stand-in `herdr`: test/bin, whose `herdr` is a
 * python script run by /usr/bin/python3 (its shebang: the system's own python, never a version
 * manager's shim, which costs ten times python's start). Where there is no /usr/bin/python3, a
 * folder whose `herdr` runs test/bin/herdr with PYTHON3, the first python3 on PATH.
 */
export const TEST_BIN = standinBin(resolve("test/bin"));

/** `bin` itself, or, given a python to run it with, a new folder whose `herdr` runs bin/herdr. */
export function standinBin(
  bin: string,
  python = existsSync("/usr/bin/python3") ? null : PYTHON3,
): string {
  if (python === null) return bin;
  const dir = tempDir("sheepdog-herdr-bin-");
  const real = join(bin, "herdr");
  // A python file (no sh between: sh would put its own PWD in the agents' environment) that
  // runs the real one as itself.
  writeFileSync(
    join(dir, "herdr"),
    `#!${python} -IS\n__file__ = ${JSON.stringify(real)}\nexec(compile(open(__file__, encoding="utf-8").read(), __file__, "exec"))\n`,
  );
  chmodSync(join(dir, "herdr"), 0o755);
  return dir;
}

export const HERDR_SCHEMA = join(FIXTURES, "herdr", "herdr-api.schema.json");

/** A program on disk, loaded as the watchdog would load it. */
export function programWith(name: string, config: Record<string, unknown>): ProgramContext {
  const p = tempProgram(name, config);
  return openProgramAt(p.root, { create: true });
}

export function requestFor(
  program: ProgramContext,
  reason = "the last manager died",
): LaunchRequest {
  const prompt = `Read ${program.root}/MANAGER-PROMPT.md and follow it. You were started by sheepdog: ${reason}.`;
  return { program, reason, prompt, launchBegan: Date.now() };
}

/**
 * A fake manager: writes its argv, cwd and environment to `$RECORD_TO` (or the file named by
 * its first argument when that is `--record=FILE`), then stays alive. CommonJS, so it runs
 * extensionless from any folder (the Herdr stand-in starts it as `claude` from PATH).
 */
export const RECORDER_SOURCE = `#!/usr/bin/env node
const fs = require("node:fs");
const out = process.env.RECORD_TO;
if (out) {
  const rec = { argv: process.argv.slice(2), cwd: process.cwd(), pid: process.pid, env: process.env };
  fs.writeFileSync(out + ".tmp", JSON.stringify(rec));
  fs.renameSync(out + ".tmp", out);
}
setInterval(() => {}, 1 << 30);
`;

/** Writes the recorder as `dir/name`, executable. */
export function writeRecorder(dir: string, name = "claude"): string {
  const path = join(dir, name);
  writeFileSync(path, RECORDER_SOURCE);
  chmodSync(path, 0o755);
  return path;
}

export interface Recorded {
  argv: string[];
  cwd: string;
  pid: number;
  env: Record<string, string>;
}

export { waitFor } from "./poll.js";

export function readRecord(path: string): Recorded | null {
  if (!existsSync(path)) return null;
  return JSON.parse(readFileSync(path, "utf8")) as Recorded;
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const state = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0];
    return state !== "Z" && state !== "X"; // a zombie (exited, not yet reaped) is dead
  } catch {
    // Gone between the two looks on Linux; elsewhere there is no /proc to ask.
    return process.platform !== "linux";
  }
}

export function killGroup(pid: number): void {
  for (const target of [-pid, pid]) {
    try {
      process.kill(target, "SIGKILL");
      return;
    } catch {
      // try the next
    }
  }
}

export interface StandinCall {
  at: string;
  argv: string[];
  exit: number;
  violations: string[];
}

export function standinLog(path: string): StandinCall[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as StandinCall);
}

// ---- a small JSON-schema check (the subset herdr-api.schema.json uses) ----

type Schema = Record<string, unknown>;

function resolveRef(root: Schema, ref: string): Schema {
  // "#/schemas/success_response/$defs/AgentInfo"
  let node: unknown = root;
  for (const part of ref.replace(/^#\//, "").split("/")) node = (node as Schema)[part];
  if (!node) throw new Error(`unresolved $ref ${ref}`);
  return node as Schema;
}

function typeOk(t: string, v: unknown): boolean {
  switch (t) {
    case "null":
      return v === null;
    case "string":
      return typeof v === "string";
    case "boolean":
      return typeof v === "boolean";
    case "integer":
      return Number.isInteger(v);
    case "number":
      return typeof v === "number";
    case "array":
      return Array.isArray(v);
    case "object":
      return typeof v === "object" && v !== null && !Array.isArray(v);
    default:
      return true;
  }
}

/** Problems of `value` against `schema` (empty when it conforms). */
export function schemaProblems(root: Schema, schema: Schema, value: unknown, at = "$"): string[] {
  if (typeof schema.$ref === "string")
    return schemaProblems(root, resolveRef(root, schema.$ref), value, at);
  const problems: string[] = [];
  if (schema.type !== undefined) {
    const types = Array.isArray(schema.type) ? (schema.type as string[]) : [schema.type as string];
    if (!types.some((t) => typeOk(t, value)))
      return [`${at}: expected ${types.join("|")}, got ${JSON.stringify(value)}`];
  }
  if ("const" in schema && value !== schema.const)
    problems.push(`${at}: expected ${JSON.stringify(schema.const)}`);
  if (Array.isArray(schema.enum) && !schema.enum.includes(value))
    problems.push(`${at}: expected one of ${schema.enum.join(", ")}, got ${JSON.stringify(value)}`);
  for (const key of ["anyOf", "oneOf"] as const) {
    const options = schema[key] as Schema[] | undefined;
    if (!options) continue;
    const fits = options.map((o) => schemaProblems(root, o, value, at));
    if (!fits.some((f) => f.length === 0))
      problems.push(`${at}: matches none of ${key} (${fits.map((f) => f[0]).join(" / ")})`);
  }
  if (typeOk("object", value) && schema.properties) {
    const obj = value as Record<string, unknown>;
    for (const req of (schema.required as string[] | undefined) ?? [])
      if (!(req in obj)) problems.push(`${at}: missing required "${req}"`);
    for (const [k, sub] of Object.entries(schema.properties as Record<string, Schema>))
      if (k in obj && sub && typeof sub === "object")
        problems.push(...schemaProblems(root, sub, obj[k], `${at}.${k}`));
  }
  if (Array.isArray(value) && schema.items && typeof schema.items === "object")
    value.forEach((item, i) => {
      problems.push(...schemaProblems(root, schema.items as Schema, item, `${at}[${i}]`));
    });
  return problems;
}

/** Checks a whole answer line against `success_response` or `error_response`. */
export function answerProblems(
  text: string,
  kind: "success_response" | "error_response",
): string[] {
  const root = JSON.parse(readFileSync(HERDR_SCHEMA, "utf8")) as Schema;
  const schema = (root.schemas as Record<string, Schema>)[kind] as Schema;
  return schemaProblems(root, schema, JSON.parse(text));
}
