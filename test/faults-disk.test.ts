// Full disk (issue 14): the state folder on a 64 KiB tmpfs, filled, inside `unshare --mount`
// (root only: the mount is private to that namespace). Every command that must write fails with
// exit 1 and a one-line message saying why; none leaves a half-written state file or a torn
// journal line; a start the disk filled under does not leave an unjournaled manager running.
// Without root, files made unwritable stand in for the full disk. As root without a working
// unshare neither half can run: it says so, and in CI (CI=true) it fails instead.
import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { CLI, sheepdog, sleeper, tempProgram } from "./helpers/cli.js";
import { tornLines } from "./helpers/invariants.js";
import { skipWithout } from "./helpers/tools.js";

const DRIVER = resolve("test/fixtures/full-disk.mjs");
const isRoot = process.getuid?.() === 0;
const noUnshare = !isRoot
  ? "not root (a private mount namespace needs it)"
  : spawnSync("unshare", ["--mount", "true"], { stdio: "ignore" }).status !== 0
    ? "unshare --mount fails here"
    : null;
// Root with no unshare would run neither half (root writes through file modes): said, and in CI
// a failure. Without root the unwritable-files half stands in, so only that is said.
const skipFull = isRoot
  ? skipWithout(
      "full-disk (a tmpfs in a private mount namespace)",
      noUnshare,
      "util-linux (unshare), run as root",
    )
  : noUnshare !== null &&
    say(`skipped: the full-disk half (${noUnshare}); the unwritable-files half runs`);
if (isRoot)
  process.stderr.write(
    "skipped: the unwritable-files half (root writes through file modes; the full-disk half covers it)\n",
  );

function say(line: string): true {
  process.stderr.write(`${line}\n`);
  return true;
}
const STACK = /\n\s+at .+:\d+:\d+/;

interface Ran {
  args: string[];
  code: number;
  stdout: string;
  stderr: string;
}

/** A failure at run time: exit 1, one line on stderr that says the disk is full. */
function failedClearly(r: Ran): void {
  const what = `${r.args.join(" ")}: ${r.stderr}`;
  expect(r.code, what).toBe(1);
  expect(r.stderr, what).toMatch(/^sheepdog[^\n]*: [^\n]*(no space left|ENOSPC)[^\n]*\n$/i);
  expect(r.stderr, what).not.toMatch(STACK);
}

describe.skipIf(skipFull)(
  "a full disk under the state folder (tmpfs in a private mount namespace)",
  () => {
    it("every writing command fails with exit 1 and says why; no half-written file; no unjournaled manager", () => {
      const tag = `sheepdog-full-disk-manager-${process.pid}-${Date.now()}`;
      const p = tempProgram("demo", {
        manager: {
          launcher: "command",
          command: [process.execPath, "-e", "setTimeout(() => {}, 600000)", tag],
        },
        watchdog: { interval: "1h", stale_after: "1h", claim_grace: "1h" },
      });
      const r = spawnSync("unshare", ["--mount", process.execPath, DRIVER, p.root, CLI, tag], {
        env: { ...process.env, ...p.env },
        encoding: "utf8",
        timeout: 240_000,
      });
      expect(r.status, r.stderr).toBe(0);
      const out = JSON.parse(r.stdout) as {
        setup: Ran[];
        full: Ran[];
        start: { reached: boolean; code: number; stdout: string; stderr: string };
        managers: number[];
        files: Record<string, string>;
      };
      for (const s of out.setup) expect(s.code, `${s.args.join(" ")}: ${s.stderr}`).toBe(0);

      // A write that still fits (the last page of the journal has room; a release freed a
      // page) may succeed, whole; anything else fails with exit 1 and says the disk is full.
      for (const f of out.full) {
        const what = `${f.args.join(" ")}: ${f.stderr}`;
        expect([0, 1, 3], what).toContain(f.code);
        if (f.code === 1) failedClearly(f);
        expect(f.stderr, what).not.toMatch(STACK);
      }
      // A finish journaled before the disk refused the claim's release says it holds.
      const finishes = out.full.filter((f) => f.args[0] === "finish" && f.code === 1);
      if ((out.files["journal.jsonl"] ?? "").includes('"note":"disk full"'))
        expect(finishes.map((f) => f.stderr).join("")).toMatch(
          /finished \(journaled: the watchdog starts nothing more until sheepdog reopen\), but the claim could not be released: .*ENOSPC/,
        );
      // The first save on the full disk cannot write heartbeat.json.
      failedClearly(out.full[0] as Ran);
      expect(out.full.filter((f) => f.code === 1).length).toBeGreaterThanOrEqual(2);

      // The start the disk filled under: the tick fails, and its manager is not left running.
      expect(out.start.reached).toBe(true);
      expect(out.start.code, out.start.stderr).toBe(1);
      expect(out.start.stderr).not.toMatch(STACK);
      const journaled = (out.files["journal.jsonl"] ?? "")
        .split("\n")
        .filter((l) => l.includes('"type":"manager_started"'));
      for (const pid of out.managers)
        expect(
          journaled.some((l) => l.includes(`"pid":${pid},`)),
          `manager pid ${pid} runs but its start is not journaled`,
        ).toBe(true);

      // Nothing half-written: every JSON state file parses, no temp file is left, no torn line.
      for (const [name, text] of Object.entries(out.files)) {
        if (name.endsWith(".json")) expect(() => JSON.parse(text), name).not.toThrow();
        expect(name, "a temp file left behind").not.toMatch(/\.tmp$/);
      }
      const journal = out.files["journal.jsonl"] ?? "";
      const dir = tempProgram("copy");
      writeFileSync(join(dir.root, "journal.jsonl"), journal);
      expect(tornLines(dir.root)).toEqual([]);
    });
  },
);

describe.skipIf(isRoot)(
  "unwritable state files (not root: file modes stand in for a full disk)",
  () => {
    it("save, pause and tick fail with exit 1 naming the file; nothing half-written", () => {
      const p = tempProgram("demo");
      const holder = sleeper();
      try {
        const pid = String(holder.pid);
        expect(sheepdog(["claim", "acquire", "--pid", pid], { env: p.env }).code).toBe(0);
        chmodSync(join(p.stateDir, "journal.jsonl"), 0o400);
        chmodSync(p.stateDir, 0o500);
        for (const args of [["save", "--pid", pid], ["pause", "--until", "1h"], ["tick"]]) {
          const r = sheepdog(args, { env: p.env });
          expect(r.code, r.stderr).toBe(1);
          expect(r.stderr).toMatch(/permission denied|EACCES/i);
          expect(r.stderr).not.toMatch(STACK);
        }
        expect(existsSync(join(p.stateDir, "heartbeat.json"))).toBe(false);
        expect(readFileSync(join(p.stateDir, "journal.jsonl"), "utf8")).not.toContain("paused");
      } finally {
        chmodSync(p.stateDir, 0o700);
        holder.kill("SIGKILL");
      }
    });
  },
);
