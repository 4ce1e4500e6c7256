// A hung process, staged with the cgroup v1 freezer: its tasks stop in the kernel (state D), use
// no CPU and take no signal until thawed, as a process stuck in an uninterruptible wait does.
// SIGSTOP cannot stage it under tmux: tmux sends SIGCONT to a pane process a signal stopped.
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { sleepSync } from "../../src/util/jsonl.js";

const ROOT = "/sys/fs/cgroup/freezer";

/** Why a freezer cannot be used here, or null. */
export function freezerMissing(): string | null {
  if (!existsSync(join(ROOT, "freezer.state")) && !existsSync(join(ROOT, "tasks")))
    return `no cgroup v1 freezer at ${ROOT}`;
  if (process.getuid?.() !== 0) return "making a freezer cgroup needs root";
  return null;
}

export interface Freezer {
  freeze(pids: number[]): void;
  thaw(): void;
  remove(): void;
}

export function makeFreezer(name: string): Freezer {
  const dir = join(ROOT, `sheepdog-test-${name}-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  const state = join(dir, "freezer.state");
  const setState = (s: "FROZEN" | "THAWED") => {
    // FREEZING until every task has stopped; writing FROZEN again retries a freeze that stalled.
    // A freeze that never completes would stage a hang that is not one: fail it out loud.
    const end = Date.now() + 10_000;
    for (let i = 0; readFileSync(state, "utf8").trim() !== s; i++) {
      if (Date.now() > end) throw new Error(`${dir}: still not ${s} after 10 s`);
      if (i % 20 === 0) writeFileSync(state, s);
      sleepSync(5);
    }
  };
  return {
    freeze(pids) {
      // cgroup.procs moves every thread of the process (tasks would move one thread).
      for (const pid of pids) writeFileSync(join(dir, "cgroup.procs"), String(pid));
      setState("FROZEN");
    },
    thaw: () => setState("THAWED"),
    remove() {
      if (!existsSync(dir)) return;
      try {
        setState("THAWED");
      } catch {}
      // Tasks left (still alive) go back to the root cgroup before the folder can go.
      for (const pid of readFileSync(join(dir, "cgroup.procs"), "utf8").split("\n").filter(Boolean))
        try {
          writeFileSync(join(ROOT, "cgroup.procs"), pid);
        } catch {}
      try {
        rmdirSync(dir);
      } catch {}
    },
  };
}
