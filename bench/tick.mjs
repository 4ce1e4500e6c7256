// A no-op tick (a healthy manager: a live process holding the claim with a fresh heartbeat)
// for 1, 10 and 50 programs with --all, against bare `node -e 0`.
// Goals: one program ≤ 2.5× bare node; 50 programs ≤ 4× the one-program time.
// Run: SHEEPDOG_CLI=/tmp/sd-x/cli.cjs node bench/tick.mjs   (default: dist/cli.cjs, what the installed timer runs)
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { measure, report } from "./lib.mjs";

const CLI = resolve(process.env.SHEEPDOG_CLI ?? "dist/cli.cjs");
const runs = Number(process.env.BENCH_RUNS) || 15;
const holder = spawn(process.execPath, ["-e", "setTimeout(() => {}, 3600e3)"], { stdio: "ignore" });
const homes = [];

function sd(env, ...args) {
  const r = spawnSync(process.execPath, [CLI, ...args], { env: { ...process.env, ...env } });
  if (r.status !== 0) throw new Error(`sheepdog ${args.join(" ")}: ${r.stderr}`);
}

/** A $SHEEPDOG_HOME with `n` healthy programs. */
function home(n) {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), `sheepdog-bench-tick-${n}-`)));
  homes.push(dir);
  const env = { SHEEPDOG_HOME: dir, SHEEPDOG_STATE_DIR: join(dir, ".state") };
  for (let i = 0; i < n; i++) {
    const root = join(dir, `p${String(i).padStart(2, "0")}`);
    mkdirSync(root);
    writeFileSync(
      join(root, "program.json"),
      JSON.stringify({ name: `p${i}`, manager: { command: ["true"] } }),
    );
    sd(env, "claim", "acquire", "--pid", String(holder.pid), "--program", root);
    sd(env, "save", "--pid", String(holder.pid), "--program", root);
  }
  return env;
}

try {
  const cases = [{ name: "node -e 0", argv: [process.execPath, "-e", "0"] }];
  for (const n of [1, 10, 50]) {
    cases.push({
      name: `tick --all (${n})`,
      argv: [process.execPath, CLI, "tick", "--all"],
      env: home(n),
    });
  }
  const results = report("no-op tick (healthy manager)", measure(cases, { runs }), "node -e 0");
  const one = results.find((r) => r.name === "tick --all (1)").median;
  const fifty = results.find((r) => r.name === "tick --all (50)").median;
  const bare = results.find((r) => r.name === "node -e 0").median;
  console.log(`\n  1 program / bare node:   ${(one / bare).toFixed(2)}x (goal ≤ 2.5x)`);
  console.log(`  50 programs / 1 program: ${(fifty / one).toFixed(2)}x (goal ≤ 4x)`);
} finally {
  holder.kill("SIGKILL");
  for (const h of homes) rmSync(h, { recursive: true, force: true });
}
