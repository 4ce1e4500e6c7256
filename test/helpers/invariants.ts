// The invariants a program must keep whatever is killed, wherever (issue 14). Reusable: the
// kill tests call `checkAfterKill` after every SIGKILL and `converge` + `checkHealthy` after the
// ticks that follow; a soak script can call the same functions.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { readClaim } from "../../src/claim/claim.js";
import { readJournal } from "../../src/journal/journal.js";
import { readTickLock } from "../../src/watchdog/pass/tick-lock.js";
import { sheepdog } from "./cli.js";
import { FAKE_MANAGER, isAlive } from "./watchdog.js";

export interface Watched {
  root: string;
  stateDir: string;
  env: NodeJS.ProcessEnv;
  /** The file SHEEPDOG_CLOCK_FILE names (the clock-step hook). */
  clockFile: string;
}

/**
 * Live fake-manager processes of this program root, found in /proc (never by name alone). A
 * manager's child caught between fork and exec still shows its parent's argv and environment:
 * a process whose parent is one of them is that, not a second manager.
 */
export function liveManagers(root: string): { pid: number; start_time: string }[] {
  const found = fakeManagers(root);
  const pids = new Set(found.map((m) => m.pid));
  return found.filter((m) => !pids.has(m.ppid)).map(({ pid, start_time }) => ({ pid, start_time }));
}

