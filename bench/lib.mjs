// A small benchmark harness: warm-up, then alternating runs, medians, and ratios to a baseline.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";

/** Runs argv once and returns the wall time in ms (throws if it exits non-zero unless allowed). */
export function timeOnce(argv, { env, input, cwd, allowFail = false } = {}) {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(argv[0], argv.slice(1), {
    env: { ...process.env, ...env },
    input: input ?? "",
    cwd,
    stdio: ["pipe", "ignore", "pipe"],
  });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.status !== 0 && !allowFail)
    throw new Error(`${argv.join(" ")} exited ${r.status}: ${r.stderr}`);
  return ms;
}

export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/**
 * Measures each case `runs` times after `warmup` runs, interleaving cases so drift in machine
 * load affects all alike. cases: [{ name, argv, env?, input?, cwd?, allowFail? }]. Returns
 * [{ name, median, min, runs }].
 */
export function measure(cases, { runs = 15, warmup = 3 } = {}) {
  const times = new Map(cases.map((c) => [c.name, []]));
  for (let i = 0; i < warmup; i++) for (const c of cases) timeOnce(c.argv, c);
  for (let i = 0; i < runs; i++) for (const c of cases) times.get(c.name).push(timeOnce(c.argv, c));
  return cases.map((c) => {
    const t = times.get(c.name);
    return { name: c.name, median: median(t), min: Math.min(...t), runs: t.length };
  });
}

/** Prints a table of medians with ratios to the named baseline. */
export function report(title, results, baselineName) {
  const base = results.find((r) => r.name === baselineName)?.median;
  console.log(`\n${title}`);
  const w = Math.max(...results.map((r) => r.name.length));
  for (const r of results) {
    const ratio = base ? `${(r.median / base).toFixed(2)}x` : "";
    console.log(
      `  ${r.name.padEnd(w)}  ${r.median.toFixed(1).padStart(8)} ms  ${ratio.padStart(7)}`,
    );
  }
  return results;
}

/** The whole JSON lines of a JSONL file (a torn or blank line skipped); none when it is absent. */
export function jsonLines(path) {
  let text;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    return [];
  }
  return text
    .split("\n")
    .filter(Boolean)
    .flatMap((l) => {
      try {
        return [JSON.parse(l)];
      } catch {
        return [];
      }
    });
}
