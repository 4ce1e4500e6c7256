// Pages through real `sheepdog tick` processes against a real HTTP server on 127.0.0.1: a
// heartbeat URL that never answers, an ntfy server that is truly down and comes back, and an
// access token that must reach the server in the Authorization header and nowhere else.
import { randomBytes } from "node:crypto";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type RunResult, sheepdogAsync, sleeper, tempDir, tempProgram } from "./helpers/cli.js";
import { type NtfyServer, ntfyServer } from "./helpers/ntfy-server.js";
import { type Event, isAlive, killStarted, ofType } from "./helpers/watchdog.js";

interface Report {
  program: string;
  decision: string;
  reason: string;
  actions: string[];
}

// Everything a test starts, stopped after it whatever happened.
const cleanups: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function startedServer(): Promise<NtfyServer> {
  const server = await ntfyServer();
  cleanups.push(() => server.stop());
  return server;
}

function program(config: Record<string, unknown>) {
  const p = tempProgram("catalog", config);
  cleanups.push(() => killStarted(p.stateDir));
  return p;
}

/** `sheepdog tick --json` as its own process (the servers live in this one): exit 0, its report. */
async function tickJson(env: NodeJS.ProcessEnv): Promise<RunResult & { report: Report }> {
  const r = await sheepdogAsync(["tick", "--json"], { env });
  expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(0);
  expect(r.stderr).toBe("");
  const report = (JSON.parse(r.stdout) as { programs: Report[] }).programs[0] as Report;
  return { ...r, report };
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Ticks (bounded) until one decides `want`; `after` runs after every tick. */
async function tickUntil(
  env: NodeJS.ProcessEnv,
  want: string,
  after: (r: RunResult & { report: Report }) => void = () => {},
  max = 40,
): Promise<number> {
  for (let n = 1; n <= max; n++) {
    const r = await tickJson(env);
    after(r);
    if (r.report.decision === want) return n;
    await pause(300);
  }
  throw new Error(`no tick decided ${want} in ${max} ticks`);
}

/** A crash loop: the manager exits at once without claiming; the second unplanned start is refused. */
const crashLoop = {
  manager: { launcher: "command", command: [process.execPath, "-e", "process.exit(0)"] },
  watchdog: { claim_grace: "1s", crash_loop: { starts: 1, within: "1h" } },
};

/** A TCP server that accepts every connection, reads what comes, and never answers. */
async function silentServer() {
  const sockets = new Set<Socket>();
  const requests: string[] = [];
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on("data", (d) => requests.push(d.toString("latin1")));
    socket.on("error", () => {});
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const port = (server.address() as { port: number }).port;
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  );
  return { url: `http://127.0.0.1:${port}`, requests };
}

