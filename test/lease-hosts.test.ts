// More than one host (DESIGN §15, issue 21), with hosts of their own on one machine: each a
// private mount and UTS namespace with its own /etc/machine-id and hostname (so the product's
// own machine id differs; there is no identity override), its own $SHEEPDOG_HOME, state folder
// and copy of the program, ticking in a loop as its timer would. The remote is one bare
// repository served by git's smart HTTP on 127.0.0.1 (`git http-backend`), a route per host, so
// the compare-and-swap is the real protocol's and a partition is one host's route cut. A census
// of /proc checks all along that no two managers of the program are alive at once.
import { createHash } from "node:crypto";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { tempDir } from "./helpers/cli.js";
import { namespacesAvailable, stopAllHosts } from "./helpers/hosts.js";
import { leaseWorld, REF, type SimHost, until } from "./helpers/lease-world.js";
import { gitOut, workRepo } from "./helpers/manager-side.js";
import { skipWithout } from "./helpers/tools.js";
import type { Event } from "./helpers/watchdog.js";

const ns = namespacesAvailable();
// ttl ≥ 2 × margin + interval; short, so a failover takes seconds, with room for a loaded machine.
const TTL_MS = 6000;
const MARGIN_MS = 2000;
const INTERVAL_MS = 1000;

const TIMES = { ttlMs: TTL_MS, marginMs: MARGIN_MS, intervalMs: INTERVAL_MS };
const cleanups: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  stopAllHosts();
});

/** A world closed after its test; `check()` asserts the census saw no two managers at once. */
async function world(names: string[], skew: Record<string, number> = {}) {
  const w = await leaseWorld(names, TIMES, skew);
  cleanups.push(() => w.close());
  const check = () => {
    const r = w.check();
    expect(r.violations, "two managers of the program were alive at once").toEqual([]);
    expect(r.samples).toBeGreaterThan(10);
    return r;
  };
  return { ...w, check };
}

const claimedBy = (h: SimHost) => h.journal("claimed").at(-1);
const at = (e: Event | undefined) => (e ? Date.parse(e.at) : Number.NaN);

/** The failover times measured here, printed once for docs/hosts.md. */
const failovers: { scenario: string; ms: number }[] = [];
afterEach(() => {
  if (failovers.length > 0)
    process.stderr.write(
      `lease failovers: ${failovers.map((f) => `${f.scenario} ${(f.ms / 1000).toFixed(1)}s`).join(", ")}\n`,
    );
  failovers.length = 0;
});

