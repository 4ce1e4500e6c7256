import {
  chmodSync,
  existsSync,
  mkdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join, resolve } from "node:path";
import { PYTHON3, tempDir } from "./cli.js";

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

// Python, not node: install and doctor call these tools dozens of times a file, and python3
// starts in a fifth of node's time (the suite's CPU is mostly process start-ups).
const SCRIPT = `import json, os, sys
d, tool, argv = sys.argv[1], sys.argv[2], sys.argv[3:]
with open(os.path.join(d, "calls.jsonl"), "a") as f:
    f.write(json.dumps({"tool": tool, "argv": argv}) + "\\n")
rules = []
if os.path.exists(os.path.join(d, "rules.json")):
    with open(os.path.join(d, "rules.json")) as f:
        rules = json.load(f)
for r in rules:
    if r["tool"] == tool and all(i < len(argv) and argv[i] == w for i, w in enumerate(r["when"])):
        sys.stdout.write(r["stdout"])
        sys.stderr.write(r["stderr"])
        sys.exit(r["exit"])
`;

/**
 * Stand-ins for `tools` in a fresh `bin` folder. Beside them, unless `opts.sheepdog` is false,
 * `sheepdog` as an npm prefix links it (→ this checkout's bin/sheepdog.cjs): the folder install
 * then puts on a unit's PATH so that managers find sheepdog by name.
 */
export function standIns(
  tools: readonly string[] = ["launchctl", "systemctl", "loginctl"],
  opts: { sheepdog?: boolean } = {},
): StandIns {
  const dir = tempDir("sheepdog-standins-");
  const bin = join(dir, "bin");
  writeFileSync(join(dir, "standin.py"), SCRIPT);
  mkdirSync(bin, { recursive: true });
  if (opts.sheepdog !== false) symlinkSync(resolve("bin/sheepdog.cjs"), join(bin, "sheepdog"));
  for (const tool of tools) {
    const path = join(bin, tool);
    writeFileSync(
      path,
      `#!/bin/sh\nexec '${PYTHON3}' '${join(dir, "standin.py")}' '${dir}' '${tool}' "$@"\n`,
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
