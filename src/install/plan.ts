import { chmodSync, rmSync } from "node:fs";
import { RuntimeFailure } from "../errors.js";
import { commandLine, runTool, type ToolResult, toolFailure } from "../process/run-tool.js";
import { ensureOwnedDir } from "../state/owned.js";
import { writeFileAtomic } from "../util/fs.js";

/** Unit files are read by launchd/systemd and by people: 0644, like any config. */
export const UNIT_FILE_MODE = 0o644;
/** The `sheepdog` launcher install writes when no folder on PATH has this CLI: run, not read. */
export const LAUNCHER_FILE_MODE = 0o755;

export interface CommandResult {
  status: number | null;
  stdout: string;
  stderr: string;
  missing: boolean;
  /** The run itself, for the one error format. */
  tool: ToolResult;
}

/**
 * One step of an install or uninstall, in order. A plan is computed whole before anything
 * happens, so `--dry-run` prints exactly what a real run would do.
 */
export type Step =
  | { op: "mkdir"; path: string }
  | { op: "write"; path: string; content: string /** default UNIT_FILE_MODE */; mode?: number }
  | { op: "remove"; path: string }
  | {
      op: "run";
      argv: string[];
      /**
       * A failure this says is harmless (e.g. "not loaded" from bootout) does not stop the plan.
       * It sees a missing tool too (`r.missing`): for an uninstall, nothing can be loaded then.
       */
      harmless?: (r: CommandResult) => string | null;
      /** A read-only query whose answer is reported; its failure is a note, not a failure. */
      probe?: (r: CommandResult) => string | null;
    };

/** Shell form of an argv, for people to read and paste. */
export const shellLine = commandLine;

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
        `==> ${step.path} (mode 0${(step.mode ?? UNIT_FILE_MODE).toString(8)}) <==`,
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

/** launchctl and systemctl answer in seconds; one that hangs must not hang install. */
const COMMAND_TIMEOUT_MS = 60_000;

export async function runCommand(argv: readonly string[]): Promise<CommandResult> {
  const tool = await runTool(argv[0] as string, argv.slice(1), { timeoutMs: COMMAND_TIMEOUT_MS });
  return {
    status: tool.code,
    stdout: tool.stdout,
    stderr: tool.stderr || tool.spawnError || "",
    missing: /\bENOENT\b/.test(tool.spawnError ?? ""),
    tool,
  };
}

function failureText(argv: readonly string[], r: CommandResult): string {
  if (r.missing) return `${argv[0]}: not found on PATH`;
  return toolFailure(r.tool, shellLine(argv));
}

/**
 * Runs a plan in order, printing one line a step. A failed command stops it with exit 1,
 * naming the files already written and the exact commands that are left to run by hand.
 */
export async function executePlan(
  title: string,
  steps: readonly Step[],
  out: (line: string) => void,
): Promise<void> {
  const written: string[] = [];
  const removed: string[] = [];
  for (const [index, step] of steps.entries()) {
    if (step.op === "mkdir") {
      // 0700 whatever the umask (parents too); an existing one the scheduler runs from is
      // narrowed when yours, refused when another user's or a link (DESIGN §18).
      ensureOwnedDir(step.path, "unsafe folder", { narrow: true });
    } else if (step.op === "write") {
      writeFileAtomic(step.path, step.content, step.mode ?? UNIT_FILE_MODE);
      chmodSync(step.path, step.mode ?? UNIT_FILE_MODE); // the umask may have narrowed the mode
      written.push(step.path);
      out(`wrote ${step.path}`);
    } else if (step.op === "remove") {
      rmSync(step.path, { force: true });
      removed.push(step.path);
      out(`removed ${step.path}`);
    } else {
      const r = await runCommand(step.argv);
      if (step.probe) {
        const note = step.probe(r);
        if (note) out(note);
        continue;
      }
      if (r.status === 0) {
        out(`ran ${shellLine(step.argv)}`);
        continue;
      }
      const harmless = step.harmless?.(r);
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
