import type { Scheduler } from "../install/installed.js";

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
