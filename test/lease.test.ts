// The lease on the program's git remote (DESIGN §15, issue 21): its compare-and-swap changes
// against a real bare repository, with hosts racing from clones of their own. Only the first
// of several concurrent changes lands; a stale expected sha is refused; a takeover waits for
// ttl + margin and raises the epoch; a commit that is no lease is never taken over.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { leaseTimesOf } from "../src/config/load.js";
import type { RefAt } from "../src/git/ref-cas.js";
import { claimLease, holdLease, type LeaseHost, readLease } from "../src/lease/lease.js";
import { sheepdog, tempDir, tempProgram } from "./helpers/cli.js";
import { bareRemote, gitEnv, gitOut, workRepo } from "./helpers/manager-side.js";

const CFG = leaseTimesOf({ ttl: "15m", margin: "2m" });
const MIN = 60_000;
const REF = "refs/sheepdog/lease/catalog";

/** A remote and `n` hosts, each with its own clone and machine id. */
function fleet(n: number) {
  const home = tempDir();
  const env = gitEnv(home);
  const remote = bareRemote(env);
  const hosts = Array.from({ length: n }, (_, i) => {
    const repo = workRepo(join(home, `host-${i}`), env, remote);
    const at: RefAt = { repo, remote: "origin", ref: REF, what: "lease" };
    const me: LeaseHost = { machine_id: `machine-${i}`, hostname: `host-${i}` };
    return { at, me };
  });
  const onRemote = () => gitOut(remote, ["for-each-ref", "--format=%(objectname)", REF], env);
  return { hosts, onRemote, remote, env };
}

