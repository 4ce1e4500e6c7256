// `released` is journaled before claim/ goes (DESIGN §18, issue 31): a hand-over stopped at any
// step of its release (a watcher stopping the handed-over manager, the host going down) never
// leaves a program whose claim is gone with no `released` to explain it; a tick that looks in
// between still sees the claim held.
import { spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { CLI, sheepdog, sleeper, tempDir, tempProgram } from "./helpers/cli.js";
import { waitFor } from "./helpers/watchdog.js";

const started: { kill(signal?: NodeJS.Signals): boolean }[] = [];
afterAll(() => {
  for (const p of started) p.kill("SIGKILL");
});

const types = (stateDir: string) =>
  readFileSync(join(stateDir, "journal.jsonl"), "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => (JSON.parse(l) as { type: string }).type);

describe.each(["claim.release.before-journal", "claim.release.after-journal"])(
  "a hand-over stopped at %s, then killed",
  (point) => {
    it("a tick in between sees the claim held; after the kill, no claim is gone unexplained", async () => {
      const p = tempProgram("order", {
        manager: { launcher: "command", command: [process.execPath, "-e", "0"] },
      });
      const manager = sleeper();
      started.push(manager);
      const pid = String(manager.pid);
      expect(sheepdog(["claim", "acquire", "--pid", pid], { env: p.env }).code).toBe(0);
      const marker = join(tempDir(), "arrived");
      writeFileSync(marker, "");
      const hand = spawn(
        process.execPath,
        [CLI, "hand-over", "--note", "context full", "--pid", pid, "--transcript", "/none"],
        {
          env: {
            ...process.env,
            ...p.env,
            SHEEPDOG_FAULT_POINT: point,
            SHEEPDOG_FAULT_MARKER: marker,
          },
          stdio: "ignore",
        },
      );
      started.push(hand);
      await waitFor(`hand-over at ${point}`, () => readFileSync(marker, "utf8").includes(point));

      // what a watcher's pass would judge now: the claim is still there, its holder alive
      const dry = sheepdog(["tick", "--dry-run", "--json"], { env: p.env });
      expect(JSON.parse(dry.stdout).programs[0].decision).toBe("ok");
      expect(existsSync(join(p.stateDir, "claim"))).toBe(true);

      hand.kill("SIGKILL");
      await new Promise((r) => hand.once("close", r));
      const claimGone = !existsSync(join(p.stateDir, "claim"));
      const journaled = types(p.stateDir);
      expect(journaled).toContain("hand_over");
      if (claimGone) expect(journaled).toContain("released");
      expect(journaled.includes("released")).toBe(point === "claim.release.after-journal");
    });
  },
);