describe("heartbeat_url through real ticks", () => {
  it("a server that never answers: the tick still exits 0, journals heartbeat_failed, decides the same", async () => {
    const hc = await silentServer();
    const manager = sleeper();
    cleanups.push(() => {
      manager.kill("SIGKILL");
    });
    const p = program({
      manager: { launcher: "command", command: [process.execPath, "-e", "process.exit(0)"] },
      page: { heartbeat_url: `${hc.url}/hc/catalog` },
    });
    // A live holder that has just saved: the decision is `ok` whatever the heartbeat does.
    const pid = String(manager.pid);
    expect((await sheepdogAsync(["claim", "acquire", "--pid", pid], { env: p.env })).code).toBe(0);
    const saved = await sheepdogAsync(["save", "--pid", pid, "--transcript", "/none"], {
      env: p.env,
    });
    expect(saved.code, saved.stderr).toBe(0);

    const dry = await sheepdogAsync(["tick", "--dry-run", "--json"], { env: p.env });
    expect(dry.code).toBe(0);
    const want = (JSON.parse(dry.stdout) as { programs: Report[] }).programs[0];
    expect(want?.decision).toBe("ok");
    expect(hc.requests).toEqual([]); // a dry run requests nothing

    const r = await tickJson(p.env); // returns only after the 5 s heartbeat timeout
    expect(r.report.decision).toBe(want?.decision);
    // The same reason, but for the heartbeat's age: a loaded machine may take a second between.
    const ageless = (text?: string) => text?.replace(/\d+s ago/, "Ns ago");
    expect(ageless(r.report.reason)).toBe(ageless(want?.reason));
    expect(r.report.actions).toEqual([]);
    const last = JSON.parse(readFileSync(join(p.stateDir, "last-tick.json"), "utf8"));
    expect(last.decision).toBe("ok");

    // The request did go out, to that URL, and nothing answered it.
    expect(hc.requests.join("")).toMatch(/^GET \/hc\/catalog HTTP\/1\.1\r\n/);
    const failed = ofType(p.stateDir, "heartbeat_failed");
    expect(failed).toHaveLength(1);
    expect(failed[0]?.error).toBe(`${hc.url}/…: timed out`); // by its origin only (DESIGN §18)
    // The claim and the manager are untouched.
    expect(ofType(p.stateDir, "claim_broken")).toEqual([]);
    expect(ofType(p.stateDir, "manager_stopped")).toEqual([]);
    expect(isAlive(manager.pid as number, readHolderStart(p.stateDir))).toBe(true);
  });

  it("a server that answers: one GET per real tick, none for a dry run, no heartbeat_failed", async () => {
    const server = await startedServer();
    const manager = sleeper();
    cleanups.push(() => {
      manager.kill("SIGKILL");
    });
    const p = program({
      manager: { launcher: "command", command: [process.execPath, "-e", "process.exit(0)"] },
      page: { heartbeat_url: `${server.url}/hc/catalog-uuid` },
    });
    const pid = String(manager.pid);
    expect((await sheepdogAsync(["claim", "acquire", "--pid", pid], { env: p.env })).code).toBe(0);
    for (let n = 1; n <= 3; n++) {
      expect((await tickJson(p.env)).report.decision).toBe("ok");
      expect(server.heartbeats).toEqual(Array(n).fill("/hc/catalog-uuid"));
    }
    expect((await sheepdogAsync(["tick", "--dry-run"], { env: p.env })).code).toBe(0);
    expect(server.heartbeats).toHaveLength(3);
    expect(server.received).toEqual([]); // no ntfy section: no pages
    expect(ofType(p.stateDir, "heartbeat_failed")).toEqual([]);
  });

  it("a failed tick pings <url>/fail, never the URL; the next good tick pings the URL again", async () => {
    const server = await startedServer();
    const p = program({
      manager: { launcher: "command", command: [process.execPath, "-e", "process.exit(0)"] },
      page: { heartbeat_url: `${server.url}/hc/catalog-uuid/` },
    });
    // A tick fails when it cannot write last-tick.json (a failed start no longer fails a tick).
    mkdirSync(join(p.stateDir, "last-tick.json"), { recursive: true });
    const failed = await sheepdogAsync(["tick"], { env: p.env });
    expect(failed.code, failed.stderr).toBe(1);
    expect(ofType(p.stateDir, "tick_failed")).toHaveLength(1);
    expect(server.heartbeats).toEqual(["/hc/catalog-uuid/fail"]);
    rmSync(join(p.stateDir, "last-tick.json"), { recursive: true });

    const manager = sleeper();
    cleanups.push(() => {
      manager.kill("SIGKILL");
    });
    const pid = String(manager.pid);
    expect((await sheepdogAsync(["claim", "acquire", "--pid", pid], { env: p.env })).code).toBe(0);
    expect((await tickJson(p.env)).report.decision).toBe("ok");
    expect(server.heartbeats).toEqual(["/hc/catalog-uuid/fail", "/hc/catalog-uuid/"]);
  });
});

function readHolderStart(stateDir: string): string {
  return JSON.parse(readFileSync(join(stateDir, "claim", "holder.json"), "utf8")).start_time;
}

