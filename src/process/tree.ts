// A manager's process tree (DESIGN §14): its live descendants (a background shell, `sheepdog
// wait`, MCP servers) and the CPU the whole tree used over a short sample. Read only when the
// watchdog asks whether a quiet manager is working, waiting or idle.
import { isGone, type ProcessRow, processTable } from "./identity.js";

export interface TreeProcess {
  pid: number;
  ppid: number;
  /** The executable's name (`bash`, `node`, `sheepdog`). */
  comm: string;
  /** The command line, NUL-separated arguments joined by spaces. */
  args: string;
}

/** The live (not zombie) descendants of `root`, parents before their children. */
export function descendants(root: number): TreeProcess[] {
  const children = new Map<number, ProcessRow[]>();
  for (const r of processTable({ args: true })) {
    if (isGone(r)) continue;
    const list = children.get(r.ppid) ?? [];
    list.push(r);
    children.set(r.ppid, list);
  }
  const out: TreeProcess[] = [];
  const walk = (pid: number, depth: number) => {
    if (depth > 32) return; // a cycle can only come from a pid reused mid-read
    for (const c of children.get(pid) ?? []) {
      out.push({ pid: c.pid, ppid: c.ppid, comm: c.comm, args: c.args });
      walk(c.pid, depth + 1);
    }
  };
  walk(root, 0);
  return out;
}

/** Total CPU time (ms) of the given pids, those still running; absent ones count 0. */
async function cpuTimes(pids: number[]): Promise<Map<number, number>> {
  const { default: pidusage } = await import("pidusage");
  const times = new Map<number, number>();
  await Promise.all(
    pids.map(async (pid) => {
      try {
        times.set(pid, (await pidusage(pid)).ctime);
      } catch {
        // gone meanwhile
      }
    }),
  );
  return times;
}

/**
 * The CPU (ms) that `root` and its descendants used over `windowMs` (a process that started
 * during the sample counts with all it used; null when `root` could not be measured), and
 * the descendants as the sample's end found them.
 */
export async function sampleTree(
  root: number,
  windowMs: number,
): Promise<{ cpu_ms: number | null; tree: TreeProcess[] }> {
  const before = await cpuTimes([root, ...descendants(root).map((p) => p.pid)]);
  if (!before.has(root)) return { cpu_ms: null, tree: descendants(root) };
  await new Promise((r) => setTimeout(r, windowMs));
  const tree = descendants(root);
  const after = await cpuTimes([root, ...tree.map((p) => p.pid)]);
  let used = 0;
  for (const [pid, t] of after) used += Math.max(0, t - (before.get(pid) ?? 0));
  return { cpu_ms: used, tree };
}
