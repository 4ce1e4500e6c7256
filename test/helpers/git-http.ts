// A git remote over smart HTTP, as the simulated hosts' shared remote: an HTTP server on
// 127.0.0.1 that runs `git http-backend` as a CGI per request. The first path segment is a route
// (one per host): `http://127.0.0.1:PORT/<route>/<repo>.git`, so one host can be cut off
// (partition) while the others still reach the remote, and each host's requests can be counted.
import { spawnSync } from "node:child_process";
import { basename, dirname, join } from "node:path";
import { MessageChannel, receiveMessageOnPort, Worker } from "node:worker_threads";

export interface GitHttp {
  port: number;
  /** The repository's URL for a route, e.g. http://127.0.0.1:PORT/host-a/remote.git */
  urlFor(route: string): string;
  /** On: the route's requests (and those in flight) get their connection dropped, no reply. */
  partition(route: string, on: boolean): void;
  /** Requests that arrived on the route, refused ones included. */
  requests(route: string): number;
  close(): Promise<void>;
}

// The server runs on a worker thread, with an event loop of its own: the tests run git and
// sheepdog with spawnSync, which would stall a server on this thread (a deadlock). Plain
// JavaScript, since a worker does not go through vitest's TypeScript transform.
const SERVER_JS = `
const { spawn } = require("node:child_process");
const http = require("node:http");
const { parentPort, workerData } = require("node:worker_threads");
const { backend, root, rpc, answered } = workerData;
const partitioned = new Set();
const counts = new Map();
const inFlight = new Map();

function serve(req, res) {
  const url = new URL(req.url || "/", "http://127.0.0.1");
  const [, first = "", ...rest] = url.pathname.split("/");
  const route = decodeURIComponent(first);
  counts.set(route, (counts.get(route) || 0) + 1);
  // No reply at all: git fails at once ("Empty reply from server"), as when the network drops.
  if (route === "" || partitioned.has(route)) return req.socket.destroy();
  if (!inFlight.has(route)) inFlight.set(route, new Set());
  const live = inFlight.get(route);
  live.add(req);
  res.on("close", () => live.delete(req));

  // CGI meta-variables, and every request header as HTTP_* (Git-Protocol for protocol v2;
  // Content-Encoding: gzip, which the backend inflates itself).
  const env = {
    PATH: process.env.PATH,
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_PROJECT_ROOT: root,
    GIT_HTTP_EXPORT_ALL: "1",
    GATEWAY_INTERFACE: "CGI/1.1",
    SERVER_PROTOCOL: "HTTP/" + req.httpVersion,
    REQUEST_METHOD: req.method || "GET",
    PATH_INFO: decodeURIComponent("/" + rest.join("/")),
    QUERY_STRING: url.search.slice(1),
    REMOTE_USER: route,
    REMOTE_ADDR: req.socket.remoteAddress || "127.0.0.1",
  };
  for (const [name, value] of Object.entries(req.headers))
    if (value !== undefined) env["HTTP_" + name.toUpperCase().replace(/-/g, "_")] = String(value);
  if (req.headers["content-type"]) env.CONTENT_TYPE = req.headers["content-type"];
  // Without it (a chunked push) the backend reads its input to the end.
  if (req.headers["content-length"]) env.CONTENT_LENGTH = req.headers["content-length"];

  const cgi = spawn(backend, [], { env, stdio: ["pipe", "pipe", "pipe"] });
  let stderr = "";
  cgi.stderr.on("data", (d) => { stderr += d; });
  cgi.on("error", (e) => { stderr += String(e); });
  cgi.stdin.on("error", () => {}); // it may answer (an error) before reading all its input
  req.pipe(cgi.stdin);
  // A dropped connection ends the backend's input and the backend finishes on its own: a push
  // whose input was all sent may still land, as on a real server whose client vanished.
  req.on("close", () => { if (!cgi.stdin.writableEnded) cgi.stdin.end(); });
  res.on("close", () => cgi.stdout.resume()); // drained, so the backend is never stuck writing

  let head = Buffer.alloc(0);
  const onData = (chunk) => {
    head = Buffer.concat([head, chunk]);
    const crlf = head.indexOf("\\r\\n\\r\\n");
    const lf = head.indexOf("\\n\\n");
    const end = crlf >= 0 && (lf < 0 || crlf < lf) ? crlf + 4 : lf >= 0 ? lf + 2 : -1;
    if (end < 0) return;
    cgi.stdout.off("data", onData);
    cgi.stdout.pause();
    for (const line of head.subarray(0, end).toString("latin1").split(/\\r?\\n/)) {
      const at = line.indexOf(":");
      if (at <= 0) continue;
      const name = line.slice(0, at).trim();
      const value = line.slice(at + 1).trim();
      if (name.toLowerCase() === "status") res.statusCode = Number.parseInt(value, 10) || 500;
      else res.setHeader(name, value);
    }
    if (res.destroyed) return cgi.stdout.resume();
    res.write(head.subarray(end));
    cgi.stdout.pipe(res);
  };
  cgi.stdout.on("data", onData);
  cgi.on("close", (code) => {
    if (res.headersSent || res.destroyed) return;
    res.statusCode = 502;
    res.end("git http-backend exited " + code + ": " + stderr);
  });
}

// Calls from the test's thread, answered at once (it waits on "answered").
rpc.on("message", (m) => {
  let value = null;
  if (m.op === "partition" && m.on) {
    partitioned.add(m.route);
    for (const req of inFlight.get(m.route) || []) req.socket.destroy();
  } else if (m.op === "partition") partitioned.delete(m.route);
  else if (m.op === "requests") value = counts.get(m.route) || 0;
  rpc.postMessage(value);
  Atomics.store(answered, 0, 1);
  Atomics.notify(answered, 0);
});

const server = http.createServer(serve);
server.listen(0, "127.0.0.1", () => parentPort.postMessage(server.address().port));
`;

