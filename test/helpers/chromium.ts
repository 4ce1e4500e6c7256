import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "./cli.js";

// Real headless Chromium (Debian's `chromium`, which .ci/run installs when missing) opening a
// report from a file: a screenshot, the DOM it rendered, and its network log.

export function chromiumBinary(): string {
  const found = [process.env.CHROMIUM, "chromium", "chromium-browser"]
    .filter((c): c is string => Boolean(c))
    .find((c) => spawnSync(c, ["--version"], { encoding: "utf8" }).status === 0);
  if (!found)
    throw new Error("no chromium on PATH: install Debian's chromium (.ci/run does when missing)");
  return found;
}

const FLAGS = [
  "--headless=new",
  "--no-sandbox",
  "--disable-gpu",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--hide-scrollbars",
];

export interface Rendered {
  /** The DOM after loading (`--dump-dom`). */
  dom: string;
  /** URLs the page itself asked for (browser-internal requests, e.g. update checks, left out). */
  pageRequests: string[];
  png: Buffer;
}

function run(bin: string, args: string[]): void {
  const r = spawnSync(bin, args, { encoding: "utf8", timeout: 60_000 });
  if (r.status !== 0) throw new Error(`chromium ${args.at(-1)} exited ${r.status}: ${r.stderr}`);
}

/** Requests a page started, from a Chromium net log: the browser's own have no origin. */
export function pageRequestsOf(netLogPath: string): string[] {
  const log = JSON.parse(readFileSync(netLogPath, "utf8")) as {
    constants: { logEventTypes: Record<string, number> };
    events: { type: number; params?: { url?: string; initiator?: string } }[];
  };
  const start = log.constants.logEventTypes.URL_REQUEST_START_JOB;
  return log.events
    .filter((e) => e.type === start && e.params?.url && e.params.initiator !== "not an origin")
    .map((e) => e.params?.url as string);
}

/** Opens `file` in headless Chromium twice: a screenshot, then the DOM with a net log. */
export function render(file: string, size = "1280,1500"): Rendered {
  const bin = chromiumBinary();
  const dir = tempDir("sheepdog-chromium-");
  const url = `file://${file}`;
  const shot = join(dir, "shot.png");
  run(bin, [
    ...FLAGS,
    `--user-data-dir=${join(dir, "a")}`,
    `--screenshot=${shot}`,
    `--window-size=${size}`,
    url,
  ]);
  const netLog = join(dir, "net.json");
  const r = spawnSync(
    bin,
    [...FLAGS, `--user-data-dir=${join(dir, "b")}`, `--log-net-log=${netLog}`, "--dump-dom", url],
    { encoding: "utf8", timeout: 60_000, maxBuffer: 256 * 1024 * 1024 },
  );
  if (r.status !== 0) throw new Error(`chromium --dump-dom exited ${r.status}: ${r.stderr}`);
  if (!existsSync(shot)) throw new Error("chromium wrote no screenshot");
  return { dom: r.stdout, pageRequests: pageRequestsOf(netLog), png: readFileSync(shot) };
}
