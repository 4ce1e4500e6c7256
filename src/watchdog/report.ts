import type { ProgramReport } from "./tick.js";

/** `{"at", "programs": [...]}` (DESIGN §9): an array even for one program. */
export function jsonReport(at: string, programs: ProgramReport[]): string {
  return `${JSON.stringify({ at, programs })}\n`;
}

/** Aligned columns: every row's cells padded to the widest of their column. */
export function alignRows(rows: string[][]): string {
  const widths: number[] = [];
  for (const row of rows)
    row.forEach((cell, i) => {
      widths[i] = Math.max(widths[i] ?? 0, cell.length);
    });
  return rows
    .map((row) =>
      row
        .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
        .join("  ")
        .trimEnd(),
    )
    .join("\n");
}

/** `catalog  restart_stuck  no save for 47m (stale after 45m); stopped pid 4242, …` */
export function tickLines(programs: ProgramReport[]): string {
  return alignRows(
    programs.map((p) => [
      p.program,
      p.decision,
      [p.reason, p.actions.join(", ")].filter(Boolean).join("; "),
    ]),
  );
}
