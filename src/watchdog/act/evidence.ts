import { lstatSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { ProgramContext } from "../../config/context.js";
import type { StartRecord } from "../../journal/replay.js";
import { launchedOf, launcherFor } from "../../launch/index.js";
import { describeCpu, sampleCpu } from "../../process/cpu.js";
import { cwdOf, processInfo } from "../../process/identity.js";
import { readHookRecords } from "../../usage/hook-records.js";
import { seatOf } from "../../usage/seat.js";
import { readTail } from "../../usage/transcript.js";
import { writeFileAtomic, writeJsonAtomic } from "../../util/fs.js";
import type { Facts } from "../gather/facts.js";
import { holderTranscript } from "../gather/holder-transcript.js";
import type { Decision } from "../rules/decide.js";

const TAIL_BYTES = 64 * 1024;
/** evidence/ keeps the newest this many folders (DESIGN §18)… */
export const EVIDENCE_KEPT = 20;
/** …and at most this much in all. */
export const EVIDENCE_MAX_BYTES = 50 * 1024 * 1024;

/** The bytes of the files directly in a folder (evidence folders hold only files). */
function folderBytes(dir: string): number {
  let total = 0;
  for (const name of readdirSync(dir)) {
    try {
      total += lstatSync(join(dir, name)).size;
    } catch {
      // removed meanwhile
    }
  }
  return total;
}

/**
 * Bounded for a year unattended (DESIGN §18): removes the oldest evidence folders until the
 * newest EVIDENCE_KEPT remain and they hold at most EVIDENCE_MAX_BYTES; `keep` (the one just
 * written) always stays. Folder names start with their UTC time, so their order is their age.
 */
export function pruneEvidence(base: string, keep: string): string[] {
  let names: string[];
  try {
    names = readdirSync(base).filter((n) => /^\d{8}T\d{6}Z-./.test(n));
  } catch {
    return [];
  }
  names.sort().reverse(); // newest first
  const removed: string[] = [];
  let total = 0;
  let full = false; // past the bounds: this folder and every older one go
  for (const [i, name] of names.entries()) {
    const dir = join(base, name);
    let bytes = 0;
    try {
      bytes = folderBytes(dir);
    } catch {
      continue;
    }
    full ||= i >= EVIDENCE_KEPT || total + bytes > EVIDENCE_MAX_BYTES;
    if (full && dir !== keep) {
      rmSync(dir, { recursive: true, force: true });
      removed.push(dir);
    } else total += bytes;
  }
  return removed;
}

/** `.sheepdog/evidence/<time>-<what>/`, made 0700. */
function evidenceDir(program: ProgramContext, now: number, what: string): string {
  const stamp = new Date(now)
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d+Z$/, "Z");
  const base = join(program.stateDir, "evidence");
  mkdirSync(base, { recursive: true, mode: 0o700 });
  const dir = join(base, `${stamp}-${what}`);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  return dir;
}

/**
 * Keeps what a start that never claimed left to see, before it is stopped (issue 33): its last
 * screen, its session's hook records (a Notification that waited for a person says what for),
 * the tail of its transcript. Returns the folder, or null when there was nothing to keep.
 */
export async function keepStartEvidence(
  program: ProgramContext,
  start: StartRecord,
  reason: string,
  now: number,
): Promise<string | null> {
  const { startNotification, startScreen } = await import("../gather/held-start-read.js");
  const screen = await startScreen(program, start);
  const { session } = startNotification(program, start);
  const hooks = session ? readHookRecords(session) : null;
  let transcript: string | null = null;
  if (start.pid !== undefined && start.start_time !== undefined) {
    try {
      transcript = holderTranscript(program, { pid: start.pid, start_time: start.start_time });
    } catch {
      // none to keep
    }
  }
  if (screen === null && !hooks?.notification && !hooks?.stop && transcript === null) return null;
  const dir = evidenceDir(program, now, `start-${start.pid ?? start.pane ?? "unknown"}`);
  const notes: string[] = [];
  if (screen !== null) writeFileAtomic(join(dir, "screen.txt"), screen);
  notes.push(screen !== null ? "screen: screen.txt" : "screen: none");
  if (hooks?.notification || hooks?.stop) writeJsonAtomic(join(dir, "hooks.json"), hooks);
  notes.push(
    hooks?.notification
      ? `Notification: ${hooks.notification.notification_type ?? "?"}: ${hooks.notification.message ?? ""} (${hooks.notification.at})`
      : "Notification: none",
  );
  if (transcript) {
    writeFileAtomic(join(dir, "transcript-tail.jsonl"), readTail(transcript, TAIL_BYTES));
    notes.push(`transcript: ${transcript}`);
  }
  writeJsonAtomic(join(dir, "start.json"), start);
  writeFileAtomic(join(dir, "README.txt"), `${reason}\n${notes.join("\n")}\n`);
  pruneEvidence(join(program.stateDir, "evidence"), dir);
  return dir;
}

/**
 * Keeps what a person needs to see why a manager was stopped, before it is stopped:
 * `.sheepdog/evidence/<time>-<pid>/` with the facts, the process, the tail of its transcript
 * and (tmux/herdr) its last screen. Returns the folder. Never throws for a missing part.
 */
export async function keepEvidence(
  program: ProgramContext,
  facts: Facts,
  decision: Decision,
  start: StartRecord | null,
  now: number,
): Promise<string> {
  if (facts.claim.state !== "alive") throw new Error("evidence is kept only for a live holder");
  const { pid, start_time } = facts.claim;
  const dir = evidenceDir(program, now, String(pid));
  const notes: string[] = [];

  const info = processInfo(pid);
  // A stopped (T) or idle process waits on something; a busy one loops: say which.
  const cpu = await sampleCpu(pid);
  writeJsonAtomic(join(dir, "facts.json"), { decision, facts, process: info, cpu });
  notes.push(`process: state ${info?.state ?? "gone"}; ${describeCpu(cpu)}`);

  const cwd = cwdOf(pid) ?? program.root;
  try {
    const transcript = holderTranscript(program, { pid, start_time });
    if (transcript) {
      writeFileAtomic(join(dir, "transcript-tail.jsonl"), readTail(transcript, TAIL_BYTES));
      notes.push(`transcript: ${transcript}`);
    } else notes.push(`transcript: none found (seat ${seatOf(program.config)}, cwd ${cwd})`);
  } catch (err) {
    notes.push(`transcript: could not be read: ${(err as Error).message}`);
  }

  if (start && start.launcher !== "command") {
    try {
      const launcher = await launcherFor(start.launcher);
      const screen = await launcher.screen(program, launchedOf(start));
      if (screen !== null) writeFileAtomic(join(dir, "screen.txt"), screen);
      notes.push(screen !== null ? "screen: screen.txt" : "screen: none");
    } catch (err) {
      notes.push(`screen: could not be read: ${(err as Error).message}`);
    }
  }
  writeFileAtomic(join(dir, "README.txt"), `${decision.reason}\n${notes.join("\n")}\n`);
  pruneEvidence(join(program.stateDir, "evidence"), dir);
  return dir;
}
