// `prepare`: npm runs it for `npm install` in a clone and when it installs sheepdog from git.
// It builds dist/ with the dev dependencies (esbuild, and the code the bundles carry). npm 11
// prepares a git dependency with a nested `npm install --include=dev` that inherits `-g`
// (`npm install -g --prefix DIR git+…`: that install goes to DIR, not into the clone), so the
// clone may have none of them: then they are installed here, into the clone, first.
import { spawnSync } from "node:child_process";
import { lstatSync, mkdirSync, readFileSync, realpathSync, unlinkSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";

const require = createRequire(import.meta.url);
const found = (() => {
  try {
    require.resolve("esbuild");
    return true;
  } catch {
    return false;
  }
})();
if (!found) {
  // Not global (whatever the install that runs this says), no scripts (this one would run
  // again), nothing saved: the package's own dev dependencies, as its lock file pins them.
  const env = { ...process.env };
  for (const k of Object.keys(env))
    if (/^npm_config_(global|prefix|location)$/i.test(k)) delete env[k];
  process.stderr.write("sheepdog prepare: the dev dependencies are not here; installing them\n");
  const npm = process.env.npm_execpath
    ? [process.execPath, process.env.npm_execpath]
    : [process.platform === "win32" ? "npm.cmd" : "npm"];
  const r = spawnSync(
    npm[0],
    [
      ...npm.slice(1),
      "install",
      "--global=false",
      "--include=dev",
      "--ignore-scripts",
      "--no-save",
      "--no-audit",
      "--no-fund",
      "--prefer-offline",
    ],
    { stdio: "inherit", env },
  );
  if (r.status !== 0) process.exit(r.status ?? 1);
}
await import("./build.mjs");
unlinkGlobalSelfLink();

/**
 * That nested global install also linked the clone itself in as the global package (`<prefix>/
 * lib/node_modules/sheepdog` → the clone, a temp folder npm removes once packed): the real
 * install then found it in place and put nothing there (npm 11.19). The link becomes the empty
 * folder the real install unpacks the package into.
 */
function unlinkGlobalSelfLink() {
  if (process.env.npm_config_global !== "true" || !process.env.npm_config_prefix) return;
  const name = JSON.parse(readFileSync("package.json", "utf8")).name;
  for (const lib of ["lib/node_modules", "node_modules"]) {
    const link = join(process.env.npm_config_prefix, lib, name);
    try {
      if (lstatSync(link).isSymbolicLink() && realpathSync(link) === realpathSync(process.cwd())) {
        unlinkSync(link);
        mkdirSync(link); // where the real install unpacks the package
      }
    } catch {
      // not there
    }
  }
}
