// A command's bundle loaded with V8's code cache. Compiling the tick's 500 KB bundle was a third
// of a tick's CPU (measured on the 2-core VM: 95 → 60 ms a tick with the cache); Node 20 has no
// module.enableCompileCache (22.1+), so the CommonJS wrapper is compiled here through vm.Script.
//
// The cache is written once, after a run without one (it then holds the functions that run
// compiled), beside the bundle in `<dist>/v8-cache/`, and only where this user may write. V8
// checks a cache's version and flags but of the source only its length, so a cache is used only
// when its header names this very bundle file (inode, size, mtime) and this Node, and only when
// it is owned like the bundle and writable by no one else: bytecode is code.
import {
  closeSync,
  fstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  type Stats,
  writeFileSync,
} from "node:fs";
import Module, { createRequire } from "node:module";
import { basename, dirname, join } from "node:path";
import { Script } from "node:vm";

const CACHE_DIR = "v8-cache";

/** What the last load did, for the tests: used a cache, wrote one, or neither. */
export let lastLoad: "cached" | "written" | "compiled" = "compiled";

function header(st: Stats): string {
  return `sheepdog-v8 ${st.ino} ${st.size} ${st.mtimeMs} ${process.version} ${process.arch}\n`;
}

/** The cache for the bundle `st` describes, when it is one to trust; else undefined. */
function readCache(path: string, st: Stats): Buffer | undefined {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch {
    return undefined;
  }
  try {
    const c = fstatSync(fd);
    if (!c.isFile() || c.uid !== st.uid || (c.mode & 0o022) !== 0) return undefined;
    const data = readFileSync(fd);
    const want = Buffer.from(header(st));
    return data.subarray(0, want.length).equals(want) ? data.subarray(want.length) : undefined;
  } finally {
    closeSync(fd);
  }
}

function writeCache(path: string, st: Stats, data: Buffer): void {
  try {
    mkdirSync(dirname(path), { mode: 0o755 });
  } catch {
    // there already, or not ours to make: the write below says which
  }
  const tmp = `${path}.${process.pid}.tmp`;
  try {
    writeFileSync(tmp, Buffer.concat([Buffer.from(header(st)), data]), { mode: 0o644, flag: "wx" });
    renameSync(tmp, path); // whole or not at all
    lastLoad = "written";
  } catch {
    // a read-only install: the bundle runs as it is, compiled each time
  }
}

/** `require(file)` of a CommonJS bundle, compiled with its code cache where there is one. */
export function requireCached(file: string): unknown {
  const fd = openSync(file, "r");
  let st: Stats;
  let source: string;
  try {
    st = fstatSync(fd);
    source = readFileSync(fd, "utf8");
  } finally {
    closeSync(fd);
  }
  const cachePath = join(dirname(file), CACHE_DIR, `${basename(file)}.v8`);
  const cachedData = readCache(cachePath, st);
  const script = new Script(Module.wrap(source), { filename: file, cachedData });
  const used = cachedData !== undefined && !script.cachedDataRejected;
  lastLoad = used ? "cached" : "compiled";
  if (!used) process.once("exit", () => writeCache(cachePath, st, script.createCachedData()));
  const mod = { exports: {} as unknown, filename: file, id: file, loaded: false };
  const wrapper = script.runInThisContext() as (...args: unknown[]) => void;
  wrapper.call(mod.exports, mod.exports, createRequire(file), mod, file, dirname(file));
  mod.loaded = true;
  return mod.exports;
}
