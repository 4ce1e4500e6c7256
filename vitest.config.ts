import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // End-to-end tests spawn real processes and wait on real clocks.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
  },
});
