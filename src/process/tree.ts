// A manager's process tree (DESIGN §14): its live descendants (a background shell, `sheepdog
// wait`, MCP servers) and the CPU the whole tree used over a short sample. Read only when the
// watchdog asks whether a quiet manager is working, waiting or idle.
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";

export interface TreeProcess {
  pid: number;
  ppid: number;
  /** The executable's name (`bash`, `node`, `sheepdog`). */
  comm: string;
  /** The command line, NUL-separated arguments joined by spaces. */
  args: string;
}

interface ProcRow extends TreeProcess {
  zombie: boolean;
}

function linuxRows(): ProcRow[] {
  const rows: ProcRow[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const close = stat.lastIndexOf(")");
      const fields = stat.slice(close + 2).split(" ");
      const args = readFileSync(`/proc/${name}/cmdline`, "utf8").split("\0").join(" ").trim();
      rows.push({
        pid: Number(name),
        ppid: Number(fields[1]),
        comm: stat.slice(stat.indexOf("(") + 1, close),
        args,
        zombie: fields[0] === "Z" || fields[0] === "X",
      });
    } catch {
      // gone meanwhile
    }
  }
  return rows;
}

function psRows(): ProcRow[] {
  let out: string;
  try {
    out = execFileSync("ps", ["-A", "-o", "pid=,ppid=,stat=,comm=,args="], {
      encoding: "utf8",
      env: { ...process.env, LC_ALL: "C" },
      stdio: ["ignore", "pipe", "ignore"],
    });
  } catch {
    return [];
  }
  return out.split("\n").flatMap((line) => {
    const m = /^\s*(\d+)\s+(\d+)\s+(\S+)\s+(\S+)\s*(.*)$/.exec(line);
    if (!m) return [];
    const comm = (m[4] ?? "").split("/").pop() ?? "";
    return [
      {
        pid: Number(m[1]),
        ppid: Number(m[2]),
        comm,
        args: m[5] ?? "",
        zombie: (m[3] ?? "").startsWith("Z"),
      },
    ];
  });
}

/** The live (not zombie) descendants of `root`, parents before their children. */
export function descendants(root: number): TreeProcess[] {
  const rows = process.platform === "linux" ? linuxRows() : psRows();
  const children = new Map<number, ProcRow[]>();
  for (const r of rows) {
    if (r.zombie) continue;
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
 * The CPU (ms) that `root` and its descendants used over `windowMs`: a process that started
 * during the sample counts with all it used. Null when `root` could not be measured.
 */
export async function treeCpuMs(root: number, windowMs: number): Promise<number | null> {
  const before = await cpuTimes([root, ...descendants(root).map((p) => p.pid)]);
  if (!before.has(root)) return null;
  await new Promise((r) => setTimeout(r, windowMs));
  const after = await cpuTimes([root, ...descendants(root).map((p) => p.pid)]);
  let used = 0;
  for (const [pid, t] of after) used += Math.max(0, t - (before.get(pid) ?? 0));
  return used;
}
