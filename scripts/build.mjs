// Bundles the CLI with one chunk per command, so each command loads only what it runs.
// The hot commands (run on every statusline update, every save, every tick) are also built as
// single files: one module to load instead of a dozen chunks is most of their start-up cost.
import { readdirSync, rmSync } from "node:fs";
import { build } from "esbuild";

const commands = readdirSync("src/commands")
  .filter((f) => f.endsWith(".ts"))
  .map((f) => `src/commands/${f}`);
const HOT = ["save", "tick"];

// SHEEPDOG_DIST lets parallel work build to its own folder without racing on dist/.
const outdir = process.env.SHEEPDOG_DIST || "dist";
rmSync(outdir, { recursive: true, force: true });

const common = {
  bundle: true,
  format: "esm",
  platform: "node",
  target: "node20.19",
  minify: false,
  sourcemap: false,
  legalComments: "none",
  // CommonJS dependencies call require(); an ESM bundle must provide it.
  banner: {
    js: 'import { createRequire as __sheepdogCreateRequire } from "node:module"; const require = __sheepdogCreateRequire(import.meta.url);',
  },
  logLevel: "warning",
};

await build({
  ...common,
  entryPoints: ["src/cli.ts", ...commands],
  outdir,
  outbase: "src",
  splitting: true,
  chunkNames: "chunks/[name]-[hash]",
});

// A hot command's static code in one file (built alone, so nothing it loads at start is split
// off into a chunk shared with other commands); what it loads only when acting stays in chunks.
for (const name of HOT) {
  await build({
    ...common,
    entryPoints: [`src/commands/${name}.ts`],
    outdir: `${outdir}/hot`,
    outbase: "src/commands",
    splitting: true,
    chunkNames: "chunks/[name]-[hash]",
  });
}

// The statusline and the hooks: one CommonJS file each (no ESM loader at start-up), run by
// bin/sheepdog.cjs.
for (const name of ["statusline", "hook"]) {
  await build({
    ...common,
    banner: {},
    entryPoints: [`src/hot-${name}.ts`],
    outfile: `${outdir}/hot/${name}.cjs`,
    format: "cjs",
    // util/lazy.ts uses the CommonJS `require` when there is one; import.meta is dead code here.
    logOverride: { "empty-import-meta": "silent" },
  });
}
