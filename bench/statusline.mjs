// `sheepdog statusline` against bare node and the peer statusline tools, on transcripts of
// 1 MB, 50 MB and 500 MB (generated into bench/.work/), all in one run and all in a sized
// pseudo-terminal (`script`), so every tool starts the same way Claude Code would start it.
//
// Usage: node bench/statusline.mjs [runs] [sizes…]     e.g. node bench/statusline.mjs 11 1 50 500
// CLI from $SHEEPDOG_CLI (default bin/sheepdog.cjs, what a user runs). Peers from bench/peers (npm install --prefix bench/peers).
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { measure, median } from "./lib.mjs";
import { EXPECTED_CONTEXT, statuslineInput, transcriptOfSize, WORK } from "./transcripts.mjs";

const cli = resolve(process.env.SHEEPDOG_CLI ?? "bin/sheepdog.cjs");
const runs = Number(process.argv[2] ?? 11);
const sizes = process.argv.length > 3 ? process.argv.slice(3).map(Number) : [1, 50, 500];
const peers = resolve("bench/peers/node_modules");
const node = process.execPath;

const home = join(WORK, "home"); // ccstatusline keeps its settings under $HOME/.config
const state = join(WORK, "state");
mkdirSync(home, { recursive: true });
rmSync(state, { recursive: true, force: true });

/** The same command line run through `script` in a 120x40 pseudo-terminal, stdin from a file. */
function inPty(cmd, inputFile) {
  return ["script", "-qec", `stty cols 120 rows 40; ${cmd} < ${inputFile}`, "/dev/null"];
}

const tools = [
  { name: "bare node -e 0", cmd: `${node} -e 0` },
  { name: "sheepdog statusline", cmd: `${node} ${cli} statusline` },
  {
    name: "sheepdog (ctx from transcript)",
    cmd: `${node} ${cli} statusline`,
    fromTranscript: true,
  },
  {
    name: "ccstatusline 2.2.30",
    cmd: `${node} ${peers}/ccstatusline/dist/ccstatusline.js`,
    peer: `${peers}/ccstatusline/dist/ccstatusline.js`,
  },
  {
    name: "ccusage 20.0.24 statusline",
    cmd: `${peers}/.bin/ccusage statusline --no-cache`,
    peer: `${peers}/.bin/ccusage`,
  },
  {
    name: "ccusage 18.0.11 statusline",
    cmd: `${node} ${peers}/ccusage18/dist/index.js statusline --no-cache`,
    peer: `${peers}/ccusage18/dist/index.js`,
  },
].filter((t) => {
  if (!t.peer || existsSync(t.peer)) return true;
  console.log(`(skipping ${t.name}: not installed; run npm install --prefix bench/peers)`);
  return false;
});

// biome-ignore lint/suspicious/noControlCharactersInRegex: stripping terminal escapes
const ANSI = /\u001b\[[0-9;?]*[A-Za-z]|\u001b\][^\u0007]*\u0007|\r/g;

/** The line a tool prints (last non-empty line, escapes stripped) and the context figure in it. */
function shown(argv, env) {
  const r = spawnSync(argv[0], argv.slice(1), {
    env: { ...process.env, ...env },
    encoding: "utf8",
  });
  const lines = r.stdout
    .replace(ANSI, "")
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean);
  const last = lines.at(-1) ?? "";
  const line = last.includes("🤖") ? last.slice(last.lastIndexOf("🤖")) : last; // after the spinner
  const ctx =
    /ctx:?\s*([\d.,]+k?)/i.exec(line)?.[1] ?? /🧠 ([\d,]+)/.exec(line)?.[1] ?? "(none shown)";
  return { line, ctx };
}

const all = [];
for (const mb of sizes) {
  const { seat, path } = transcriptOfSize(mb);
  const inputs = {};
  for (const fromTranscript of [false, true]) {
    const file = join(WORK, `input-${mb}mb${fromTranscript ? "-tail" : ""}.json`);
    writeFileSync(file, JSON.stringify(statuslineInput(path, { fromTranscript })));
    inputs[fromTranscript] = file;
  }
  // Every tool gets what Claude Code sends (with current_usage); one more sheepdog row gets the
  // input without it, so its context must come from the transcript's tail.
  const env = { HOME: home, CLAUDE_CONFIG_DIR: seat, SHEEPDOG_STATE_DIR: state, TZ: "UTC" };
  const cases = tools.map((t) => ({
    name: t.name,
    argv: inPty(t.cmd, inputs[!!t.fromTranscript]),
    env,
  }));
  const results = measure(cases, { runs, warmup: 2 });
  const base = results[0].median;
  console.log(`\n${mb} MB transcript (${runs} runs each, medians, in a 120x40 pty)`);
  for (const [i, r] of results.entries()) {
    const s = i === 0 ? { ctx: "", line: "" } : shown(cases[i].argv, env);
    console.log(
      `  ${r.name.padEnd(32)} ${r.median.toFixed(0).padStart(6)} ms ${(r.median / base).toFixed(2).padStart(6)}x  ${s.ctx.padEnd(12)} ${s.line.slice(0, 90)}`,
    );
    all.push({ mb, name: r.name, median: r.median, ratio: r.median / base, ctx: s.ctx });
  }
}

// Goals: ≤ 1.3x bare node at every size; flat (500 MB / 1 MB ≤ 1.1x); faster than every peer.
console.log("\nsummary");
const ours = all.filter((r) => r.name.startsWith("sheepdog"));
let missed = false;
for (const name of new Set(ours.map((r) => r.name))) {
  const rows = ours.filter((r) => r.name === name);
  const worst = Math.max(...rows.map((r) => r.ratio));
  // Flatness as the change in the ratio to bare node, so load drifting between sizes cancels out.
  const first = rows[0];
  const last = rows.at(-1);
  const flat = first && last ? last.ratio / first.ratio : 1;
  const slowerThanPeer = rows.some((r) =>
    all.some(
      (p) => p.mb === r.mb && tools.find((t) => t.name === p.name)?.peer && p.median <= r.median,
    ),
  );
  const ok = worst <= 1.3 && flat <= 1.1 && !slowerThanPeer;
  if (!ok) missed = true;
  console.log(
    `  ${name}: worst ${worst.toFixed(2)}x bare node (goal ≤ 1.3), ${sizes.at(-1)} MB / ${sizes[0]} MB = ${flat.toFixed(2)} (goal ≤ 1.1), faster than every peer: ${slowerThanPeer ? "no" : "yes"}, context shown: ${[...new Set(rows.map((r) => r.ctx))].join(", ")} (expected ${Math.round(EXPECTED_CONTEXT / 1000)}k)`,
  );
}
writeFileSync(join(WORK, "statusline-results.json"), `${JSON.stringify(all, null, 2)}\n`);
console.log(
  `  bare node median over sizes: ${median(all.filter((r) => r.name.startsWith("bare")).map((r) => r.median)).toFixed(0)} ms`,
);
process.exitCode = missed ? 1 : 0;
