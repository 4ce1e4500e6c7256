import { defineConfig } from "vitest/config";

// `npm run capture:codex`: the Codex capture script alone, outside `npm test` (whose projects do
// not include test/capture/). Its scenarios run side by side and wait on the real CLI.
export default defineConfig({
  test: {
    include: ["test/capture/codex-capture.ts"],
    pool: "forks",
    testTimeout: 180_000,
    hookTimeout: 60_000,
  },
});
