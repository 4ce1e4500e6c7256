import { defineConfig } from "vitest/config";

// `npm run capture:claude`: the capture script alone, outside `npm test` (whose projects do not
// include test/capture/). Its sessions run side by side and wait on the real CLI.
export default defineConfig({
  test: {
    include: ["test/capture/claude-capture.ts"],
    pool: "forks",
    testTimeout: 180_000,
    hookTimeout: 60_000,
  },
});
