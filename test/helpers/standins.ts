import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "./cli.js";

/**
 * Stand-in executables for `launchctl`, `systemctl` and `loginctl`: real files on PATH that
 * record their argv (one JSON line a call) and answer as told, so install/uninstall run their
 * real code path on a machine where these tools cannot act (or do not exist).
 */
export interface StandIns {
  /** Put this first on PATH (or alone: the CLI is spawned by absolute node path). */
  bin: string;
  /** Every call so far, in order. */
  calls(): { tool: string; argv: string[] }[];
  /** Calls of one tool, argv only. */
  argvOf(tool: string): string[][];
  /** Makes calls of `tool` whose argv starts with `when` exit `exit` (and print what is given). */
  answer(
    tool: string,
    rule: { when?: string[]; exit?: number; stdout?: string; stderr?: string },
  ): void;
  /** Forgets the recorded calls and the answers. */
  reset(): void;
}

interface Rule {
  tool: string;
  when: string[];
  exit: number;
  stdout: string;
  stderr: string;
}

const SCRIPT = `
import { appendFileSync, existsSync, readFileSync } from "node:fs";
const [dir, tool, ...argv] = process.argv.slice(2);
appendFileSync(dir + "/calls.jsonl", JSON.stringify({ tool, argv }) + "\\n");
const rules = existsSync(dir + "/rules.json") ? JSON.parse(readFileSync(dir + "/rules.json", "utf8")) : [];
const rule = rules.find((r) => r.tool === tool && r.when.every((w, i) => argv[i] === w));
if (rule) {
  process.stdout.write(rule.stdout);
  process.stderr.write(rule.stderr);
  process.exitCode = rule.exit;
}
`;

export function standIns(
  tools: readonly string[] = ["launchctl", "systemctl", "loginctl"],
): StandIns {
  const dir = tempDir("sheepdog-standins-");
  const bin = join(dir, "bin");
  writeFileSync(join(dir, "standin.mjs"), SCRIPT);
  mkdirSync(bin, { recursive: true });
  for (const tool of tools) {
    const path = join(bin, tool);
    // sh with absolute paths: the stand-in must not depend on the PATH it is found on
    writeFileSync(
      path,
      `#!/bin/sh\nexec '${process.execPath}' '${join(dir, "standin.mjs")}' '${dir}' '${tool}' "$@"\n`,
    );
    chmodSync(path, 0o755);
  }
  const rulesPath = join(dir, "rules.json");
  const callsPath = join(dir, "calls.jsonl");
  const rules: Rule[] = [];
  const api: StandIns = {
    bin,
    calls() {
      if (!existsSync(callsPath)) return [];
      return readFileSync(callsPath, "utf8")
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l));
    },
    argvOf(tool) {
      return api
        .calls()
        .filter((c) => c.tool === tool)
        .map((c) => c.argv);
    },
    answer(tool, rule) {
      rules.unshift({
        tool,
        when: rule.when ?? [],
        exit: rule.exit ?? 0,
        stdout: rule.stdout ?? "",
        stderr: rule.stderr ?? "",
      });
      writeFileSync(rulesPath, JSON.stringify(rules));
    },
    reset() {
      rules.length = 0;
      writeFileSync(rulesPath, "[]");
      writeFileSync(callsPath, "");
    },
  };
  return api;
}
