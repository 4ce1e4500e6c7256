import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { lstatSync, readdirSync, readFileSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import { PYTHON3 } from "./cli.js";

/**
 * Every entry under the given directories with its mode and (for files) a hash of its content:
 * two equal snapshots mean nothing was created, removed, changed or chmod-ed.
 */
export function treeSnapshot(...roots: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (path: string) => {
    const st = lstatSync(path);
    const mode = (st.mode & 0o7777).toString(8);
    if (st.isSymbolicLink()) out[path] = `link ${readlinkSync(path)}`;
    else if (st.isDirectory()) {
      out[path] = `dir ${mode}`;
      for (const name of readdirSync(path).sort()) walk(join(path, name));
    } else
      out[path] = `file ${mode} ${createHash("sha256").update(readFileSync(path)).digest("hex")}`;
  };
  for (const root of roots) walk(root);
  return out;
}

/** Parses a plist with Python's plistlib (an independent, real parser) and returns it as JSON. */
export function parsePlistWithPython(path: string): unknown {
  const r = spawnSync(
    PYTHON3,
    [
      "-c",
      [
        "import json, plistlib, sys",
        "with open(sys.argv[1], 'rb') as f: data = plistlib.load(f)",
        // keep the plist types visible: ints stay ints, bools stay bools
        "print(json.dumps(data))",
      ].join("\n"),
      path,
    ],
    { encoding: "utf8" },
  );
  if (r.status !== 0) throw new Error(`plistlib could not parse ${path}: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

/** The XML type names plistlib sees for a top-level dict's keys (int vs bool vs str). */
export function plistTypesWithPython(path: string): Record<string, string> {
  const r = spawnSync(
    PYTHON3,
    [
      "-c",
      [
        "import json, plistlib, sys",
        "with open(sys.argv[1], 'rb') as f: data = plistlib.load(f)",
        "def t(v):",
        "    if isinstance(v, bool): return 'bool'",
        "    if isinstance(v, int): return 'int'",
        "    if isinstance(v, str): return 'str'",
        "    if isinstance(v, list): return 'list[' + ','.join(sorted(set(t(x) for x in v))) + ']'",
        "    if isinstance(v, dict): return 'dict{' + ','.join(k + ':' + t(x) for k, x in sorted(v.items())) + '}'",
        "    return type(v).__name__",
        "print(json.dumps({k: t(v) for k, v in data.items()}))",
      ].join("\n"),
      path,
    ],
    { encoding: "utf8" },
  );
  if (r.status !== 0) throw new Error(`plistlib could not parse ${path}: ${r.stderr}`);
  return JSON.parse(r.stdout);
}
