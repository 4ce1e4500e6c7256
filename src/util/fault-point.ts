import { writeFileSync } from "node:fs";

/**
 * TEST HOOK (issue 14's crash tests): with `SHEEPDOG_FAULT_POINT=<name>` set, the process
 * that reaches `faultPoint("<name>")` appends `<pid> <name>` to `$SHEEPDOG_FAULT_MARKER` (when
 * set) and stops itself with SIGSTOP, so a test can SIGKILL it at exactly that step. Unset (every
 * real run), a fault point costs one comparison: the variable is read once, at load.
 */
const armed = process.env.SHEEPDOG_FAULT_POINT;
// Armed for this process only: a manager a tick starts must not stop at the same point.
if (armed !== undefined) delete process.env.SHEEPDOG_FAULT_POINT;

export function faultPoint(name: string): void {
  if (armed === undefined || armed !== name) return;
  const marker = process.env.SHEEPDOG_FAULT_MARKER;
  if (marker) writeFileSync(marker, `${process.pid} ${name}\n`, { flag: "a" });
  process.kill(process.pid, "SIGSTOP");
}

/** Whether `name` is the armed point (for a step that must do something odd first, e.g. tear a line). */
export function faultArmed(name: string): boolean {
  return armed !== undefined && armed === name;
}
