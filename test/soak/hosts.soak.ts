// The soak's two-host mode (issue 21): one program staged on SOAK_HOSTS simulated hosts (2),
// each ticking as its timer would, for SOAK_MINUTES, while a seeded PRNG cuts the holder's
// power (its ticks and its manager die; it boots again later, the same machine), cuts its
// network (its route to the remote, for a while), cuts a standby's power, or kills the manager
// alone. One fault at a time: the next waits for a manager again. Checked all along: never two
// live managers (the census), and a manager again within ttl + margin + a generous grace.
// Prints the faults and the failover times (median, worst). Run by `npm run soak -- --hosts 2`.
import { writeFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, expect, it } from "vitest";
import { namespacesAvailable, stopAllHosts } from "../helpers/hosts.js";
import { leaseWorld, type SimHost } from "../helpers/lease-world.js";

const MINUTES = Number(process.env.SOAK_MINUTES) || 3;
const SEED = Number(process.env.SOAK_SEED) || Date.now() % 2 ** 31;
const N = Number(process.env.SOAK_HOSTS) || 2;
// The crash-loop guard would stand a program down after three kills in an hour: the soak's
// faults are many, and what it checks is the lease, so the guard allows them.
const TIMES = {
  ttlMs: 6000,
  marginMs: 2000,
  intervalMs: 1000,
  watchdog: { crash_loop: { starts: 1000, within: "1h" } },
};
/** A manager again within this long after a fault, or it is a violation (failover is ~8–10 s). */
const RECOVERY_LIMIT_MS = 60_000;

function prng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

afterAll(() => stopAllHosts());

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? Number.NaN : (s[Math.floor((s.length - 1) / 2)] as number);
};

it(`two-host soak: ${N} hosts, ${MINUTES} min, seed ${SEED}`, async () => {
  const ns = namespacesAvailable();
  if (!ns.ok) throw new Error(`the two-host soak needs mount namespaces: ${ns.why}`);
  const random = prng(SEED);
  const pick = <T>(xs: T[]) => xs[Math.floor(random() * xs.length)] as T;
  const names = Array.from({ length: N }, (_, i) => `mini-${i + 1}`);
  const w = await leaseWorld(names, TIMES);
  for (const h of w.hosts) h.start();
  const holderHost = (): SimHost | undefined => {
    const lease = w.onRemote();
    return w.hosts.find((h) => h.up && h.name === lease?.hostname);
  };
  /**
   * How long until one manager runs again, and whether it is another than `old` (a failover or
   * a restart); `same()` says when the old one staying is the right outcome (a partition that
   * healed before the holder had to fence).
   */
  const managerBack = async (since: number, old: number | undefined, same = () => false) => {
    for (;;) {
      const now = w.managers();
      if (now.length === 1 && (now[0] !== old || same()))
        return { ms: Date.now() - since, replaced: now[0] !== old };
      if (Date.now() - since > RECOVERY_LIMIT_MS) return null;
      await sleep(100);
    }
  };
  const faults: { kind: string; host: string; recovery_ms: number | null; replaced: boolean }[] =
    [];
  const pending: Promise<void>[] = [];
  const end = Date.now() + MINUTES * 60_000;
  expect(await managerBack(Date.now(), undefined)).not.toBeNull();
  while (Date.now() < end) {
    await sleep(2000 + random() * 6000);
    const holder = holderHost();
    const standby = w.hosts.filter((h) => h.up && h !== holder);
    const kinds = ["power_holder", "network_holder", "kill_manager"];
    if (standby.length > 0) kinds.push("power_standby");
    const kind = pick(kinds);
    const at = Date.now();
    const old = w.managers()[0];
    let host = holder?.name ?? "-";
    let same = () => false;
    if (kind === "power_holder" && holder) {
      await holder.kill();
      const down = 2000 + random() * 15_000;
      pending.push(sleep(down).then(() => holder.boot()));
    } else if (kind === "network_holder" && holder) {
      w.http.partition(holder.name, true);
      const down = 2000 + random() * 15_000;
      let healed = false;
      same = () => healed;
      pending.push(
        sleep(down).then(() => {
          w.http.partition(holder.name, false);
          healed = true;
        }),
      );
    } else if (kind === "power_standby") {
      const s = pick(standby);
      host = s.name;
      await s.kill();
      same = () => true; // the manager is not on it: it runs on
      pending.push(sleep(2000 + random() * 10_000).then(() => s.boot()));
    } else {
      const pid = w.managers()[0];
      if (pid !== undefined) process.kill(pid, "SIGKILL");
    }
    const back = await managerBack(at, old, same);
    faults.push({
      kind:
        back?.replaced === false && kind === "network_holder"
          ? "network_holder (healed first)"
          : kind,
      host,
      recovery_ms: back?.ms ?? null,
      replaced: back?.replaced ?? false,
    });
  }
  await Promise.all(pending);
  const census = w.check();
  await w.close();
  const by = new Map<string, number[]>();
  for (const f of faults) by.set(f.kind, [...(by.get(f.kind) ?? []), f.recovery_ms ?? Number.NaN]);
  const lines = [...by].map(
    ([kind, ms]) =>
      `  ${kind}: ${ms.length} faults, manager again after median ${(median(ms) / 1000).toFixed(1)}s, worst ${(Math.max(...ms) / 1000).toFixed(1)}s`,
  );
  // A failover: the holder lost (power or network) and another manager running in its place.
  const failovers = faults
    .filter((f) => (f.kind === "power_holder" || f.kind === "network_holder") && f.replaced)
    .map((f) => f.recovery_ms ?? Number.NaN);
  const summary = {
    seed: SEED,
    hosts: N,
    minutes: MINUTES,
    faults: faults.length,
    samples: census.samples,
    violations: census.violations.length,
    unrecovered: faults.filter((f) => f.recovery_ms === null).length,
    failover_median_ms: median(failovers),
    failover_worst_ms: Math.max(...failovers),
  };
  process.stderr.write(
    `two-host soak, seed ${SEED}: ${faults.length} faults, ${census.samples} census samples, ${census.violations.length} violations, ${summary.unrecovered} unrecovered\n${lines.join("\n")}\n  failover (holder lost): median ${(summary.failover_median_ms / 1000).toFixed(1)}s, worst ${(summary.failover_worst_ms / 1000).toFixed(1)}s\n`,
  );
  if (process.env.SOAK_OUT)
    writeFileSync(process.env.SOAK_OUT, JSON.stringify({ summary, faults }, null, 1));
  expect(census.violations, "two managers alive at once").toEqual([]);
  expect(summary.unrecovered, "a fault after which no manager ran again").toBe(0);
});
