// A command's bundle loaded with V8's code cache. Compiling the tick's 500 KB bundle was a third
// of a tick's CPU (measured on the 2-core VM: 95 → 60 ms a tick with the cache); Node 20 has no
// module.enableCompileCache (22.1+), so the CommonJS wrapper is compiled here through vm.Script.
//
// The cache is written once, after a run without one (it then holds the functions that run
// compiled), beside the bundle in `<dist>/v8-cache/`, and only by the bundle's owner. V8 checks
// a cache's version and flags but of the source only its length, so a cache is used only when
// its header names this very bundle file (inode, size, mtime, ctime: npm packs every file with
// one mtime, ctime no one sets) and this Node, and only when it is owned like the bundle and
// writable by no one else: bytecode is code. One file per Node and flags, so two Nodes on a host
// (a timer's, a shell's) do not take turns rewriting one. No `importModuleDynamically`: the
// bundles have no import() (scripts/build.mjs turns it into require()).
import {
  closeSync,
  constants,
  fstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  type Stats,
  statSync,
  writeFileSync,
} from "node:fs";
import Module, { createRequire } from "node:module";
import { basename, dirname, join } from "node:path";
import { Script } from "node:vm";

const CACHE_DIR = "v8-cache";

function header(st: Stats): string {
  return `sheepdog-v8 ${st.ino} ${st.size} ${st.mtimeMs} ${st.ctimeMs} ${process.version} ${process.arch}\n`;
}

/** This Node and its flags, in a file name (a cheap string hash: node:crypto costs a start). */
function flavour(): string {
  const flags = `${process.execArgv.join(" ")}|${process.env.NODE_OPTIONS ?? ""}`;
  let h = 5381;
  for (let i = 0; i < flags.length; i++) h = ((h << 5) + h + flags.charCodeAt(i)) >>> 0;
  return `${process.version}-${process.arch}-${h.toString(36)}`;
}

/** The cache for the bundle `st` describes, when it is one to trust; else undefined. */
function readCache(path: string, st: Stats): Buffer | undefined {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
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

function writeCache(path: string, bundle: string, st: Stats, data: () => Buffer): void {
  // The bundle at the name may have been rebuilt while this process ran (a watch runs for days).
  try {
    if (header(statSync(bundle)) !== header(st)) return;
  } catch {
    return;
  }
  try {
    mkdirSync(dirname(path), { mode: 0o755 });
  } catch {
    // there already, or not ours to make: the write below says which
  }
  const tmp = `${path}.${process.pid}.tmp`;
  try {
    writeFileSync(tmp, Buffer.concat([Buffer.from(header(st)), data()]), {
      mode: 0o644,
      flag: "wx",
    });
    renameSync(tmp, path); // whole or not at all
  } catch {
    rmSync(tmp, { force: true }); // a full disk: the bundle runs as it is, compiled each time
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
  const cachePath = join(dirname(file), CACHE_DIR, `${basename(file)}.${flavour()}.v8`);
  const cachedData = readCache(cachePath, st);
  const script = new Script(Module.wrap(source), { filename: file, cachedData });
  const used = cachedData !== undefined && !script.cachedDataRejected;
  // Only the bundle's owner writes (another user's would never be trusted, and rewritten at
  // every run); the cache is made at exit, when it holds what the run compiled.
  if (!used && process.geteuid?.() === st.uid)
    process.once("exit", () => writeCache(cachePath, file, st, () => script.createCachedData()));
  const mod = { exports: {} as unknown, filename: file, id: file, loaded: false };
  const wrapper = script.runInThisContext() as (...args: unknown[]) => void;
  wrapper.call(mod.exports, mod.exports, createRequire(file), mod, file, dirname(file));
  mod.loaded = true;
  return mod.exports;
}
