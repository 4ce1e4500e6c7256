import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

// A pinned npm package installed once into a shared cache folder for the tests (the real agent
// CLIs): parallel test files share one install under a lock folder.

/** `$SHEEPDOG_TEST_CACHE`, else `~/.cache/sheepdog`. */
export function cacheRoot(): string {
  return process.env.SHEEPDOG_TEST_CACHE || join(homedir(), ".cache", "sheepdog");
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

export interface CachedInstall {
  /** The cache folder (npm's `--prefix`). */
  folder: string;
  /** The package spec, `@openai/codex@0.171.0`. */
  spec: string;
  /** Whether the install in `folder` is whole and runs (checked before and after installing). */
  ready: () => boolean;
}

/**
 * Installs `spec` into `folder` unless `ready()` already holds; `why` says what failed (null
 * when it is there). The first file takes `install.lock/` (naming its pid), the others wait
 * for it; a lock whose maker is dead is taken over.
 */
export async function installOnce(o: CachedInstall): Promise<{ why: string | null }> {
  if (existsSync(o.folder) && o.ready()) return { why: null };
  mkdirSync(o.folder, { recursive: true });
  const lock = join(o.folder, "install.lock");
  const deadline = Date.now() + 10 * 60_000;
  for (;;) {
    // The lock appears whole, its pid inside (a folder made aside, then renamed onto the name):
    // one without a live pid is its dead maker's, never one being made.
    const aside = `${lock}.${process.pid}.tmp`;
    rmSync(aside, { recursive: true, force: true });
    mkdirSync(aside);
    writeFileSync(join(aside, "pid"), String(process.pid));
    try {
      renameSync(aside, lock);
      break;
    } catch {
      rmSync(aside, { recursive: true, force: true });
      let pid = 0;
      try {
        pid = Number(readFileSync(join(lock, "pid"), "utf8"));
      } catch {}
      if (!pid || !alive(pid)) rmSync(lock, { recursive: true, force: true });
      else if (Date.now() > deadline)
        return { why: "another install held the lock for 10 minutes" };
      else await sleep(500);
      if (o.ready()) return { why: null };
    }
  }
  try {
    if (o.ready()) return { why: null };
    try {
      execFileSync("npm", ["install", "--prefix", o.folder, "--no-audit", "--no-fund", o.spec], {
        stdio: "pipe",
        timeout: 5 * 60_000,
        // The registry is reached over TLS: the CA bundle vitest.config.ts set aside.
        env: process.env.SHEEPDOG_TEST_CA_CERTS
          ? { ...process.env, NODE_EXTRA_CA_CERTS: process.env.SHEEPDOG_TEST_CA_CERTS }
          : process.env,
      });
    } catch (e) {
      const err = e as { stderr?: Buffer; message: string };
      const last = (err.stderr?.toString() || err.message).trim().split("\n").slice(-3).join(" / ");
      return { why: `npm install failed: ${last}` };
    }
    return o.ready() ? { why: null } : { why: `installed ${o.spec}, but it does not run` };
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}