describe("an ntfy server that is truly down", () => {
  it("a stand-down page fails (page_failed), then arrives once, with retry: true, when it is back", async () => {
    const server = await startedServer();
    const port = server.port;
    await server.stop(); // nothing listens on the port now: connection refused, not a 5xx
    const q = program({ ...crashLoop, page: { ntfy: { server: server.url, topic: "catalog" } } });
    // Retries back off (5 min, then 10, DESIGN §18): the test's clock steps past each.
    const clock = join(q.home, "clock");
    const p = { ...q, env: { ...q.env, SHEEPDOG_CLOCK_FILE: clock } };
    const step = (minutes: number) => writeFileSync(clock, String(minutes * 60_000));

    await tickUntil(p.env, "stand_down");
    expect(server.received).toEqual([]);
    const failed = ofType(p.stateDir, "page_failed");
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({ kind: "stood_down" });
    expect(String(failed[0]?.error)).toContain(`ntfy server ${server.url}`);
    expect(ofType(p.stateDir, "paged")).toEqual([]);

    // Still down: within 5 minutes no retry; past them the retry fails again and is journaled
    // again, as a count; nothing is lost.
    expect((await tickJson(p.env)).report.decision).toBe("hold");
    expect(ofType(p.stateDir, "page_failed")).toHaveLength(1);
    step(6);
    expect((await tickJson(p.env)).report.decision).toBe("hold");
    expect(ofType(p.stateDir, "page_failed").map((e) => e.failures)).toEqual([undefined, 2]);

    await server.start();
    expect(server.port).toBe(port);
    step(17);
    expect((await tickJson(p.env)).report.decision).toBe("hold");
    expect(server.received).toHaveLength(1);
    expect(server.received[0]).toMatchObject({
      status: 200,
      priority: 5,
      topic: "catalog",
      title: "catalog stood down",
    });
    const paged = ofType(p.stateDir, "paged");
    expect(paged.map((e) => [e.kind, e.priority, e.retry])).toEqual([["stood_down", 5, true]]);

    // Delivered: later ticks send it no more.
    expect((await tickJson(p.env)).report.decision).toBe("hold");
    expect(server.received).toHaveLength(1);
    expect(server.received.filter((r) => r.priority === 5)).toHaveLength(1);
  });
});

/** Every regular file under `dir` (recursively), with its content. */
function filesUnder(dir: string): { path: string; text: string }[] {
  const out: { path: string; text: string }[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const path = join(d, name);
      const st = statSync(path);
      if (st.isDirectory()) walk(path);
      else if (st.isFile()) out.push({ path, text: readFileSync(path, "latin1") });
    }
  };
  if (existsSync(dir)) walk(dir);
  return out;
}

