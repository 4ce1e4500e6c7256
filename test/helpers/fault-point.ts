// A fault point (src/util/fault-point.ts) armed for one child process: the environment that arms
// it, and a readiness signal for when the child has stopped there (it SIGSTOPs itself, having
// written its pid and the point's name to the marker). What a test does next is its own: kill
// it there, or let it go on (SIGCONT) knowing exactly where it is.
import type { ChildProcess } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "./cli.js";
import { procState } from "./foundation.js";
import { waitFor } from "./watchdog.js";

export interface ArmedPoint {
  /** The variables that arm the point, for the child's environment. */
  env: { SHEEPDOG_FAULT_POINT: string; SHEEPDOG_FAULT_MARKER: string };
  /**
   * Resolves true once `child` has stopped at the point, false when it ended first; throws when
   * another process stopped there.
   */
  reached(child: ChildProcess, ms?: number): Promise<boolean>;
}

export function armFaultPoint(point: string): ArmedPoint {
  const marker = join(tempDir("sheepdog-marker-"), "reached");
  return {
    env: { SHEEPDOG_FAULT_POINT: point, SHEEPDOG_FAULT_MARKER: marker },
    async reached(child, ms = 60_000) {
      const ended = () => child.exitCode !== null || child.signalCode !== null;
      const there = () => existsSync(marker) && readFileSync(marker, "utf8").endsWith("\n");
      const deadline = Date.now() + ms;
      await waitFor(`pid ${child.pid} to reach ${point} or end`, () => there() || ended(), ms, 5);
      if (!there()) return false;
      const [pid] = readFileSync(marker, "utf8").split(" ");
      if (Number(pid) !== child.pid)
        throw new Error(`pid ${pid} stopped at ${point}, not the child (pid ${child.pid})`);
      // The marker is written just before the child stops itself: a SIGCONT sent in between
      // would be lost and leave it stopped for good, so it counts as there once it is stopped.
      await waitFor(
        `pid ${child.pid} to stop at ${point}`,
        () => procState(child.pid as number) === "T" || ended(),
        Math.max(0, deadline - Date.now()),
        5,
      );
      return !ended();
    },
  };
}