describe("the lease's compare-and-swap on a real remote", () => {
  it("two hosts create it at once: exactly one holds it, the other sees the winner's lease", async () => {
    const { hosts, onRemote } = fleet(2);
    const [a, b] = hosts as [(typeof hosts)[0], (typeof hosts)[0]];
    const now = Date.now();
    const both = await Promise.all([
      holdLease(a.at, CFG, a.me, { now }),
      holdLease(b.at, CFG, b.me, { now }),
    ]);
    const won = both.filter((o) => o.held);
    expect(won).toHaveLength(1);
    expect(won[0]).toMatchObject({ how: "created", lease: { epoch: 1 } });
    const lost = both.find((o) => !o.held);
    // It lost the push, or read the winner's lease before pushing.
    expect(["lost_race", "elsewhere"]).toContain(lost && !lost.held ? lost.why : null);
    const seen = await readLease(a.at);
    expect(seen.sha).toBe(onRemote());
    expect(seen.lease?.machine_id).toBe(won[0]?.held ? won[0].lease.machine_id : "");
  });

  it("the holder renews (same epoch); a push on a stale sha is refused; a fresh lease is left alone", async () => {
    const { hosts } = fleet(2);
    const [a, b] = hosts as [(typeof hosts)[0], (typeof hosts)[0]];
    const t0 = Date.now();
    const first = await holdLease(a.at, CFG, a.me, { now: t0 });
    expect(first).toMatchObject({ held: true, how: "created" });
    const stale = await readLease(a.at);
    const renewed = await holdLease(a.at, CFG, a.me, { now: t0 + MIN });
    expect(renewed).toMatchObject({ held: true, how: "renewed", lease: { epoch: 1 } });
    // Another host's create from a stale view (no lease yet): refused, it gets the holder's.
    const late = await claimLease(b.at, CFG, b.me, t0 + 2 * MIN, { sha: null, lease: null });
    expect(late).toMatchObject({
      held: false,
      why: "lost_race",
      seen: { lease: { machine_id: "machine-0" } },
    });
    // The holder's own renewal from what it saw before: refused on the stale sha, and since
    // what moved it was this machine's own renewal (a second tick), renewed on the fresh one.
    // A later pass (the same instant twice would be the same commit, byte for byte: git dates
    // are whole seconds, and a fast machine makes both within one).
    const again = await claimLease(a.at, CFG, a.me, t0 + MIN + 1000, stale);
    expect(again).toMatchObject({ held: true, how: "renewed", lease: { epoch: 1 } });
    // Another host within ttl + margin of the last renewal: elsewhere, nothing changes.
    const other = await holdLease(b.at, CFG, b.me, { now: t0 + MIN + 1000 + 16 * MIN });
    expect(other).toMatchObject({
      held: false,
      why: "elsewhere",
      lease: { machine_id: "machine-0" },
    });
    expect((await readLease(b.at)).lease?.renewed_at).toBe(new Date(t0 + MIN + 1000).toISOString());
  });

  it("a lease not renewed for ttl + margin is taken over once, epoch + 1, by one of three racing hosts", async () => {
    const { hosts, onRemote } = fleet(4);
    const [holder, ...racers] = hosts as [(typeof hosts)[0], ...(typeof hosts)[0][]];
    const t0 = Date.now();
    expect(await holdLease(holder.at, CFG, holder.me, { now: t0 })).toMatchObject({ held: true });
    const expired = t0 + 17 * MIN + 1000;
    const outcomes = await Promise.all(
      racers.map((h) => holdLease(h.at, CFG, h.me, { now: expired })),
    );
    const won = outcomes.filter((o) => o.held);
    expect(won).toHaveLength(1);
    expect(won[0]).toMatchObject({ how: "taken_over", lease: { epoch: 2 } });
    for (const o of outcomes.filter((x) => !x.held))
      expect(o).toMatchObject({ why: expect.stringMatching(/^(lost_race|elsewhere)$/) });
    const seen = await readLease(holder.at);
    expect(seen.sha).toBe(onRemote());
    expect(seen.lease).toMatchObject({
      epoch: 2,
      machine_id: won[0]?.held ? won[0].lease.machine_id : "",
    });
    // The old holder, back, finds the new epoch elsewhere: it does not overwrite it.
    expect(await holdLease(holder.at, CFG, holder.me, { now: expired + 1000 })).toMatchObject({
      held: false,
      why: "elsewhere",
      lease: { epoch: 2 },
    });
  });

  it("the fast renewal on its own last sha: renewed when nothing moved; after a takeover its push is refused and it defers", async () => {
    const { hosts, onRemote } = fleet(2);
    const [a, b] = hosts as [(typeof hosts)[0], (typeof hosts)[0]];
    const t0 = Date.now();
    const first = await holdLease(a.at, CFG, a.me, { now: t0 });
    if (!first.held) throw new Error("not held");
    const last = { sha: first.sha, lease: first.lease, tree: first.tree };
    const renewed = await holdLease(a.at, CFG, a.me, { now: t0 + MIN, last });
    expect(renewed).toMatchObject({ held: true, how: "renewed", lease: { epoch: 1 } });
    expect(renewed.held && renewed.sha).toBe(onRemote());
    // A tree id this repository lacks (a re-cloned repo) is made anew, not a failure.
    const again = await holdLease(a.at, CFG, a.me, {
      now: t0 + 2 * MIN,
      last: {
        ...(renewed.held ? { sha: renewed.sha, lease: renewed.lease } : last),
        tree: "1".repeat(40),
      },
    });
    expect(again).toMatchObject({ held: true, how: "renewed" });
    // b takes it over once it is old; a's renewal on what it last wrote is refused, and it reads b's.
    const taken = await holdLease(b.at, CFG, b.me, { now: t0 + 20 * MIN });
    expect(taken).toMatchObject({ held: true, how: "taken_over", lease: { epoch: 2 } });
    const stale = again.held ? { sha: again.sha, lease: again.lease, tree: again.tree } : last;
    expect(await holdLease(a.at, CFG, a.me, { now: t0 + 20 * MIN, last: stale })).toMatchObject({
      held: false,
      why: "elsewhere",
      lease: { machine_id: "machine-1", epoch: 2 },
    });
    expect(taken.held && taken.sha).toBe(onRemote());
  });

  it("the holder's ttl counts when it is longer than the reader's (a config being changed)", async () => {
    const { hosts } = fleet(2);
    const [a, b] = hosts as [(typeof hosts)[0], (typeof hosts)[0]];
    const t0 = Date.now();
    expect(
      await holdLease(a.at, leaseTimesOf({ ttl: "60m", margin: "2m" }), a.me, { now: t0 }),
    ).toMatchObject({
      held: true,
    });
    // b's own ttl (15m) + margin has passed, the holder's 60m has not: b waits.
    expect(await holdLease(b.at, CFG, b.me, { now: t0 + 20 * MIN })).toMatchObject({
      held: false,
      why: "elsewhere",
    });
    expect(await holdLease(b.at, CFG, b.me, { now: t0 + 63 * MIN })).toMatchObject({
      held: true,
      how: "taken_over",
    });
  });

  it("a machine cloned from one image (the same machine id, another state folder) is not mistaken for the holder", async () => {
    const { hosts } = fleet(2);
    const [a, b] = hosts as [(typeof hosts)[0], (typeof hosts)[0]];
    const t0 = Date.now();
    const meA = { ...a.me, instance: "aaaa" };
    const clone = { ...a.me, hostname: "clone", instance: "bbbb" };
    expect(await holdLease(a.at, CFG, meA, { now: t0 })).toMatchObject({
      held: true,
      lease: { instance: "aaaa" },
    });
    expect(await holdLease(b.at, CFG, clone, { now: t0 + MIN })).toMatchObject({
      held: false,
      why: "elsewhere",
    });
    expect(await holdLease(a.at, CFG, meA, { now: t0 + MIN })).toMatchObject({
      held: true,
      how: "renewed",
    });
  });

  it("a disk image of the holder (its lease.json copied: machine id and instance alike) does not renew the holder's lease as its own", async () => {
    const { hosts } = fleet(2);
    const [a, b] = hosts as [(typeof hosts)[0], (typeof hosts)[0]];
    const t0 = Date.now();
    const me = { ...a.me, instance: "aaaa" };
    const notes: string[] = [];
    const first = await holdLease(a.at, CFG, me, {
      now: t0,
      own: { known: [], pushing: (sha) => notes.push(sha) },
    });
    if (!first.held) throw new Error("not held");
    expect(notes).toEqual([first.sha]);
    const last = { sha: first.sha, lease: first.lease, tree: first.tree };
    // The holder renews again: its copy's lease.json is now one renewal behind.
    const renewed = await holdLease(a.at, CFG, me, {
      now: t0 + MIN,
      last,
      own: { known: [first.sha], pushing: () => {} },
    });
    expect(renewed).toMatchObject({ held: true, how: "renewed" });
    // The copy: same machine id, same instance, and only the first commit as its own.
    const copy = await holdLease(b.at, CFG, me, {
      now: t0 + MIN,
      last,
      own: { known: [first.sha], pushing: () => {} },
    });
    expect(copy).toMatchObject({ held: false, why: "elsewhere" });
    // The holder itself, with its own commits, still renews.
    const own = renewed.held ? renewed.sha : "";
    expect(
      await holdLease(a.at, CFG, me, {
        now: t0 + 2 * MIN,
        own: { known: [first.sha, own], pushing: () => {} },
      }),
    ).toMatchObject({ held: true, how: "renewed" });
  });

  it("a push the remote refuses while the ref stays put (a hook) is a failing remote, never a lost race", async () => {
    const { hosts, remote } = fleet(1);
    const [a] = hosts as [(typeof hosts)[0]];
    const t0 = Date.now();
    expect(await holdLease(a.at, CFG, a.me, { now: t0 })).toMatchObject({ held: true });
    const hook = join(remote, "hooks", "pre-receive");
    writeFileSync(hook, "#!/bin/sh\necho 'protected ref' >&2\nexit 1\n", { mode: 0o755 });
    await expect(holdLease(a.at, CFG, a.me, { now: t0 + MIN })).rejects.toThrow(
      /refused the push to refs\/sheepdog\/lease\/catalog though the ref had not moved/,
    );
  });

  it("a lease whose renewed_at does not parse has no age: unreadable, never taken over", async () => {
    const { hosts, env } = fleet(1);
    const [a] = hosts as [(typeof hosts)[0]];
    const msg = JSON.stringify({
      machine_id: "x",
      hostname: "x",
      epoch: 1,
      renewed_at: "soon",
      ttl: 1,
    });
    const tree = gitOut(a.at.repo, ["mktree"], env);
    const sha = gitOut(a.at.repo, ["commit-tree", tree, "-m", msg], env);
    gitOut(a.at.repo, ["push", "-q", "origin", `${sha}:${REF}`], env);
    expect(await holdLease(a.at, CFG, a.me, { now: Date.now() })).toEqual({
      held: false,
      why: "unreadable",
      sha,
    });
  });

  it("a ref whose commit is no lease is never taken over", async () => {
    const { hosts } = fleet(1);
    const [a] = hosts as [(typeof hosts)[0]];
    const env = gitEnv(tempDir());
    const tree = gitOut(a.at.repo, ["mktree"], env);
    const sha = gitOut(a.at.repo, ["commit-tree", tree, "-m", "not a lease"], env);
    gitOut(a.at.repo, ["push", "-q", "origin", `${sha}:${REF}`], env);
    expect(await holdLease(a.at, CFG, a.me, { now: Date.now() + 24 * 60 * MIN })).toEqual({
      held: false,
      why: "unreadable",
      sha,
    });
  });
});

describe("lease in program.json", () => {
  it("a ttl under 2 × margin + interval is refused naming lease.ttl (exit 2)", () => {
    const p = tempProgram("catalog", {
      lease: { repo: ".", ttl: "8m", margin: "2m" },
      watchdog: { interval: "5m" },
    });
    const r = sheepdog(["check", "--program", p.root], { env: p.env });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /program\.json: lease\.ttl: expected at least 2 × lease\.margin \+ watchdog\.interval \(9m\), got "8m"/,
    );
    const ok = tempProgram("catalog", { lease: { repo: ".", ttl: "15m" } });
    const json = JSON.parse(
      sheepdog(["check", "--program", ok.root, "--json"], { env: ok.env }).stdout,
    );
    expect(json.warnings ?? []).not.toContainEqual(expect.stringMatching(/lease/));
    expect(json.config.lease).toMatchObject({
      remote: "origin",
      ref: "refs/sheepdog/lease/catalog",
      margin: "2m",
      ttl: "15m",
    });
  });
});
