import { UsageError } from "../errors.js";
import { isZombie, machineId, type ProcessIdentity, processInfo } from "./identity.js";

const SHELLS = new Set([
  "sh",
  "bash",
  "zsh",
  "fish",
  "dash",
  "ksh",
  "mksh",
  "tcsh",
  "csh",
  "ash",
  "busybox",
]);
const WRAPPERS = new Set([
  "npm",
  "npx",
  "pnpm",
  "pnpx",
  "yarn",
  "env",
  "corepack",
  "bunx",
  "timeout",
  "nohup",
  // Sandboxes and process wrappers that stand between an agent and its tool's shell: Claude
  // Code runs Bash tool commands under bwrap (Linux) or sandbox-exec (macOS) when sandboxed.
  "bwrap",
  "sandbox-exec",
  "firejail",
  "sudo",
  "doas",
  "setsid",
  "stdbuf",
  "nice",
  "ionice",
  "chrt",
  "taskset",
  "script",
  "caffeinate",
  "systemd-run",
]);
const WRAPPER_SCRIPTS =
  /(?:^|\/)(?:npm-cli\.js|npx-cli\.js|npm|npx|pnpm(?:\.c?js)?|pnpx|yarn(?:\.c?js)?|corepack)$/;

function baseName(p: string): string {
  return (p.split("/").pop() ?? p).replace(/^-/, ""); // `-bash` is a login shell
}

/** Whether an ancestor is only in the way: a shell, a package runner or wrapper, or sheepdog. */
export function isPassThrough(comm: string, argv: string[]): boolean {
  const name = baseName(comm).toLowerCase();
  if (SHELLS.has(name) || WRAPPERS.has(name) || name.startsWith("sheepdog")) return true;
  if (name.startsWith("npm ") || name === "npm exec") return true;
  const [exe, script] = argv;
  if (exe && (SHELLS.has(baseName(exe)) || WRAPPERS.has(baseName(exe)))) return true;
  if (exe && /(?:^|\/)node(?:js)?$/.test(exe) && script) {
    if (WRAPPER_SCRIPTS.test(script)) return true;
    if (/(?:^|\/)sheepdog(?:\.c?js)?$|sheepdog\/(?:bin\/sheepdog|dist\/cli)\.c?js$/.test(script))
      return true;
  }
  return false;
}

/**
 * The manager a command acts for (DESIGN §3): `--pid N`, else the nearest ancestor that is
 * not a shell, a package runner or wrapper, or sheepdog itself.
 */
export function findManager(explicitPid?: number): ProcessIdentity {
  return { ...findAgent(explicitPid), machine_id: machineId() };
}

/** findManager without the machine id (which costs a hash): what the statusline records. */
export function findAgent(explicitPid?: number): { pid: number; start_time: string } {
  if (explicitPid !== undefined) {
    const info = processInfo(explicitPid);
    if (!info || isZombie(info)) throw new UsageError(`--pid ${explicitPid}: no such live process`);
    return { pid: explicitPid, start_time: info.startTime };
  }
  let pid = process.ppid;
  for (let depth = 0; depth < 64 && pid > 1; depth++) {
    const info = processInfo(pid);
    if (!info) break;
    if (!isZombie(info) && !isPassThrough(info.comm, info.argv)) {
      return { pid, start_time: info.startTime };
    }
    pid = info.ppid;
  }
  throw new UsageError(
    "cannot find the manager process among this command's ancestors; pass --pid N",
  );
}
