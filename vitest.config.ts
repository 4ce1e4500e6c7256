import { availableParallelism } from "node:os";
import { basename } from "node:path";
import { defineConfig } from "vitest/config";
import { BaseSequencer, type TestSpecification } from "vitest/node";

// Two projects: `unit` (pure code, test/unit/: no process is started) and `e2e` (test/*.test.ts:
// the built CLI, real processes, git, tmux, systemd, HTTP). Every e2e file makes its own temp
// programs, state folders, tmux sockets and ports, so files run side by side: most of their
// time is spent waiting on real processes, not on the CPU. vitest's default (cpus − 1) would
// be one file at a time on a 2-core machine; 4 workers left the 2 cores a quarter idle (75 %
// busy, vitest 314–326 s), 6 keep them ~90 % busy (251–262 s): bench/RESULTS.md. So 3 per core,
// at least 4 and at most 12: past 12 the longest file (~130 s, waits) is the floor anyway, and
// more would only start more real Claude Code binaries at once. `SHEEPDOG_TEST_WORKERS`
// overrides the count.
// Node reads NODE_EXTRA_CA_CERTS's whole bundle at every start, before any code runs: on the
// 2-core machine that was 58 of a bare start's 138 ms of CPU, paid by each of the suite's ~3,300
// node processes (the CLI, the stand-ins, the fake managers). Nothing the tests start speaks TLS
// (ntfy's stand-in is plain HTTP on 127.0.0.1, npm installs --offline), so the tests' processes
// start without it. The one install that reaches a registry (the real Claude Code, on first use)
// gets it back from SHEEPDOG_TEST_CA_CERTS.
if (process.env.NODE_EXTRA_CA_CERTS)
  process.env.SHEEPDOG_TEST_CA_CERTS = process.env.NODE_EXTRA_CA_CERTS;
delete process.env.NODE_EXTRA_CA_CERTS;

const workers =
  Number(process.env.SHEEPDOG_TEST_WORKERS) ||
  Math.min(12, Math.max(4, availableParallelism() * 3));

/**
 * The longest files first, longest of all first (their times in a full run, bench/RESULTS.md
 * "How long the suite takes"), so the workers end together instead of one long file ending the run alone: most of these
 * wait on real clocks (a usage limit's reset, a timer, kill rounds, Herdr's arrival waits).
 * vitest's own order (longest first, from its cache of the last run) decides the rest; a fresh
 * clone has no such cache, and put claude-activity's 80 s two minutes into the run.
 */
const LONG_FIRST = [
  "claude-manager-limits.test.ts",
  "claude-activity.test.ts",
  "claude-newest.test.ts",
  "pause-tick.test.ts",
  "faults-kill-lock-random.test.ts",
  "package.test.ts",
  "systemd-real.test.ts",
  "watch.test.ts",
  "lease-hosts.test.ts",
  "report-night.test.ts",
  "tick-herdr.test.ts",
  "claude-limits-print.test.ts",
  "tick-guards.test.ts",
  "doctor.test.ts",
  "held-start.test.ts",
  "claude-permissions.test.ts",
  "faults-clock.test.ts",
  "claude-manager.test.ts",
  "tick-signals.test.ts",
  "merge-lock.test.ts",
  "faults-kill-locks.test.ts",
  "page-backoff.test.ts",
  "foundation-config.test.ts",
  "tick-tmux.test.ts",
  "faults-kill-lock-points.test.ts",
  "page-tick.test.ts",
  "foundation-claim.test.ts",
  "launch-herdr-faults.test.ts",
  "install-systemd.test.ts",
  "faults-kill-watchdog.test.ts",
  "page-tick-e2e.test.ts",
  "save-ledger.test.ts",
  "lease-tick.test.ts",
  "launch-herdr.test.ts",
  "faults-kill-manager.test.ts",
  "install-launchd.test.ts",
  "tick-restart.test.ts",
];

class LongFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (f: TestSpecification) => {
      const i = LONG_FIRST.indexOf(basename(f.moduleId));
      return i < 0 ? LONG_FIRST.length : i;
    };
    return sorted
      .map((f, i) => ({ f, i }))
      .sort((a, b) => rank(a.f) - rank(b.f) || a.i - b.i)
      .map(({ f }) => f);
  }
}

export default defineConfig({
  test: {
    pool: "forks",
    // Files share a worker (one after another), so vitest is not loaded anew for each: the
    // helpers register their hooks inside each file and keep no state across files.
    isolate: false,
    sequence: { sequencer: LongFirst },
    maxWorkers: workers,
    // End-to-end tests spawn real processes and wait on real clocks.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    projects: [
      { extends: true, test: { name: "unit", include: ["test/unit/**/*.test.ts"] } },
      { extends: true, test: { name: "e2e", include: ["test/*.test.ts"] } },
    ],
  },
});