function gitOrThrow(args: string[]): string {
  const r = spawnSync("git", args, {
    encoding: "utf8",
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" },
  });
  if (r.status !== 0) throw new Error(`git ${args.join(" ")}: ${r.stderr}`);
  return r.stdout.trim();
}

/** Serves the bare repository at `bareRepoPath` (pushes enabled) until close(). */
export async function startGitHttp(bareRepoPath: string): Promise<GitHttp> {
  // http-backend refuses pushes from an unauthenticated user unless the repository allows them.
  gitOrThrow(["config", "--file", join(bareRepoPath, "config"), "http.receivepack", "true"]);
  // The backend itself, not `git http-backend` (git would run it as one more child process).
  const backend = join(gitOrThrow(["--exec-path"]), "git-http-backend");
  const { port1: rpc, port2 } = new MessageChannel();
  const answered = new Int32Array(new SharedArrayBuffer(4));
  const worker = new Worker(SERVER_JS, {
    eval: true,
    workerData: { backend, root: dirname(bareRepoPath), rpc: port2, answered },
    transferList: [port2],
  });
  const port = await new Promise<number>((ok, fail) => {
    worker.once("message", ok);
    worker.once("error", fail);
    worker.once("exit", (code) => fail(new Error(`the git HTTP server ended (exit ${code})`)));
  });
  worker.unref();
  rpc.unref();

  // Synchronous, so a partition is in force before the test's next (spawnSync) git call.
  const call = (msg: { op: string; route: string; on?: boolean }): unknown => {
    Atomics.store(answered, 0, 0);
    rpc.postMessage(msg);
    if (Atomics.wait(answered, 0, 0, 10_000) === "timed-out")
      throw new Error(`the git HTTP server did not answer ${msg.op}`);
    return receiveMessageOnPort(rpc)?.message;
  };
  const repo = basename(bareRepoPath);
  return {
    port,
    urlFor: (route) => `http://127.0.0.1:${port}/${encodeURIComponent(route)}/${repo}`,
    partition: (route, on) => void call({ op: "partition", route, on }),
    requests: (route) => call({ op: "requests", route }) as number,
    // Ends the server with its thread: its connections close; running backends finish alone.
    close: async () => {
      rpc.close();
      await worker.terminate();
    },
  };
}
