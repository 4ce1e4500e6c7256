import type { Scheduler } from "../install/installed.js";
import { UnsafePath } from "../state/owned.js";

/**
 * Everything doctor looks at, read only: no state directory is created, no file written, no
 * journal line appended. A check says what it saw and, when not ok, the one thing to do.
 */
export type Status = "ok" | "warn" | "fail";

export interface Check {
  program: string | null;
  check: string;
  status: Status;
  detail: string;
  fix: string | null;
}

export const ok = (program: string, check: string, detail: string): Check => ({
  program,
  check,
  status: "ok",
  detail,
  fix: null,
});
export const bad = (
  program: string,
  check: string,
  status: Status,
  detail: string,
  fix: string,
): Check => ({
  program,
  check,
  status,
  detail,
  fix,
});

/** The scheduler this platform uses, for the fixes doctor suggests. */
export function nativeScheduler(): Scheduler {
  return process.platform === "darwin" ? "launchd" : "systemd";
}

/**
 * A check that reads what another check may have found unsafe (the host state dir: doctor
 * reports it, never fails on it): a throw is that check failing, with the reason.
 */
export function guarded(label: string, name: string, check: () => Check): Check {
  try {
    return check();
  } catch (err) {
    const fix = err instanceof UnsafePath ? err.detail.fix : "see the detail";
    return bad(label, name, "fail", `cannot check: ${(err as Error).message}`, fix);
  }
}
