// Runs Herdr's CLI (argv arrays, no shell) and validates its JSON answers.
import type * as z from "zod/mini";
import { RuntimeFailure } from "../errors.js";
import { firstLine, runTool, type ToolResult } from "../process/run-tool.js";
import { errorResponse, successResponse } from "./herdr-schema.js";

/** Room on top of a wait's own `--timeout` before we give up on the process itself. */
const MARGIN_MS = 15_000;
const QUICK_MS = 20_000;

/** Herdr answered with an error object: its code and message, and the command that got it. */
export class HerdrError extends RuntimeFailure {
  constructor(
    readonly command: string,
    readonly code: string,
    readonly herdrMessage: string,
  ) {
    super(`${command}: Herdr error ${code}: ${herdrMessage}`);
    this.name = "HerdrError";
  }
}

function clip(text: string, max = 200): string {
  const t = text.trim();
  return t.length > max ? `${t.slice(0, max)}…` : t;
}

function fieldPath(path: readonly PropertyKey[]): string {
  return path.map((p) => (typeof p === "number" ? `[${p}]` : `.${String(p)}`)).join("");
}

/** The process-level outcome: throws for a failure to run, a usage error or an error answer. */
function checkExit(command: string, r: ToolResult): void {
  if (r.spawnError)
    throw new RuntimeFailure(
      `${command}: cannot run herdr (${r.spawnError}); is Herdr installed and on PATH?`,
    );
  if (r.timedOut) throw new RuntimeFailure(`${command}: herdr did not answer in time`);
  if (r.code === 0) return;
  if (r.code === 2)
    throw new RuntimeFailure(
      `${command}: herdr rejected the command line (exit 2): ${firstLine(r.stderr) || "no message"}`,
    );
  let raw: unknown;
  try {
    raw = JSON.parse(r.stderr.trim() || r.stdout.trim());
  } catch {
    throw new RuntimeFailure(
      `${command}: herdr failed (exit ${r.code}): ${firstLine(r.stderr) || "no message"}`,
    );
  }
  const parsed = errorResponse.safeParse(raw);
  if (!parsed.success)
    throw new RuntimeFailure(
      `${command}: herdr failed (exit ${r.code}) with an answer that is not an error object: ${clip(r.stderr)}`,
    );
  throw new HerdrError(command, parsed.data.error.code, parsed.data.error.message);
}

export interface HerdrCall {
  /** How the command is named in errors, e.g. `herdr agent start manager`. */
  command: string;
  args: string[];
  /** The `--timeout` the command waits with, if any; the process gets a margin on top. */
  waitMs?: number;
  /** herdr's environment (default this process's); launchers pass it without the page token. */
  env?: NodeJS.ProcessEnv;
}

/** Runs herdr and returns its stdout (for commands that print text, like `agent read`). */
export async function herdrText(call: HerdrCall): Promise<string> {
  const r = await runTool("herdr", call.args, {
    timeoutMs: call.waitMs !== undefined ? call.waitMs + MARGIN_MS : QUICK_MS,
    ...(call.env ? { env: call.env } : {}),
  });
  checkExit(call.command, r);
  return r.stdout;
}

/** Runs herdr and validates `.result` of its JSON answer with `schema`. */
export async function herdrJson<S extends z.ZodMiniType>(
  call: HerdrCall,
  schema: S,
): Promise<z.infer<S>> {
  const out = await herdrText(call);
  let raw: unknown;
  try {
    raw = JSON.parse(out);
  } catch {
    throw new RuntimeFailure(
      `${call.command}: herdr's answer is not JSON: ${clip(out) || "(empty)"}`,
    );
  }
  const envelope = successResponse.safeParse(raw);
  if (!envelope.success || envelope.data.result === undefined)
    throw new RuntimeFailure(
      `${call.command}: herdr's answer has no "result" object: ${clip(out)}`,
    );
  const parsed = schema.safeParse(envelope.data.result);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue ? `.result${fieldPath(issue.path)}` : ".result";
    throw new RuntimeFailure(
      `${call.command}: unexpected answer from herdr at ${where}: ${issue?.message ?? "invalid"}`,
    );
  }
  return parsed.data;
}
