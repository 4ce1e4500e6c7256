import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { sheepdog, sheepdogAsync, spawnCli } from "./helpers/cli.js";
import { bareRemote, gitEnv, gitOut, gitTry, workRepo } from "./helpers/manager-side.js";
import { type NtfyServer, ntfyServer } from "./helpers/ntfy-server.js";
import { startWatch } from "./helpers/watch.js";
import {
  holder,
  isAlive,
  killStarted,
  managerProgram,
  ofType,
  tickAsync,
  waitFor,
} from "./helpers/watchdog.js";

const REF = "refs/sheepdog/lease/catalog";
const cleanups: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A leased program on a real bare remote, its clock under the test's hand, pages to ntfy. */
async function leased(lease: Record<string, unknown> = {}, watchdog: Record<string, unknown> = {}) {
  const server: NtfyServer = await ntfyServer();
  cleanups.push(() => server.stop());
  const p = managerProgram(
    ["--save-every", "30"],
    { interval: "1s", ...watchdog },
    {
      // ttl 30 s: a loaded machine's ticks take seconds; time that must pass is stepped.
      lease: { repo: "ledger", ttl: "30s", margin: "2s", ...lease },
      page: { ntfy: { server: server.url, topic: "catalog" } },
    },
    "catalog",
  );
  cleanups.push(() => killStarted(p.stateDir));
  const genv = gitEnv(p.home);
  const remote = bareRemote(genv);
  const ledger = workRepo(join(p.root, "ledger"), genv, remote);
  const clock = join(p.home, "clock-step");
  writeFileSync(clock, "0");
  const env = { ...p.env, ...genv, SHEEPDOG_CLOCK_FILE: clock };
  let offset = 0;
  const step = (ms: number) => {
    offset += ms;
    writeFileSync(clock, String(offset));
  };
  const onRemote = () =>
    gitOut(remote, ["for-each-ref", "--format=%(objectname) %(contents)", REF], genv);
  /** Writes another machine's lease on the remote, by compare-and-swap as sheepdog would. */
  const foreign = (epoch: number, renewedAgoMs: number) => {
    const at = new Date(Date.now() + offset - renewedAgoMs).toISOString();
    const msg = JSON.stringify({
      machine_id: "0ther0machine000",
      hostname: "mini-2",
      epoch,
      renewed_at: at,
      ttl: 8000,
    });
    const tree = gitOut(ledger, ["mktree"], genv);
    const sha = gitOut(ledger, ["commit-tree", tree, "-m", msg], genv);
    // A watcher renewing meanwhile can win the race: read again and retry, as a host would.
    for (let attempt = 0; ; attempt++) {
      const was = gitOut(ledger, ["ls-remote", "origin", REF], genv).split("\t")[0] ?? "";
      const r = gitTry(
        ledger,
        ["push", "-q", `--force-with-lease=${REF}:${was}`, "origin", `${sha}:${REF}`],
        genv,
      );
      if (r.code === 0) return sha;
      if (attempt >= 10) throw new Error(`cannot write the foreign lease: ${r.stderr}`);
    }
  };
  const tick = async () => {
    const r = await tickAsync(env);
    expect(r.code, r.stderr).toBe(0);
    return r.report;
  };
  const claimHolder = async () => {
    await waitFor("the manager to claim", () => holder(p.stateDir), 15_000);
    return JSON.parse(readFileSync(join(p.stateDir, "claim", "holder.json"), "utf8"));
  };
  return { ...p, env, server, remote, ledger, step, onRemote, foreign, tick, claimHolder };
}

/** doctor's lease check (it reads lease.json: no git). */
const doctorLease = (env: NodeJS.ProcessEnv) =>
  (JSON.parse(sheepdog(["doctor", "--json"], { env }).stdout).checks as { check: string }[]).find(
    (c) => c.check === "lease",
  );

const localLease = (stateDir: string) =>
  JSON.parse(readFileSync(join(stateDir, "lease.json"), "utf8"));

