import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

// Two projects: `unit` (pure code, test/unit/: no process is started) and `e2e` (test/*.test.ts:
// the built CLI, real processes, git, tmux, systemd, HTTP). Every e2e file makes its own temp
// programs, state folders, tmux sockets and ports, so files run side by side: most of their
// time is spent waiting on real processes, not on the CPU. vitest's default (cpus − 1) would
// be one file at a time on a 2-core machine. `SHEEPDOG_TEST_WORKERS` overrides the count.
const workers =
  Number(process.env.SHEEPDOG_TEST_WORKERS) || Math.max(4, availableParallelism() * 2);

export default defineConfig({
  test: {
    pool: "forks",
    isolate: false,
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