describe.skipIf(
  skipWithout(
    "simulated-host (mount namespace)",
    ns.ok ? null : ns.why,
    "run as root on Linux with util-linux (unshare, nsenter)",
  ),
)("one program staged on several hosts (namespaces, git smart HTTP)", () => {
  it("two hosts start together: one holds the lease and runs the manager, the other defers", async () => {
    const w = await world(["mini-1", "mini-2"]);
    for (const h of w.hosts) h.start();
    const winner = await until("a manager to claim", () => w.hosts.find((h) => claimedBy(h)));
    const other = w.hosts.find((h) => h !== winner) as SimHost;
    await until("three ticks of the other host", () => other.reports.length >= 3);
    for (const h of w.hosts) await h.stop();
    w.check();
    expect(winner.journal("lease_acquired")).toEqual([
      expect.objectContaining({ how: "created", epoch: 1 }),
    ]);
    expect(other.journal("lease_acquired")).toEqual([]);
    expect(other.journal("manager_starting")).toEqual([]);
    expect(other.reports.every((r) => r.decision === "leased_elsewhere")).toBe(true);
    expect(other.reports.at(-1)?.reason).toMatch(
      new RegExp(`^the lease is held by ${winner.name} \\(epoch 1, renewed \\d+s ago\\)`),
    );
    expect(w.onRemote()).toMatchObject({ hostname: winner.name, epoch: 1 });
    // The lease names the winner's own machine id: the product read /etc/machine-id in its namespace.
    const id = createHash("sha256").update(`sheepdog:${winner.host.machineId}`).digest("hex");
    expect(w.onRemote()?.machine_id).toBe(id.slice(0, 16));
  });

  it("the holder's host dies (its ticks and its manager with it): the other takes over after ttl + margin, then starts", async () => {
    const w = await world(["mini-1", "mini-2"]);
    const [a, b] = w.hosts as [SimHost, SimHost];
    a.start();
    await until("mini-1's manager to claim", () => claimedBy(a));
    b.start();
    await until("mini-2 to defer", () => b.reports.some((r) => r.decision === "leased_elsewhere"));
    await a.stop();
    const lastRenewal = Date.parse(w.onRemote()?.renewed_at ?? "");
    const died = Date.now();
    await a.kill();
    const claim = await until("mini-2's manager to claim", () => claimedBy(b));
    await b.stop();
    w.check();
    const taken = b.journal("lease_acquired")[0];
    expect(taken).toMatchObject({ how: "taken_over", epoch: 2, from: "mini-1", from_epoch: 1 });
    // Never sooner than ttl + margin after mini-1's last renewal (same clock here).
    expect(at(taken) - lastRenewal).toBeGreaterThanOrEqual(TTL_MS + MARGIN_MS);
    expect(at(b.journal("manager_starting")[0])).toBeGreaterThanOrEqual(at(taken));
    failovers.push({ scenario: "host died", ms: at(claim) - died });
  });

  it("a partition: the holder fences itself before the other takes over; healed, it neither overwrites the lease nor starts", async () => {
    const w = await world(["mini-1", "mini-2"]);
    const [a, b] = w.hosts as [SimHost, SimHost];
    a.start();
    const first = await until("mini-1's manager to claim", () => claimedBy(a));
    b.start();
    await until("mini-2 to defer", () => b.reports.some((r) => r.decision === "leased_elsewhere"));
    const cut = Date.now();
    w.http.partition("mini-1", true);
    const claim = await until("mini-2's manager to claim", () => claimedBy(b));
    const lost = a.journal("lease_lost")[0];
    expect(lost).toMatchObject({ cause: "unreachable" });
    const stopped = a.journal("manager_stopped")[0];
    expect(stopped).toMatchObject({ pid: first.pid, decision: "leased_elsewhere" });
    const taken = b.journal("lease_acquired")[0];
    expect(taken).toMatchObject({ how: "taken_over", epoch: 2 });
    expect(at(stopped)).toBeLessThan(at(taken));
    failovers.push({ scenario: "partition", ms: at(claim) - cut });
    // Healed: mini-1 reads mini-2's newer lease and defers; the remote keeps mini-2's.
    w.http.partition("mini-1", false);
    const seen = a.reports.length;
    await until("three ticks of mini-1 after the heal", () => a.reports.length >= seen + 3);
    for (const h of w.hosts) await h.stop();
    w.check();
    const after = a.reports.slice(seen + 1);
    expect(after.every((r) => r.decision === "leased_elsewhere" && r.effects?.length === 0)).toBe(
      true,
    );
    expect(a.journal("manager_starting")).toHaveLength(1);
    expect(w.onRemote()).toMatchObject({ hostname: "mini-2", epoch: 2 });
  });

  it("three hosts race for one expired lease: exactly one takes it over (epoch + 1) and starts", async () => {
    const w = await world(["mini-1", "mini-2", "mini-3"]);
    // A lease left by a machine that is gone, long expired.
    const old = JSON.stringify({
      machine_id: "gone0000machine0",
      hostname: "mini-0",
      epoch: 7,
      renewed_at: new Date(Date.now() - 60_000).toISOString(),
      ttl: TTL_MS,
    });
    const seed = workRepo(join(tempDir(), "seed"), w.genv, w.remote);
    const tree = gitOut(seed, ["mktree"], w.genv);
    const sha = gitOut(seed, ["commit-tree", tree, "-m", old], w.genv);
    gitOut(seed, ["push", "-q", "origin", `${sha}:${REF}`], w.genv);
    // All three at once, twice; then on their timers (the winner must go on renewing: a claim
    // is refused once the hold, 4 s here, has passed without a renewal).
    for (let round = 0; round < 2; round++) await Promise.all(w.hosts.map((h) => h.tick()));
    for (const h of w.hosts) h.start();
    const winner = await until("a manager to claim", () => w.hosts.find((h) => claimedBy(h)));
    for (const h of w.hosts) await h.stop();
    w.check();
    const takeovers = w.hosts.flatMap((h) => h.journal("lease_acquired"));
    expect(takeovers).toEqual([
      expect.objectContaining({ how: "taken_over", epoch: 8, from: "mini-0", from_epoch: 7 }),
    ]);
    expect(winner.journal("lease_acquired")).toHaveLength(1);
    // Only the winner ever started a manager.
    for (const h of w.hosts.filter((x) => x !== winner))
      expect(h.journal("manager_starting"), h.name).toEqual([]);
    expect(w.onRemote()).toMatchObject({ hostname: winner.name, epoch: 8 });
  });

  it("clocks apart by less than the margin: no takeover of a live holder, and a partition still fences before the takeover", async () => {
    // mini-2's clock 0.8 s ahead of mini-1's: it sees mini-1's lease 0.8 s older than it is.
    const w = await world(["mini-1", "mini-2"], { "mini-1": -400, "mini-2": 400 });
    const [a, b] = w.hosts as [SimHost, SimHost];
    a.start();
    await until("mini-1's manager to claim", () => claimedBy(a));
    b.start();
    // A stretch of healthy renewals: mini-2 never takes over.
    await until("five ticks of mini-2", () => b.reports.length >= 5);
    expect(b.journal("lease_acquired")).toEqual([]);
    w.http.partition("mini-1", true);
    await until("mini-2's manager to claim", () => claimedBy(b));
    for (const h of w.hosts) await h.stop();
    w.check();
    // By the one true clock (each journal's stamps less its host's skew).
    const fenced = at(a.journal("manager_stopped")[0]) + 400;
    const taken = at(b.journal("lease_acquired")[0]) - 400;
    expect(fenced).toBeLessThan(taken);
  });
});
