// Bundles the CLI as CommonJS: `dist/cli.cjs` (the dispatcher) and one file per command in
// `dist/commands/`, so a command loads its own file and nothing else, without Node's ESM loader.
// Measured on the 2-core VM: a command as one CommonJS file starts 10–25 % sooner than the same
// code as ES module chunks. The dependencies a command reaches only on a rare path and only by
// a dynamic import (execa when a tool is spawned, pidusage for evidence, chokidar
// for watch) are bundles of their own in `dist/vendor/`: V8 still reads and pre-parses
// whatever a file holds, and execa alone is half of the tick's bundle.
import { existsSync, readdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { build } from "esbuild";

const commands = readdirSync("src/commands")
  .filter((f) => f.endsWith(".ts"))
  .map((f) => f.slice(0, -3));

// SHEEPDOG_DIST lets parallel work build to its own folder without racing on dist/.
const finalDir = process.env.SHEEPDOG_DIST || "dist";
// Built beside and swapped in at the end: installed timers run dist/cli.cjs every few minutes,
// and a tick that starts mid-build must find the old CLI or the new one, never half of one.
const outdir = `${finalDir}.next-${process.pid}`;
rmSync(outdir, { recursive: true, force: true });

const common = {
  bundle: true,
  format: "cjs",
  platform: "node",
  target: "node20.19",
  minify: false,
  sourcemap: false,
  legalComments: "none",
  // The sources are ES modules: in a CommonJS file `import.meta.url` is this file's own URL.
  banner: { js: 'var __sheepdog_url = require("node:url").pathToFileURL(__filename).href;' },
  define: { "import.meta.url": "__sheepdog_url" },
  // A dynamic import of a vendor bundle becomes require(): Node's import() of a CommonJS file
  // would see only its default export.
  supported: { "dynamic-import": false },
  logLevel: "warning",
};

/** Loaded on first use only: `import("execa")` in a command becomes `require("../vendor/execa.cjs")`. */
const VENDOR = ["execa", "pidusage", "chokidar"];
const vendorOutside = {
  name: "vendor-outside",
  setup(b) {
    const only = new RegExp(`^(${VENDOR.join("|")})$`);
    b.onResolve({ filter: only }, (args) =>
      args.kind === "dynamic-import"
        ? { path: `../vendor/${args.path}.cjs`, external: true }
        : undefined,
    );
  },
};
for (const name of VENDOR) {
  await build({
    ...common,
    stdin: { contents: `module.exports = require("${name}");`, resolveDir: ".", loader: "js" },
    outfile: `${outdir}/vendor/${name}.cjs`,
  });
}

await build({ ...common, entryPoints: ["src/cli.ts"], outfile: `${outdir}/cli.cjs` });
await build({
  ...common,
  entryPoints: commands.map((c) => `src/commands/${c}.ts`),
  outdir: `${outdir}/commands`,
  outExtension: { ".js": ".cjs" },
  plugins: [vendorOutside],
});

// The statusline and the hooks start straight from bin/sheepdog.cjs, without the dispatcher.
// The StopFailure hook is a file of its own: Stop and Notification run every turn and need
// none of its readings code (nor zod); so is what Codex's Stop records (its session map entry).
const HOT_PARTS = {
  "stop-failure-hook": "hook-stop-failure",
  "codex-stop-session": "hook-codex-stop",
};
const stopFailureOutside = {
  name: "stop-failure-outside",
  setup(b) {
    b.onResolve({ filter: /(?:stop-failure-hook|codex-stop-session)\.js$/ }, (args) => {
      const name = HOT_PARTS[args.path.replace(/^.*\//, "").replace(/\.js$/, "")];
      return args.kind === "dynamic-import" && name
        ? { path: `./${name}.cjs`, external: true }
        : undefined;
    });
  },
};
for (const name of ["statusline", "hook"]) {
  await build({
    ...common,
    entryPoints: [`src/hot-${name}.ts`],
    outfile: `${outdir}/hot/${name}.cjs`,
    plugins: [stopFailureOutside],
  });
}
for (const [source, name] of Object.entries(HOT_PARTS))
  await build({
    ...common,
    entryPoints: [`src/usage/${source}.ts`],
    outfile: `${outdir}/hot/${name}.cjs`,
  });

// Timers and agents installed by earlier builds run `dist/cli.js`: it stays, and hands over.
writeFileSync(
  `${outdir}/cli.js`,
  '// Kept for timers installed by earlier builds (they run dist/cli.js); the CLI is cli.cjs.\nimport "./cli.cjs";\n',
);

const oldDir = `${finalDir}.old-${process.pid}`;
if (existsSync(finalDir)) renameSync(finalDir, oldDir);
renameSync(outdir, finalDir);
rmSync(oldDir, { recursive: true, force: true });
