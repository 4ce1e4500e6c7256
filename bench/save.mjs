// `sheepdog save --transcript` on transcripts of 1 MB, 50 MB and 500 MB (bench/.work/): the
// context size is read backwards from the end, so the cost must be flat across sizes.
// Usage: node bench/save.mjs [runs] [sizes…]     (CLI from $SHEEPDOG_CLI, default bin/sheepdog.cjs, what a user runs)
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { measure } from "./lib.mjs";
import { EXPECTED_CONTEXT, statuslineInput, transcriptOfSize, WORK } from "./transcripts.mjs";

const cli = resolve(process.env.SHEEPDOG_CLI ?? "bin/sheepdog.cjs");
const runs = Number(process.argv[2] ?? 11);
const sizes = process.argv.length > 3 ? process.argv.slice(3).map(Number) : [1, 50, 500];
const node = process.execPath;

const home = realpathSync(mkdtempSync(join(tmpdir(), "sheepdog-bench-save-")));
const root = join(home, "bench");
mkdirSync(root);
writeFileSync(join(root, "program.json"), `${JSON.stringify({ name: "bench" })}\n`);
const sleeper = spawn(node, ["-e", "setTimeout(() => {}, 900000)"], { stdio: "ignore" });
const env = { SHEEPDOG_HOME: home, SHEEPDOG_STATE_DIR: join(home, ".state") };

try {
  const transcripts = sizes.map((mb) => ({ mb, ...transcriptOfSize(mb) }));
  const saveArgv = (path) => [
    node,
    cli,
    "save",
    "--pid",
    String(sleeper.pid),
    "--program",
    root,
    "--transcript",
    path,
  ];
  // Does save read the transcript yet? (Its context-token wiring belongs to another area.)
  const probe = spawnSync(
    saveArgv(transcripts[0].path)[0],
    saveArgv(transcripts[0].path).slice(1),
    {
      env: { ...process.env, ...env },
      encoding: "utf8",
    },
  );
  let viaSave = false;
  try {
    viaSave = JSON.parse(probe.stdout).context_tokens === EXPECTED_CONTEXT;
  } catch {
    // not JSON: save is not there yet
  }
  const cases = [{ name: "bare node -e 0", argv: [node, "-e", "0"] }];
  for (const t of transcripts) {
    if (viaSave)
      cases.push({ name: `save --transcript ${t.mb} MB`, argv: saveArgv(t.path), env, mb: t.mb });
    else {
      const file = join(WORK, `input-${t.mb}mb-tail.json`);
      writeFileSync(file, JSON.stringify(statuslineInput(t.path, { fromTranscript: true })));
      cases.push({
        name: `statusline, ctx from ${t.mb} MB transcript`,
        argv: ["sh", "-c", `${node} ${cli} statusline < ${file}`],
        env,
        mb: t.mb,
      });
    }
  }
  if (!viaSave)
    console.log(
      "save does not report the transcript's context yet: measuring contextTokensOf through statusline",
    );
  const results = measure(cases, { runs, warmup: 2 });
  const base = results[0].median;
  console.log(`\ncontext from the transcript's end (${runs} runs each, medians)`);
  for (const r of results)
    console.log(
      `  ${r.name.padEnd(40)} ${r.median.toFixed(0).padStart(6)} ms ${(r.median / base).toFixed(2).padStart(6)}x`,
    );
  const first = results[1];
  const last = results.at(-1);
  const flat = last.median / first.median;
  console.log(`\n  ${sizes.at(-1)} MB / ${sizes[0]} MB = ${flat.toFixed(2)} (goal ≤ 1.1: flat)`);
  process.exitCode = flat <= 1.1 ? 0 : 1;
} finally {
  sleeper.kill();
  rmSync(home, { recursive: true, force: true });
}
