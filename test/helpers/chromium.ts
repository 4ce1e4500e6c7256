import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "./cli.js";

// Real headless Chromium (Debian's `chromium`, which .ci/run installs when missing) opening a
// report from a file: a screenshot, the DOM it rendered, and its network log.

/** How to get the browser these tests open a report in. */
export const CHROMIUM_INSTALL =
  "apt-get install chromium (Debian's package), or set CHROMIUM=/path/to/chrome";

function findChromium(): string | undefined {
  return [process.env.CHROMIUM, "chromium", "chromium-browser"]
    .filter((c): c is string => Boolean(c))
    .find((c) => spawnSync(c, ["--version"], { encoding: "utf8" }).status === 0);
}

/** Why Chromium cannot be used here, or null when it can. */
export function chromiumMissing(): string | null {
  return findChromium() ? null : "no chromium on PATH";
}

export function chromiumBinary(): string {
  const found = findChromium();
  if (!found) throw new Error(`no chromium on PATH: ${CHROMIUM_INSTALL}`);
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

export interface LabelBox {
  text: string;
  x: number;
  y: number;
  w: number;
  h: number;
}

export interface Layout {
  /** The managers' row labels, in SVG user units (the chart's viewBox starts at 0). */
  rowLabels: LabelBox[];
  spanLabels: LabelBox[];
}

/**
 * How Chromium laid out a report's chart: a copy of the page with a script that measures the
 * labels (the report itself has no script), its answer read back from the dumped DOM.
 */
export function layoutOf(file: string): Layout {
  const measure = `<script>
const box = (el) => { const b = el.getBBox(); return { text: el.textContent, x: b.x, y: b.y, w: b.width, h: b.height }; };
const out = {
  rowLabels: [...document.querySelectorAll("text.row-label")].map(box),
  spanLabels: [...document.querySelectorAll("text.span-label")].map(box),
};
const pre = document.createElement("pre");
pre.id = "layout";
pre.textContent = JSON.stringify(out);
document.body.appendChild(pre);
</script>`;
  const dir = tempDir("sheepdog-layout-");
  const copy = join(dir, "measured.html");
  writeFileSync(copy, readFileSync(file, "utf8").replace("</body>", `${measure}</body>`));
  const r = spawnSync(
    chromiumBinary(),
    [
      ...FLAGS,
      `--user-data-dir=${join(dir, "u")}`,
      "--window-size=1280,1500",
      "--dump-dom",
      `file://${copy}`,
    ],
    { encoding: "utf8", timeout: 60_000, maxBuffer: 256 * 1024 * 1024 },
  );
  if (r.status !== 0) throw new Error(`chromium --dump-dom exited ${r.status}: ${r.stderr}`);
  const json = /<pre id="layout">([^<]*)<\/pre>/.exec(r.stdout)?.[1];
  if (!json) throw new Error("the measuring script left no layout in the DOM");
  return JSON.parse(json.replace(/&quot;/g, '"').replace(/&amp;/g, "&")) as Layout;
}