describe("the ntfy access token", () => {
  it.each(["token_env", "token_file"] as const)(
    "%s: only in the Authorization header; in no output, file, argv or manager environment",
    async (via) => {
      const token = `tk_${randomBytes(16).toString("hex")}`;
      const server = await startedServer();
      server.token = token;
      // A careless server: its error answers repeat the Authorization header they got.
      server.failWith = 500;
      server.echoAuthInErrors = true;

      const secretDir = tempDir("sheepdog-secret-");
      const tokenFile = join(secretDir, "ntfy-token");
      if (via === "token_file") {
        writeFileSync(tokenFile, `${token}\n`);
        chmodSync(tokenFile, 0o600);
      }
      const p = program({
        manager: {
          launcher: "command",
          // A start that never claims but stays alive, so its argv can be read.
          command: [process.execPath, "-e", "setTimeout(() => {}, 300000)", "{prompt}"],
          // Even named here, the token's variable must not reach the manager.
          ...(via === "token_env" ? { env: { NTFY_TOKEN: "from-manager-env" } } : {}),
        },
        watchdog: crashLoop.watchdog,
        page: {
          ntfy: {
            server: server.url,
            topic: "catalog",
            ...(via === "token_env" ? { token_env: "NTFY_TOKEN" } : { token_file: tokenFile }),
          },
        },
      });
      const clock = join(p.home, "clock");
      const env = {
        ...p.env,
        ...(via === "token_env" ? { NTFY_TOKEN: token } : {}),
        SHEEPDOG_CLOCK_FILE: clock, // stepped past the first retry's 5 minutes below
      };

      const outputs: RunResult[] = [];
      const seen = new Set<number>();
      const procs: { pid: number; cmdline: string; environ: string }[] = [];
      // Read each started manager's argv (and environment) while it is alive.
      const inspect = () => {
        for (const e of ofType(p.stateDir, "manager_started") as Event[]) {
          const pid = e.pid as number;
          if (seen.has(pid)) continue;
          seen.add(pid);
          if (process.platform !== "linux") continue;
          procs.push({
            pid,
            cmdline: readFileSync(`/proc/${pid}/cmdline`, "latin1"),
            environ: readFileSync(`/proc/${pid}/environ`, "latin1"),
          });
        }
      };
      await tickUntil(env, "stand_down", (r) => {
        outputs.push(r);
        inspect();
      });

      // The page went out with the token and failed; the journal names the error, not the token.
      expect(server.received).toHaveLength(1);
      expect(server.received[0]?.status).toBe(500);
      const failed = ofType(p.stateDir, "page_failed");
      expect(failed).toHaveLength(1);
      expect(String(failed[0]?.error)).toContain("(got Bearer [token])");

      // The server is well again: a human-readable tick past the backoff delivers the retry.
      server.failWith = null;
      writeFileSync(clock, String(6 * 60_000));
      const human = await sheepdogAsync(["tick"], { env });
      expect(human.code, human.stderr).toBe(0);
      outputs.push(human);
      const dry = await sheepdogAsync(["tick", "--dry-run", "--json"], { env });
      expect(dry.code).toBe(0);
      outputs.push(dry);
      expect(server.delivered).toHaveLength(1);
      expect(server.delivered[0]).toMatchObject({ priority: 5, title: "catalog stood down" });
      expect(ofType(p.stateDir, "paged").map((e) => e.retry)).toEqual([true]);

      // At the server: in the Authorization header of every request, and nowhere else.
      expect(server.received).toHaveLength(2);
      for (const got of server.received) {
        expect(got.headers.authorization).toBe(`Bearer ${token}`);
        const { authorization: _auth, ...others } = got.headers;
        expect(JSON.stringify(others)).not.toContain(token);
        const { headers: _h, ...rest } = got; // url (query string included), body fields
        expect(got.url).toBe("/");
        expect(JSON.stringify(rest)).not.toContain(token);
      }

      // Nowhere a person or another program can read it.
      for (const args of [["status"], ["status", "--json"], ["journal"], ["journal", "--json"]]) {
        const r = await sheepdogAsync(args, { env });
        expect(r.code, `${args.join(" ")}: ${r.stderr}`).toBe(0);
        outputs.push(r);
      }
      expect(outputs.length).toBeGreaterThan(6);
      for (const r of outputs) {
        expect(r.stdout).not.toContain(token);
        expect(r.stderr).not.toContain(token);
      }
      expect(existsSync(join(p.stateDir, "last-tick.json"))).toBe(true);
      expect(existsSync(join(p.stateDir, "journal.jsonl"))).toBe(true);
      const files = filesUnder(p.home); // the program, its state dir, the host state dir
      expect(files.map((f) => f.path)).toContain(join(p.stateDir, "last-tick.json"));
      for (const f of files) expect(f.text, f.path).not.toContain(token);

      if (process.platform === "linux") {
        expect(procs.length).toBeGreaterThanOrEqual(1);
        for (const proc of procs) {
          expect(proc.cmdline).toContain("setTimeout"); // really that manager's argv
          expect(proc.cmdline).not.toContain(token);
          expect(proc.environ).toContain(`SHEEPDOG_PROGRAM=${p.root}`);
          expect(proc.environ).not.toContain(token);
          expect(proc.environ).not.toContain("NTFY_TOKEN=");
        }
      }
      // the token file itself is left as it was
      if (via === "token_file") expect(statSync(tokenFile).mode & 0o777).toBe(0o600);
    },
  );
});
