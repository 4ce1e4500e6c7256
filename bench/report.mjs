// `sheepdog report` on a 10 MB journal, against bare `node -e 0` (and `journal --json`, which
// reads the same files). The journal is a month of a busy program: managers that start, claim,
// save every 30 s, hand over; a death, a pause and a page now and then. One case adds a
// rotation (a 10 MB journal.1.jsonl beside a fresh journal.jsonl).
// Run: node bench/report.mjs   (default CLI: dist/cli.cjs)
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { measure, report } from "./lib.mjs";

const CLI = resolve(process.env.SHEEPDOG_CLI ?? "dist/cli.cjs");
const runs = Number(process.env.BENCH_RUNS) || 9;
const MB = 1024 * 1024;
const homes = [];

/** JSONL of a busy program ending now, about `bytes` long, oldest first. */
function night(bytes, endMs) {
  const lines = [];
  let size = 0;
  const push = (e) => {
    const line = JSON.stringify(e);
    lines.push(line);
    size += line.length + 1;
  };
  // Built backwards in time from `endMs`, then reversed: the journal ends now.
  let t = endMs;
  const at = () => new Date(t).toISOString();
  for (let m = 0; size < bytes; m++) {
    const pid = 900000 - m;
    const block = [];
    const ev = (e) => block.push({ at: at(), ...e });
    t -= 1000;
    if (m % 7 === 3)
      ev({
        type: "paged",
        kind: "stuck_restart",
        priority: 3,
        title: "p stuck",
        topic: "t",
        id: "x",
      });
    ev({
      type: "hand_over",
      pid,
      context_tokens: 150000 + (m % 40) * 1000,
      note: `item ${m} merged; next up, see LEDGER.md`,
      progress: `sha256:${(m * 7919).toString(16).padStart(16, "0")}`,
      pushed: true,
    });
    for (let k = 60; k > 0; k--) {
      t -= 30_000;
      ev({
        type: "saved",
        pid,
        start_time: `linux:b00t:${pid}`,
        context_tokens: 20000 + k * 2200,
        progress: `sha256:${(m * 31 + k).toString(16).padStart(16, "0")}`,
        pushed: true,
      });
    }
    t -= 2000;
    ev({ type: "claimed", pid, start_time: `linux:b00t:${pid}`, hostname: "studio" });
    t -= 1000;
    ev({
      type: "manager_started",
      reason: "the previous manager handed over at 150000 tokens",
      planned: true,
      launcher: "command",
      pid,
      start_time: `linux:b00t:${pid}`,
    });
    for (const e of block.reverse()) push(e);
  }
  return `${lines.reverse().join("\n")}\n`;
}

/** A program whose state holds `files` ({name: bytes}), all ending now. */
function program(label, files) {
  const home = realpathSync(mkdtempSync(join(tmpdir(), `sheepdog-bench-report-${label}-`)));
  homes.push(home);
  const root = join(home, "big");
  mkdirSync(join(root, ".sheepdog"), { recursive: true, mode: 0o700 });
  writeFileSync(join(root, "program.json"), JSON.stringify({ name: "big" }));
  const now = Date.now();
  let end = now;
  // Older files end where the newer begin.
  for (const [name, bytes] of Object.entries(files)) {
    const text = night(bytes, end);
    writeFileSync(join(root, ".sheepdog", name), text, { mode: 0o600 });
    end = Date.parse(JSON.parse(text.slice(0, text.indexOf("\n"))).at) - 1000;
  }
  return { root, env: { SHEEPDOG_HOME: home, SHEEPDOG_STATE_DIR: join(home, ".state") } };
}

try {
  const one = program("10mb", { "journal.jsonl": 10 * MB - 4096 });
  const rotated = program("rotated", { "journal.jsonl": 2 * MB, "journal.1.jsonl": 10 * MB });
  const size = (p, f) => (statSync(join(p.root, ".sheepdog", f)).size / MB).toFixed(1);
  console.log(
    `journal.jsonl ${size(one, "journal.jsonl")} MB; rotated: ${size(rotated, "journal.1.jsonl")} MB + ${size(rotated, "journal.jsonl")} MB`,
  );
  const sd = (p, ...args) => [process.execPath, CLI, ...args, "--program", p.root];
  const out = (p) => join(p.root, "r.html");
  const cases = [
    { name: "node -e 0", argv: [process.execPath, "-e", "0"] },
    { name: "journal --json (10 MB)", argv: sd(one, "journal", "--json"), env: one.env },
    { name: "report 24h (10 MB)", argv: sd(one, "report", "--out", out(one)), env: one.env },
    { name: "report --json 24h (10 MB)", argv: sd(one, "report", "--json"), env: one.env },
    {
      name: "report 30d, every event (10 MB)",
      argv: sd(one, "report", "--since", "30d", "--out", out(one)),
      env: one.env,
    },
    {
      name: "report 24h (10 + 2 MB, rotated)",
      argv: sd(rotated, "report", "--out", out(rotated)),
      env: rotated.env,
    },
  ];
  const results = report(
    "sheepdog report on a 10 MB journal",
    measure(cases, { runs, warmup: 2 }),
    "node -e 0",
  );
  const bare = results[0].median;
  for (const r of results.slice(1))
    console.log(
      `  ${r.name}: ${(r.median / bare).toFixed(1)}x bare node, ${(r.median - bare).toFixed(0)} ms over it`,
    );
  const [bin, ...args] = sd(one, "report", "--since", "30d", "--json");
  const check = spawnSync(bin, args, {
    env: { ...process.env, ...one.env },
    maxBuffer: 512 * MB,
  });
  if (check.status !== 0) throw new Error(`report --json exited ${check.status}: ${check.stderr}`);
  const t = JSON.parse(check.stdout).programs[0];
  console.log(
    `  (30d: ${t.managers.length} managers, ${t.tokens.length} saves drawn from the journal)`,
  );
} finally {
  for (const h of homes) rmSync(h, { recursive: true, force: true });
}
