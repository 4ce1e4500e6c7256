import { spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, rmSync } from "node:fs";
import { RuntimeFailure } from "../errors.js";
import { writeFileAtomic } from "../util/fs.js";

/** Unit files are read by launchd/systemd and by people: 0644, like any config. */
export const UNIT_FILE_MODE = 0o644;

export interface CommandResult {
  status: number | null;
  stdout: string;
  stderr: string;
  missing: boolean;
}

/**
 * One step of an install or uninstall, in order. A plan is computed whole before anything
 * happens, so `--dry-run` prints exactly what a real run would do.
 */
export type Step =
  | { op: "mkdir"; path: string }
  | { op: "write"; path: string; content: string }
  | { op: "remove"; path: string }
  | {
      op: "run";
      argv: string[];
      /** A failure this says is harmless (e.g. "not loaded" from bootout) does not stop the plan. */
      harmless?: (r: CommandResult) => string | null;
      /** A read-only query whose answer is reported; its failure is a note, not a failure. */
      probe?: (r: CommandResult) => string | null;
    };

/** Shell form of an argv, for people to read and paste. */
export function shellLine(argv: readonly string[]): string {
  return argv
    .map((w) => (/^[A-Za-z0-9_@%+=:,./-]+$/.test(w) ? w : `'${w.replace(/'/g, `'\\''`)}'`))
    .join(" ");
}

function stepLine(step: Step): string {
  if (step.op === "mkdir") return shellLine(["mkdir", "-p", step.path]);
  if (step.op === "remove") return shellLine(["rm", "-f", step.path]);
  if (step.op === "run") return shellLine(step.argv);
  return `write ${step.path}`;
}

/** What `--dry-run` prints: every file with its full content, and every command. */
export function describePlan(title: string, steps: readonly Step[]): string {
  const out = [`${title} (dry run: nothing is written, removed or run)`];
  for (const step of steps) {
    if (step.op === "write") {
      out.push(
        `==> ${step.path} (mode 0${UNIT_FILE_MODE.toString(8)}) <==`,
        step.content.trimEnd(),
        "<== end",
      );
    } else
      out.push(
        `$ ${stepLine(step)}${step.op === "run" && step.probe ? "   # read-only check" : ""}`,
      );
  }
  return `${out.join("\n")}\n`;
}

export function runCommand(argv: readonly string[]): CommandResult {
  const r = spawnSync(argv[0] as string, argv.slice(1), {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
    timeout: 60_000,
  });
  const missing = (r.error as NodeJS.ErrnoException | undefined)?.code === "ENOENT";
  return {
    status: r.status,
    stdout: r.stdout ?? "",
    stderr: r.stderr ?? (r.error ? String(r.error.message) : ""),
    missing,
  };
}

function failureText(argv: readonly string[], r: CommandResult): string {
  if (r.missing) return `${argv[0]}: not found on PATH`;
  const said = (r.stderr.trim() || r.stdout.trim()).split("\n").slice(0, 3).join(" / ");
  return `${shellLine(argv)} failed (exit ${r.status ?? "by signal"})${said ? `: ${said}` : ""}`;
}

/**
 * Runs a plan in order, printing one line a step. A failed command stops it with exit 1,
 * naming the files already written and the exact commands that are left to run by hand.
 */
export function executePlan(
  title: string,
  steps: readonly Step[],
  out: (line: string) => void,
): void {
  const written: string[] = [];
  const removed: string[] = [];
  for (const [index, step] of steps.entries()) {
    if (step.op === "mkdir") {
      mkdirSync(step.path, { recursive: true });
    } else if (step.op === "write") {
      writeFileAtomic(step.path, step.content, UNIT_FILE_MODE);
      chmodSync(step.path, UNIT_FILE_MODE); // the umask may have narrowed the mode
      written.push(step.path);
      out(`wrote ${step.path}`);
    } else if (step.op === "remove") {
      rmSync(step.path, { force: true });
      removed.push(step.path);
      out(`removed ${step.path}`);
    } else {
      const r = runCommand(step.argv);
      if (step.probe) {
        const note = step.probe(r);
        if (note) out(note);
        continue;
      }
      if (r.status === 0) {
        out(`ran ${shellLine(step.argv)}`);
        continue;
      }
      const harmless = !r.missing ? step.harmless?.(r) : null;
      if (harmless) {
        out(`ran ${shellLine(step.argv)} (${harmless})`);
        continue;
      }
      const left = steps.slice(index).filter((s) => s.op !== "run" || !s.probe);
      const lines = [`${title}: ${failureText(step.argv, r)}`];
      if (written.length) lines.push("files written:", ...written.map((p) => `  ${p}`));
      if (removed.length) lines.push("files removed:", ...removed.map((p) => `  ${p}`));
      lines.push("run by hand:", ...left.map((s) => `  ${stepLine(s)}`));
      throw new RuntimeFailure(lines.join("\n"));
    }
  }
}
