import { livenessOf, type ProcessIdentity } from "./identity.js";

export interface StopResult {
  pid: number;
  /** `term`: ended after SIGTERM; `kill`: needed SIGKILL; `gone`: already dead or reused. */
  outcome: "term" | "kill" | "gone" | "survived";
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function signal(pid: number, sig: NodeJS.Signals): boolean {
  try {
    process.kill(pid, sig);
    return true;
  } catch {
    return false;
  }
}

/**
 * Stops exactly one process: its start time is re-checked before every signal, so a pid
 * that was reused meanwhile is never touched. SIGTERM, then SIGKILL after `graceMs`.
 * A stopped (SIGSTOP) process is continued after TERM so it can act on it.
 */
export async function stopProcess(id: ProcessIdentity, graceMs = 10_000): Promise<StopResult> {
  if (livenessOf(id) !== "alive") return { pid: id.pid, outcome: "gone" };
  signal(id.pid, "SIGTERM");
  if (livenessOf(id) === "alive") signal(id.pid, "SIGCONT");
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline) {
    if (livenessOf(id) !== "alive") return { pid: id.pid, outcome: "term" };
    await sleep(100);
  }
  if (livenessOf(id) !== "alive") return { pid: id.pid, outcome: "term" };
  signal(id.pid, "SIGKILL");
  for (let i = 0; i < 50; i++) {
    if (livenessOf(id) !== "alive") return { pid: id.pid, outcome: "kill" };
    await sleep(100);
  }
  return { pid: id.pid, outcome: "survived" };
}
