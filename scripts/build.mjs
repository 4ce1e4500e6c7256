// Bundles the CLI with one chunk per command, so each command loads only what it runs.
import { readdirSync, rmSync } from "node:fs";
import { build } from "esbuild";

const commands = readdirSync("src/commands")
  .filter((f) => f.endsWith(".ts"))
  .map((f) => `src/commands/${f}`);

// SHEEPDOG_DIST lets parallel work build to its own folder without racing on dist/.
const outdir = process.env.SHEEPDOG_DIST || "dist";
rmSync(outdir, { recursive: true, force: true });
await build({
  entryPoints: ["src/cli.ts", ...commands],
  outdir,
  outbase: "src",
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20.19",
  chunkNames: "chunks/[name]-[hash]",
  minify: false,
  sourcemap: false,
  legalComments: "none",
  // CommonJS dependencies call require(); an ESM bundle must provide it.
  banner: {
    js: 'import { createRequire as __sheepdogCreateRequire } from "node:module"; const require = __sheepdogCreateRequire(import.meta.url);',
  },
  logLevel: "warning",
});
