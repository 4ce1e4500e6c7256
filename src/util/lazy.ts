import { createRequire } from "node:module";

// Node's own crypto, child_process and os modules cost milliseconds to load; the hot commands
// (statusline above all) reach them only on rare paths, so they are loaded on first use.
// In the statusline's CommonJS bundle `require` exists (and import.meta does not).
const load: NodeJS.Require =
  typeof require === "function" ? require : createRequire(import.meta.url);

export const lazyChildProcess = (): typeof import("node:child_process") =>
  load("node:child_process");
export const lazyOs = (): typeof import("node:os") => load("node:os");

/** `$HOME`, else the OS's idea of it. */
export function homeDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.HOME || lazyOs().homedir();
}

/** 64-bit FNV-1a as 16 hex digits: a stable file-name key, not a security hash. */
export function fnv1a64(text: string): string {
  let h = 0xcbf29ce484222325n;
  for (const byte of Buffer.from(text, "utf8")) {
    h ^= BigInt(byte);
    h = (h * 0x100000001b3n) & 0xffffffffffffffffn;
  }
  return h.toString(16).padStart(16, "0");
}
