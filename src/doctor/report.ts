import { shownLine } from "../util/sanitize.js";
import type { Check } from "./checks.js";

/** `doctor --json`: one document; `ok` is false when any check failed. */
export function jsonReport(checks: Check[]): string {
  return `${JSON.stringify({ checks, ok: !checks.some((c) => c.status === "fail") })}\n`;
}

/** Human output: one aligned line a check, the fix indented under it, a one-line tally. */
export function humanReport(checks: Check[]): string {
  const who = (c: Check) => c.program ?? "-";
  const w1 = Math.max(...checks.map((c) => who(c).length));
  const w2 = Math.max(...checks.map((c) => c.check.length));
  const lines: string[] = [];
  // A fix shown once (the seat's settings snippet answers four checks) is not printed again.
  const shown = new Map<string, string>();
  for (const c of checks) {
    // A detail names folders and quotes files: one line each, whatever they hold.
    lines.push(
      `${c.status.padEnd(4)}  ${who(c).padEnd(w1)}  ${c.check.padEnd(w2)}  ${shownLine(c.detail)}`,
    );
    if (!c.fix) continue;
    const first = shown.get(c.fix);
    lines.push(
      `${" ".repeat(4 + 2 + w1 + 2 + w2 + 2)}fix: ${first ? `the same as for ${first} above` : shownLine(c.fix)}`,
    );
    if (!first) shown.set(c.fix, c.check);
  }
  const failed = checks.filter((c) => c.status === "fail").length;
  const warned = checks.filter((c) => c.status === "warn").length;
  lines.push(
    failed || warned
      ? `${failed} failed, ${warned} warning${warned === 1 ? "" : "s"}, ${checks.length - failed - warned} ok`
      : `all ${checks.length} checks ok`,
  );
  return `${lines.join("\n")}\n`;
}