describe("the lease through real ticks (one host)", () => {
  it("a tick makes the lease before it starts; the claim records its epoch; save answers with it; status --fleet lists it", async () => {
    const p = await leased();
    const r = await p.tick();
    expect(r.decision).toBe("start");
    const types = ofType(p.stateDir, "lease_acquired").concat(
      ofType(p.stateDir, "manager_starting"),
    );
    expect(types.map((e) => e.type)).toEqual(["lease_acquired", "manager_starting"]);
    expect(ofType(p.stateDir, "lease_acquired")[0]).toMatchObject({
      how: "created",
      epoch: 1,
      ref: REF,
    });
    expect(p.onRemote()).toMatch(/"epoch":1/);
    expect(localLease(p.stateDir)).toMatchObject({ held: true, epoch: 1, hold_ms: 28_000 });
    const h = await p.claimHolder();
    expect(h.lease_epoch).toBe(1);
    const save = sheepdog(["save", "--pid", String(h.pid)], { env: p.env });
    expect(JSON.parse(save.stdout).lease).toEqual({ held_here: true, epoch: 1, host: hostname() });
    // The next tick renews it (same epoch) and the manager is left alone.
    const renewed = p.onRemote();
    p.step(1000);
    expect((await p.tick()).decision).toBe("ok");
    expect(p.onRemote()).not.toBe(renewed);
    expect(p.onRemote()).toMatch(/"epoch":1/);
    expect(ofType(p.stateDir, "lease_acquired")).toHaveLength(1);
    const fleet = await sheepdogAsync(["status", "--fleet", "--json"], { env: p.env });
    expect(fleet.code, fleet.stderr).toBe(0);
    expect(JSON.parse(fleet.stdout)).toMatchObject({
      leases: [{ program: "catalog", ref: REF, hostname: hostname(), epoch: 1, expired: false }],
      errors: [],
    });
    const human = await sheepdogAsync(["status", "--fleet"], { env: p.env });
    expect(human.stdout).toMatch(/^PROGRAM +HOST +EPOCH/);
    expect(human.stdout).toMatch(/catalog +\S+ +1 .* fresh/);
    expect((await sheepdogAsync(["status"], { env: p.env })).stdout).toMatch(
      /LEASE[\s\S]*held here \(epoch 1\)/,
    );
    expect(doctorLease(p.env)).toMatchObject({
      status: "ok",
      detail: expect.stringMatching(/^held here \(epoch 1\), asked \d+s ago$/),
    });
  });

  it("tick --every longer than the lease allows says so on stderr at every tick (ttl 30 s, margin 2 s: up to 26 s)", async () => {
    const p = await leased();
    const slow = await tickAsync(p.env, ["--every", "1m", "--dry-run"]);
    expect(slow.code, slow.stderr).toBe(0);
    expect(slow.stderr).toContain(
      "sheepdog tick: catalog: --every 1m is too seldom for lease.ttl 30s: another host may take the lease over before this one renews it (it needs ttl ≥ 2 × margin + the cadence, 1m4s)",
    );
    const fits = await tickAsync(p.env, ["--every", "26s", "--dry-run"]);
    expect(fits.code, fits.stderr).toBe(0);
    expect(fits.stderr).not.toMatch(/too seldom/);
  });

  it("a pass within half an interval of the renewal (a watch pass woken by a save) asks no git; the next interval's renews", async () => {
    const p = await leased({ ttl: "10m", margin: "2m" }, { interval: "1m" });
    expect((await p.tick()).decision).toBe("start");
    const made = p.onRemote();
    p.step(20_000);
    await p.tick();
    expect(p.onRemote()).toBe(made);
    p.step(15_000); // 35 s after the renewal: past half the interval
    await p.tick();
    expect(p.onRemote()).not.toBe(made);
    expect(p.onRemote()).toMatch(/"epoch":1/);
  });

  it("another machine's newer epoch: its manager is fenced at once, lease_lost paged, wait wakes, nothing starts, a claim by hand is refused", async () => {
    const p = await leased();
    await p.tick();
    const h = await p.claimHolder();
    const waiting = spawnCli(["wait", "--every", "1h", "--pid", String(h.pid)], { env: p.env });
    const waiter = waiting.child;
    cleanups.push(() => {
      waiter.kill("SIGKILL");
    });
    p.foreign(2, 0);
    // A dry run asks the remote and says what a tick would do, and changes nothing.
    const onRemote = p.onRemote();
    const dry = await tickAsync(p.env, ["--dry-run"]);
    expect(dry.report).toMatchObject({ decision: "leased_elsewhere" });
    expect(dry.report.actions).toEqual([
      "would journal lease_lost",
      "would keep evidence",
      `would stop the holder pid ${h.pid}`,
      "would break the claim",
    ]);
    expect(isAlive(h.pid, h.start_time)).toBe(true);
    expect(p.onRemote()).toBe(onRemote);
    expect(localLease(p.stateDir)).toMatchObject({ held: true });
    // Past half the 1 s interval since the first tick's renewal, which a fast machine's steps
    // here can all fit in: a pass that soon would rightly not ask the remote.
    p.step(1000);
    const r = await p.tick();
    expect(r.decision).toBe("leased_elsewhere");
    expect(r.reason).toMatch(
      /this host lost the lease: taken over by mini-2 \(epoch 2\); its manager pid \d+ is stopped/,
    );
    expect(r.effects).toEqual(["lease_lost", "keep_evidence", "stop:holder", "break_claim"]);
    expect(isAlive(h.pid, h.start_time)).toBe(false);
    const stopped = ofType(p.stateDir, "manager_stopped")[0];
    expect(stopped).toMatchObject({
      pid: h.pid,
      decision: "leased_elsewhere",
      evidence: expect.any(String),
    });
    expect(ofType(p.stateDir, "lease_lost")).toEqual([
      expect.objectContaining({ cause: "elsewhere", holder: "mini-2", epoch: 2 }),
    ]);
    expect(p.server.delivered.map((m) => m.title)).toContain("catalog: this host lost the lease");
    await waitFor("wait to wake", () => waiting.stdout().includes("\n"), 10_000);
    expect(JSON.parse(waiting.stdout())).toMatchObject({
      event: expect.stringMatching(/^(lease_lost|claim_lost)$/),
    });
    // Fenced: nothing starts while mini-2's lease is fresh, and a manager started by hand
    // cannot claim (exit 3).
    p.step(1000);
    const again = await p.tick();
    expect(again).toMatchObject({ decision: "leased_elsewhere", effects: [] });
    expect(again.reason).toMatch(
      /^the lease is held by mini-2 \(epoch 2, renewed \d+s ago\): nothing starts here$/,
    );
    expect(ofType(p.stateDir, "lease_lost")).toHaveLength(1);
    expect(ofType(p.stateDir, "manager_starting")).toHaveLength(1);
    const byHand = sheepdog(["claim", "acquire", "--pid", String(process.pid)], { env: p.env });
    expect(byHand.code).toBe(3);
    expect(byHand.stderr).toMatch(
      /the lease is not held by this host \(it is held by mini-2 \(epoch 2\)\)/,
    );
  });

  it("a partition: it keeps the lease while the next tick is inside ttl − margin, fences before it, and after healing leaves the newer lease alone", async () => {
    const p = await leased();
    await p.tick();
    const h = await p.claimHolder();
    const aside = `${p.remote}.away`;
    renameSync(p.remote, aside); // the remote is gone for this host
    p.step(1000);
    const kept = await p.tick();
    expect(kept.decision).toBe("ok");
    expect(localLease(p.stateDir)).toMatchObject({
      held: true,
      error: expect.stringMatching(/^lease: cannot (read|push)/),
    });
    // 27.5 s after the renewal: the next tick (1 s) would be past ttl − margin (28 s), so now.
    p.step(26_500);
    const fenced = await p.tick();
    expect(fenced.decision).toBe("leased_elsewhere");
    expect(fenced.reason).toMatch(
      /this host lost the lease: no renewal for \d+s: the remote cannot be reached/,
    );
    expect(isAlive(h.pid, h.start_time)).toBe(false);
    expect(ofType(p.stateDir, "lease_lost")[0]).toMatchObject({ cause: "unreachable" });
    const save = sheepdog(["save", "--pid", String(process.pid)], { env: p.env });
    expect(JSON.parse(save.stdout).lease).toMatchObject({ held_here: false });
    expect(doctorLease(p.env)).toMatchObject({
      status: "warn",
      detail: expect.stringMatching(/remote cannot be reached .*: this host cannot take over/),
    });
    // Healed, with another host's takeover there: it is left alone, and nothing starts.
    renameSync(aside, p.remote);
    const theirs = p.foreign(2, 0);
    p.step(1000);
    const healed = await p.tick();
    expect(healed).toMatchObject({ decision: "leased_elsewhere", effects: [] });
    expect(p.onRemote().split(" ")[0]).toBe(theirs);
    expect(ofType(p.stateDir, "manager_starting")).toHaveLength(1);
  });

  it("a lease not renewed for ttl + margin is taken over (epoch + 1), paged as a failover, and only then is a manager started", async () => {
    const p = await leased();
    p.foreign(5, 32_001);
    const r = await p.tick();
    expect(r.decision).toBe("start");
    const got = ofType(p.stateDir, "lease_acquired");
    expect(got).toEqual([
      expect.objectContaining({ how: "taken_over", epoch: 6, from: "mini-2", from_epoch: 5 }),
    ]);
    expect(p.onRemote()).toMatch(/"epoch":6/);
    expect(p.server.delivered.map((m) => m.title)).toContain("catalog moved here from mini-2");
    expect((await p.claimHolder()).lease_epoch).toBe(6);
  });

  it("with no watchdog renewing, the manager is told at ttl − margin: wait wakes with lease_lost, save answers held_here false", async () => {
    const p = await leased({ ttl: "8s" });
    await p.tick();
    const h = await p.claimHolder();
    // No more ticks: this host's watchdog has stopped. The hold is ttl − margin = 6 s.
    const waited = await sheepdogAsync(["wait", "--every", "1h", "--pid", String(h.pid)], {
      env: p.env,
    });
    expect(waited.code, waited.stderr).toBe(0);
    expect(JSON.parse(waited.stdout)).toMatchObject({
      event: "lease_lost",
      reason: expect.stringMatching(
        /^this host does not hold the program's lease .*: save and stop$/,
      ),
    });
    const renewed = Date.parse(localLease(p.stateDir).renewed_at);
    expect(Date.now() - renewed).toBeGreaterThanOrEqual(6000);
    const save = sheepdog(["save", "--pid", String(h.pid)], { env: p.env });
    const answer = JSON.parse(save.stdout);
    expect(answer.lease).toEqual({ held_here: false, epoch: 1, host: hostname() });
    expect(answer.notices).toContainEqual(
      expect.stringMatching(/does not hold the program's lease.*save and stop/),
    );
  });

  it("watch holds the lease too: it makes it, renews it each interval, and fences the moment another machine's newer epoch shows", async () => {
    const p = await leased();
    const w = startWatch(p.env, ["--json"], cleanups as (() => void)[]);
    cleanups.push(async () => {
      await w.stop();
    });
    const h = await p.claimHolder();
    expect(h.lease_epoch).toBe(1);
    const first = p.onRemote();
    await waitFor("a renewal by the watcher", () => p.onRemote() !== first, 20_000);
    expect(p.onRemote()).toMatch(/"epoch":1/);
    p.foreign(2, 0);
    await waitFor("the watcher's fence", () => ofType(p.stateDir, "lease_lost").length > 0, 20_000);
    await waitFor("the manager to stop", () => !isAlive(h.pid, h.start_time), 20_000);
    expect(ofType(p.stateDir, "lease_lost")[0]).toMatchObject({
      cause: "elsewhere",
      holder: "mini-2",
    });
    expect(ofType(p.stateDir, "manager_starting")).toHaveLength(1);
  });

  it("an unreachable remote and no lease ever held: nothing starts, and status --fleet says the remote cannot be read", async () => {
    const p = await leased({ remote: "nowhere" });
    const r = await p.tick();
    expect(r.decision).toBe("leased_elsewhere");
    expect(r.reason).toMatch(
      /cannot be reached .* and this host has never held it: nothing starts here/,
    );
    expect(ofType(p.stateDir, "manager_starting")).toHaveLength(0);
    const fleet = await sheepdogAsync(["status", "--fleet", "--json"], { env: p.env });
    expect(fleet.code).toBe(1);
    expect(JSON.parse(fleet.stdout).errors).toEqual([
      expect.objectContaining({ program: "catalog", remote: "nowhere" }),
    ]);
  });
});
