// What the lease costs (DESIGN §15, issue 21): `tick --all` over 1, 10 and 50 healthy programs,
// each with a lease on a real bare remote that the tick renews, against the same programs
// without one; the ratio is the renewal's cost. A renewal is one commit and one push on the sha
// this host wrote last (the fast path); the remote is a local bare repository, so a network's
// round trips come on top (two per renewal: the push's advertisement and its update).
// Run: node bench/lease.mjs   (BENCH_RUNS, default 7)
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { measure, report } from "./lib.mjs";

const CLI = resolve(process.env.SHEEPDOG_CLI ?? "dist/cli.cjs");
const runs = Number(process.env.BENCH_RUNS) || 7;
const holder = spawn(process.execPath, ["-e", "setTimeout(() => {}, 3600e3)"], { stdio: "ignore" });
const homes = [];

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { encoding: "utf8", ...opts });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(" ")}: ${r.stderr}`);
  return r.stdout;
}

/** A $SHEEPDOG_HOME with `n` healthy programs, with a lease each (on one bare remote) or none. */
function home(n, leased) {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), `sheepdog-bench-lease-${n}-`)));
  homes.push(dir);
  const gitconfig = join(dir, ".gitconfig");
  writeFileSync(gitconfig, "[init]\n\tdefaultBranch = main\n");
  const env = {
    SHEEPDOG_HOME: dir,
    SHEEPDOG_STATE_DIR: join(dir, ".state"),
    GIT_CONFIG_GLOBAL: gitconfig,
    GIT_CONFIG_NOSYSTEM: "1",
  };
  const full = { ...process.env, ...env };
  const remote = join(dir, "remote.git");
  if (leased) run("git", ["init", "-q", "--bare", remote], { env: full });
  for (let i = 0; i < n; i++) {
    const root = join(dir, `p${String(i).padStart(2, "0")}`);
    mkdirSync(root);
    const config = { name: `p${i}`, manager: { command: ["true"] } };
    writeFileSync(join(root, "program.json"), JSON.stringify(config));
    run(
      process.execPath,
      [CLI, "claim", "acquire", "--pid", String(holder.pid), "--program", root],
      { env: full },
    );
    run(process.execPath, [CLI, "save", "--pid", String(holder.pid), "--program", root], {
      env: full,
    });
    if (!leased) continue;
    // Each program its own clone of the one remote, as programs on a host usually have.
    run("git", ["clone", "-q", remote, join(root, "ledger")], { env: full });
    const lease = { repo: "ledger", ttl: "15m" };
    writeFileSync(join(root, "program.json"), JSON.stringify({ ...config, lease }));
  }
  // The first tick makes the leases; every later one renews them.
  if (leased) run(process.execPath, [CLI, "tick", "--all"], { env: full });
  return env;
}

try {
  const cases = [];
  for (const n of [1, 10, 50]) {
    cases.push(
      {
        name: `tick --all (${n})`,
        argv: [process.execPath, CLI, "tick", "--all"],
        env: home(n, false),
      },
      {
        name: `tick --all (${n}, leased)`,
        argv: [process.execPath, CLI, "tick", "--all"],
        env: home(n, true),
      },
    );
  }
  const results = report(
    "tick with a lease renewal vs a plain tick",
    measure(cases, { runs, warmup: 1 }),
  );
  for (const n of [1, 10, 50]) {
    const plain = results.find((r) => r.name === `tick --all (${n})`).median;
    const leased = results.find((r) => r.name === `tick --all (${n}, leased)`).median;
    console.log(
      `  ${String(n).padStart(2)} programs: leased / plain ${(leased / plain).toFixed(2)}x; ${((leased - plain) / n).toFixed(1)} ms per renewal`,
    );
  }
} finally {
  holder.kill("SIGKILL");
  for (const h of homes) rmSync(h, { recursive: true, force: true });
}
