import { localTimes } from "../../util/local-time.js";
import { alignRows } from "../../util/terminal.js";
import type { ProgramReport } from "./tick.js";

/** `{"at", "programs": [...]}` (DESIGN §9): an array even for one program. */
export function jsonReport(at: string, programs: ProgramReport[]): string {
  return `${JSON.stringify({ at, programs })}\n`;
}

/** `catalog  restart_stuck  no save for 47m (stale after 45m); stopped pid 4242, …` */
export function tickLines(programs: ProgramReport[], width = Number.POSITIVE_INFINITY): string {
  return alignRows(
    programs.map((p) => [
      p.program,
      p.decision,
      localTimes([p.reason, p.actions.join(", ")].filter(Boolean).join("; ")),
    ]),
    width,
  );
}
