#!/usr/bin/env node
// `npm run capture:claude -- --version X`: drives Claude Code X offline and writes its formats to
// test/fixtures/claude-X/ (test/capture/claude-capture.ts, under vitest), then prints what
// differs from the newest tested version's captures. Without --version: the pinned version.
import { spawnSync } from "node:child_process";

const args = process.argv.slice(2);
const env = { ...process.env };
const rest = [];
for (let i = 0; i < args.length; i++) {
  const a = args[i];
  if (a === "--version" || a === "-v") {
    const v = args[++i];
    if (!v || !/^\d+\.\d+\.\d+$/.test(v)) {
      process.stderr.write(
        `capture:claude: --version: expected a version such as 2.1.332, got ${JSON.stringify(v ?? "")}\n`,
      );
      process.exit(2);
    }
    env.CLAUDE_CODE_VERSION = v;
  } else if (a.startsWith("--version=")) env.CLAUDE_CODE_VERSION = a.slice("--version=".length);
  else rest.push(a);
}
const r = spawnSync(
  process.execPath,
  ["node_modules/vitest/vitest.mjs", "run", "--config", "test/capture/vitest.config.ts", ...rest],
  { stdio: "inherit", env },
);
process.exit(r.status ?? 1);