function fakeManagers(root: string): { pid: number; ppid: number; start_time: string }[] {
  const out: { pid: number; ppid: number; start_time: string }[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const cmd = readFileSync(`/proc/${name}/cmdline`, "utf8");
      if (!cmd.includes(FAKE_MANAGER)) continue;
      const env = readFileSync(`/proc/${name}/environ`, "utf8").split("\0");
      if (!env.includes(`SHEEPDOG_PROGRAM=${root}`)) continue;
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (fields[0] === "Z" || fields[0] === "X") continue;
      out.push({ pid: Number(name), ppid: Number(fields[1]), start_time: String(fields[19]) });
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return out;
}

/** Lines of journal.jsonl that are not whole JSON events (torn by a kill). */
export function tornLines(stateDir: string): string[] {
  let text: string;
  try {
    text = readFileSync(join(stateDir, "journal.jsonl"), "utf8");
  } catch {
    return [];
  }
  return text.split("\n").filter((line) => {
    if (!line.trim()) return false;
    try {
      const v = JSON.parse(line);
      return !(v && typeof v.type === "string" && typeof v.at === "string");
    } catch {
      return true;
    }
  });
}

const STATE_JSON = [
  "heartbeat.json",
  "last-tick.json",
  "claim/holder.json",
  "tick.lock/holder.json",
];

/**
 * What must hold at once after any kill: the journal reads (torn lines at most one per kill so
 * far, and a torn line never swallows the event after it), and no state file is half-written.
 */
export function checkAfterKill(w: Watched, killsSoFar: number): string[] {
  const v: string[] = [];
  try {
    // Every whole line is an event of the vocabulary (src/journal/events.ts): a writer that
    // drifted from it would have its lines skipped by every reader.
    const { skipped } = readJournal(w.stateDir);
    if (skipped.lines > 0)
      v.push(`${skipped.lines} journal lines fail the schema: ${skipped.first}`);
  } catch (err) {
    v.push(`journal unreadable: ${(err as Error).message}`);
  }
  const torn = tornLines(w.stateDir);
  if (torn.length > killsSoFar)
    v.push(`${torn.length} torn journal lines after ${killsSoFar} kills: ${torn.join(" | ")}`);
  for (const line of torn)
    if (line.includes('}{"at"')) v.push(`two events glued on one line: ${line}`);
  for (const f of STATE_JSON) {
    const path = join(w.stateDir, f);
    if (!existsSync(path)) continue;
    try {
      JSON.parse(readFileSync(path, "utf8"));
    } catch {
      v.push(`${f} is half-written: ${JSON.stringify(readFileSync(path, "utf8").slice(0, 80))}`);
    }
  }
  return v;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface Converged {
  ticks: number;
  decisions: string[];
}

/** Whether a tick's report says a lock kept it from acting (rule 0, or a busy breakers' mutex). */
export function lockedOut(report: { decision: string; actions: string[] }): boolean {
  return (
    report.decision === "locked" || report.actions.some((a) => a.startsWith("claim not broken"))
  );
}

/**
 * Ticks until one live manager holds the claim and no other manager of the program runs.
 * Locks appear whole (src/lock/dir-lock.ts), so whatever a killed process left is broken by
 * the next tick: a tick kept from acting by a lock twice in a row is a violation, as is no
 * healthy manager after `maxTicks`.
 */
export async function converge(w: Watched, maxTicks = 10): Promise<Converged> {
  const decisions: string[] = [];
  let locked = 0;
  for (let i = 1; i <= maxTicks; i++) {
    const r = sheepdog(["tick", "--json"], { env: w.env });
    let decision = `exit ${r.code}`;
    let report: { decision: string; actions: string[] } | null = null;
    try {
      report = JSON.parse(r.stdout).programs[0];
      decision = report?.decision ?? decision;
    } catch {
      // recorded as the exit code
    }
    decisions.push(decision);
    if (r.stderr.includes("    at ")) throw new Error(`tick printed a stack trace: ${r.stderr}`);
    locked = report && lockedOut(report) ? locked + 1 : 0;
    if (locked >= 2)
      throw new Error(`locked out twice in a row (${decisions.join(", ")}): ${r.stdout}`);
    // Give a start time to claim, and a refused duplicate time to exit.
    for (let wait = 0; wait < 40; wait++) {
      if (healthy(w).length === 0) return { ticks: i, decisions };
      await sleep(100);
    }
  }
  throw new Error(
    `no healthy manager after ${maxTicks} ticks (${decisions.join(", ")}): ${healthy(w).join("; ")}`,
  );
}

/** What stands between the program and "one live manager holds the claim" (empty: healthy). */
export function healthy(w: Watched): string[] {
  const v: string[] = [];
  const claim = readClaim(w.stateDir);
  const managers = liveManagers(w.root);
  if (!claim.held) v.push("no claim");
  else if (!claim.holder) v.push(`claim unreadable: ${"problem" in claim ? claim.problem : ""}`);
  else if (claim.liveness !== "alive")
    v.push(`claim holder pid ${claim.holder.pid} is ${claim.liveness}`);
  const holderPid = claim.held && claim.holder ? claim.holder.pid : null;
  const others = managers.filter((m) => m.pid !== holderPid);
  if (others.length > 0) v.push(`other live managers: ${others.map((m) => m.pid).join(", ")}`);
  if (managers.length > 1) v.push(`${managers.length} live managers`);
  return v;
}

/** After convergence: no lock left that a live process does not hold. */
export function checkLocks(w: Watched): string[] {
  const v: string[] = [];
  const lock = readTickLock(w.stateDir, 240_000);
  if (lock.held && !lock.live) v.push(`tick.lock left behind: ${lock.why}`);
  if (lock.held && lock.live && lock.holder && !isAlive(lock.holder.pid, lock.holder.start_time))
    v.push("tick.lock held by a dead tick");
  return v;
}

/** Every ledger commit made so far is on the remote's branch (the next save pushes it). */
export function unpushed(ledger: string, remote: string, shas: Iterable<string>): string[] {
  const git = (cwd: string, args: string[]) =>
    spawnSync("git", args, {
      cwd,
      encoding: "utf8",
      env: { ...process.env, GIT_TERMINAL_PROMPT: "0" },
    });
  const tip = git(remote, ["rev-parse", "-q", "--verify", "refs/heads/ledger"]).stdout.trim();
  const lost: string[] = [];
  for (const sha of shas) {
    if (!tip || git(remote, ["merge-base", "--is-ancestor", sha, tip]).status !== 0) lost.push(sha);
  }
  void ledger;
  return lost;
}

/** Ends every fake manager of the program (exact pids found in /proc, start time re-checked). */
export function killManagers(root: string): void {
  for (const m of liveManagers(root)) {
    try {
      const stat = readFileSync(`/proc/${m.pid}/stat`, "utf8");
      if (stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19] !== m.start_time) continue;
      process.kill(m.pid, "SIGCONT");
      process.kill(m.pid, "SIGKILL");
    } catch {
      // gone meanwhile
    }
  }
}
