import { defineConfig } from "vitest/config";

// `npm run soak -- --hosts 2`: the two-host soak alone, outside `npm test` (whose projects do
// not include test/soak/). It runs for SOAK_MINUTES and waits on real ticks and failovers.
export default defineConfig({
  test: {
    include: ["test/soak/*.soak.ts"],
    pool: "forks",
    testTimeout: 24 * 3600_000,
    hookTimeout: 120_000,
  },
});
