import { randomBytes } from "node:crypto";
import {
  closeSync,
  constants,
  fchmodSync,
  fstatSync,
  fsyncSync,
  linkSync,
  openSync,
  readSync,
  rmSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import { ensureHostDir, hostStateDir } from "../usage/host-state.js";
import { isErrno } from "../util/fs.js";

// This host's key for the phone's command tokens (DESIGN §8): 32 random bytes, hex, in
// `<state dir>/remote.key`, 0600, made on first use. It is never sent, printed or journaled;
// errors name the file and what is wrong with it, never its content.

export const KEY_FILE = "remote.key";
const KEY_HEX = 64;

export function keyPath(env: NodeJS.ProcessEnv = process.env): string {
  return join(hostStateDir(env), KEY_FILE);
}

/** Reads the key: a regular file (no link), this user's, readable by no one else. */
function readKey(path: string): Buffer {
  const fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new Error(`${path} is not a regular file`);
    if (typeof process.getuid === "function" && st.uid !== process.getuid())
      throw new Error(`${path} belongs to another user (uid ${st.uid})`);
    const mode = st.mode & 0o777;
    if (mode & 0o077)
      throw new Error(
        `${path} has mode ${mode.toString(8).padStart(4, "0")}; the key must be 0600 (chmod 600 ${path}, or delete it: a new one is made, and the buttons on pages already sent stop working)`,
      );
    const buf = Buffer.alloc(KEY_HEX + 2);
    const n = readSync(fd, buf, 0, buf.length, 0);
    const hex = buf.subarray(0, n).toString("latin1").trim();
    if (!/^[0-9a-f]{64}$/.test(hex)) throw new Error(`${path} does not hold a key sheepdog made`);
    return Buffer.from(hex, "hex");
  } finally {
    closeSync(fd);
  }
}

/** Writes a new key beside `path` and links it into place: it appears whole, or not at all. */
function makeKey(path: string): void {
  const tmp = `${path}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`;
  const fd = openSync(
    tmp,
    constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
    0o600,
  );
  try {
    try {
      fchmodSync(fd, 0o600); // whatever the umask
      writeSync(fd, `${randomBytes(32).toString("hex")}\n`);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    linkSync(tmp, path); // EEXIST when another maker won: its key stands
  } finally {
    rmSync(tmp, { force: true });
  }
}

/**
 * This host's key, made when `create` is set and there is none (two makers at once: one wins,
 * both read its key). Null when there is none and `create` is not set. Throws on a key file
 * that is unsafe or not sheepdog's.
 */
export function hostKey(opts: { create: boolean }, env = process.env): Buffer | null {
  const path = keyPath(env);
  try {
    return readKey(path);
  } catch (err) {
    if (!isErrno(err, "ENOENT")) throw err;
  }
  if (!opts.create) return null;
  ensureHostDir("", env);
  try {
    makeKey(path);
  } catch (err) {
    if (!isErrno(err, "EEXIST")) throw err;
  }
  return readKey(path);
}
