// Human tables fit the terminal (DESIGN §16): the widest columns give way first, each cut cell
// ending in "…"; `--wide` (or output that is not a terminal, with no $COLUMNS) shows all of it.
import { shownLine } from "./sanitize.js";

/** The width human output must fit: the terminal's, else $COLUMNS, else none (Infinity). */
export function outputWidth(wide: boolean | undefined, stream = process.stdout): number {
  if (wide) return Number.POSITIVE_INFINITY;
  if (stream.isTTY && stream.columns) return stream.columns;
  const env = Number(process.env.COLUMNS);
  return Number.isInteger(env) && env > 0 ? env : Number.POSITIVE_INFINITY;
}

/** `text` cut to `width` characters, the last one an ellipsis when anything was cut. */
export function cut(text: string, width: number): string {
  if (text.length <= width) return text;
  return width <= 1 ? "…".slice(0, width) : `${text.slice(0, width - 1)}…`;
}

const GAP = 2;
/** No column is cut below this (or its header's length, if shorter). */
const MIN = 8;

/** Column widths for `rows` that fit `width`: the widest column shrinks first. */
function fitWidths(rows: string[][], width: number): number[] {
  const widths: number[] = [];
  for (const row of rows)
    row.forEach((cell, i) => {
      widths[i] = Math.max(widths[i] ?? 0, cell.length);
    });
  const floors = widths.map((_, i) => Math.min(MIN, rows[0]?.[i]?.length ?? MIN));
  let excess = widths.reduce((a, b) => a + b, 0) + GAP * (widths.length - 1) - width;
  // One character at a time from the widest column that may still give (tables are small).
  while (excess > 0) {
    let widest = -1;
    widths.forEach((w, i) => {
      if (w > (floors[i] ?? MIN) && (widest < 0 || w > (widths[widest] ?? 0))) widest = i;
    });
    if (widest < 0) break; // every column at its floor: the lines stay too wide
    widths[widest] = (widths[widest] ?? 0) - 1;
    excess--;
  }
  return widths;
}

/**
 * Aligned columns, every cell padded to its column, the whole fitted to `width`. A cell is one
 * line: a newline or escape in it (a note, a reason) is shown as `\xNN`, never acted on.
 */
export function alignRows(cells: string[][], width = Number.POSITIVE_INFINITY): string {
  const rows = cells.map((row) => row.map(shownLine));
  const widths = fitWidths(rows, width);
  return rows
    .map((row) =>
      row
        .map((cell, i) => {
          const w = widths[i] ?? 0;
          const c = cut(cell, w);
          return i === row.length - 1 ? c : c.padEnd(w);
        })
        .join(" ".repeat(GAP))
        .trimEnd(),
    )
    .join("\n");
}
