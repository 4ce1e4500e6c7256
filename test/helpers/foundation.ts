import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { CLI, PYTHON3, spawnCli, tempDir } from "./cli.js";
import { waitFor } from "./poll.js";

/** Processes a test started; `killAll()` in afterEach/afterAll ends each one by its pid. */
const started: ChildProcess[] = [];

export function track<T extends ChildProcess>(child: T): T {
  started.push(child);
  return child;
}

export function killAll(): void {
  for (const child of started.splice(0)) {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  }
}

export { waitFor } from "./poll.js";

/** The one-letter state of a pid from /proc (field 3, after the last `)`), or null. */
export function procState(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0] ?? null;
  } catch {
    return null;
  }
}

/** Reads the first line a child prints on stdout. */
export function firstLine(child: ChildProcess, what = "first line"): Promise<string> {
  return new Promise((done, fail) => {
    let buf = "";
    const onData = (d: Buffer) => {
      buf += d.toString();
      const nl = buf.indexOf("\n");
      if (nl >= 0) {
        child.stdout?.off("data", onData);
        done(buf.slice(0, nl));
      }
    };
    child.stdout?.on("data", onData);
    child.once("exit", (code) => fail(new Error(`${what}: exited ${code} before printing`)));
  });
}

/**
 * A zombie: a python3 parent forks a child and never waits for it. Returns the child's pid
 * (alive until `killChild()`, then a zombie as long as `parent` lives).
 */
export async function zombieMaker(): Promise<{ parent: ChildProcess; childPid: number }> {
  const parent = track(
    spawn(
      PYTHON3,
      [
        "-c",
        [
          "import os, sys, time",
          "pid = os.fork()",
          "if pid == 0:",
          "    time.sleep(600)",
          "    os._exit(0)",
          "print(pid, flush=True)",
          "time.sleep(600)",
        ].join("\n"),
      ],
      { stdio: ["ignore", "pipe", "inherit"] },
    ),
  );
  const childPid = Number(await firstLine(parent, "python3 zombie maker"));
  return { parent, childPid };
}

/**
 * A long-running node process (the "manager") that runs `command` through `/bin/sh -c` with
 * execSync, prints `{code, stdout, stderr}` as one JSON line, and then stays alive.
 */
export async function managerRunning(
  command: string,
  opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<{ manager: ChildProcess; code: number; stdout: string; stderr: string }> {
  const script = `
    const { spawnSync } = require("node:child_process");
    const r = spawnSync("/bin/sh", ["-c", process.env.MANAGER_COMMAND], { encoding: "utf8" });
    process.stdout.write(JSON.stringify({ code: r.status, stdout: r.stdout, stderr: r.stderr }) + "\\n");
    setTimeout(() => {}, 600000);
  `;
  const manager = track(
    spawn(process.execPath, ["-e", script], {
      cwd: opts.cwd,
      env: { ...process.env, ...opts.env, MANAGER_COMMAND: command },
      stdio: ["ignore", "pipe", "inherit"],
    }),
  );
  const line = await firstLine(manager, "manager");
  return { manager, ...(JSON.parse(line) as { code: number; stdout: string; stderr: string }) };
}

/** The shell words that run the CLI under test: `'<node>' '<cli>'`. */
export function cliWords(): string {
  return `'${process.execPath}' '${CLI}'`;
}

export function readJson(path: string): Record<string, unknown> {
  return JSON.parse(readFileSync(path, "utf8"));
}

/** Every parsed line of `journal.jsonl` (throws on a line that does not parse). */
export function journalLines(stateDir: string, file = "journal.jsonl"): Record<string, unknown>[] {
  const path = join(stateDir, file);
  if (!existsSync(path)) return [];
  return readFileSync(path, "utf8")
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l));
}

export function patchJson(path: string, patch: Record<string, unknown>): void {
  writeFileSync(path, `${JSON.stringify({ ...readJson(path), ...patch }, null, 2)}\n`);
}

let appender: string | undefined;

/**
 * Bundles src/journal/journal.ts into a small script, so many real OS processes can call the
 * real `appendEvent`: `node appender.mjs STATE_DIR COUNT BYTES TAG`.
 */
export async function journalAppender(): Promise<string> {
  if (appender) return appender;
  const { build } = await import("esbuild");
  const dir = tempDir("sheepdog-appender-");
  const entry = join(dir, "entry.mjs");
  writeFileSync(
    entry,
    `import { appendEvent } from ${JSON.stringify(resolve("src/journal/journal.ts"))};
const [dir, count, bytes, tag, type, fields] = process.argv.slice(2);
const pad = "x".repeat(Number(bytes));
const extra = JSON.parse(fields || "{}");
for (let i = 0; i < Number(count); i++)
  appendEvent(dir, { type: type || "saved", tag, i, pad, ...extra });
`,
  );
  const out = join(dir, "appender.mjs");
  await build({
    entryPoints: [entry],
    outfile: out,
    bundle: true,
    format: "esm",
    platform: "node",
    logLevel: "warning",
  });
  appender = out;
  return out;
}

/**
 * Runs `sheepdog` once per argv in `argvs`, every process stopped at the fault point `point`
 * (SIGSTOP, test/util/fault-point.ts's hook) until all have reached it, then continued together:
 * the critical step runs in all of them at once, however slowly each one started. A process
 * that ends before the point (refused earlier) simply counts as arrived.
 */
export async function raceAt(
  point: string,
  argvs: string[][],
  env: NodeJS.ProcessEnv,
): Promise<{ code: number; stdout: string; stderr: string }[]> {
  const marker = join(tempDir(), "arrived");
  writeFileSync(marker, "");
  const runs = argvs.map((args) => {
    const run = spawnCli(args, {
      env: { ...env, SHEEPDOG_FAULT_POINT: point, SHEEPDOG_FAULT_MARKER: marker },
    });
    track(run.child);
    return run;
  });
  const arrived = (r: (typeof runs)[number]) =>
    r.child.exitCode !== null || procState(r.child.pid as number) === "T";
  await waitFor(`all ${runs.length} at ${point}`, () => runs.every(arrived), 120_000, 20);
  for (const r of runs) if (r.child.exitCode === null) r.child.kill("SIGCONT");
  return Promise.all(runs.map((r) => r.done));
}
