// A config saved in two steps is not "invalid" (DESIGN §18, issue 31): `watch` journals and pages
// `config_invalid` only when it reads the same broken program.json twice at least 2 s apart. An
// editor's 300 ms between a truncated write and the whole one pages nothing; a real typo pages
// once. Real time: the rule is about two reads of a real file.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { sheepdog, sleeper, tempProgram } from "./helpers/cli.js";
import { useNtfyServer } from "./helpers/ntfy-server.js";
import { startWatch, watchReady } from "./helpers/watch.js";
import { waitFor } from "./helpers/watchdog.js";

const server = useNtfyServer();
const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

const eventsOf = (stateDir: string, type: string) =>
  readFileSync(join(stateDir, "journal.jsonl"), "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { at: string; type: string; error?: string })
    .filter((e) => e.type === type);

describe("watch and a program.json that changes under it", () => {
  it("saved in two steps: nothing journaled or paged; left broken: journaled and paged once, 2 s on", async () => {
    const config = {
      name: "settle",
      manager: { launcher: "command", command: [process.execPath, "-e", "0"] },
      page: { ntfy: { server: server.url, topic: "settle-alerts" } },
    };
    const p = tempProgram("settle", config);
    const manager = sleeper();
    cleanups.push(() => manager.kill("SIGKILL"));
    expect(sheepdog(["claim", "acquire", "--pid", String(manager.pid)], { env: p.env }).code).toBe(
      0,
    );
    const w = startWatch(p.env, ["--program", p.root, "--json"], cleanups);
    await watchReady(w);
    const file = join(p.root, "program.json");
    const whole = `${JSON.stringify(config, null, 2)}\n`;
    const marker = join(p.stateDir, "config-invalid.json");

    // an editor's two-step save: the file truncated, then whole 300 ms later
    writeFileSync(file, whole.slice(0, 40));
    await waitFor("the watcher's read of the half-written file", () => existsSync(marker));
    await new Promise((r) => setTimeout(r, 300));
    writeFileSync(file, whole);
    await waitFor("the whole file read", () => !existsSync(marker));
    // past the 2 s (and the 1 s poll) a second read of the broken text would have taken
    await new Promise((r) => setTimeout(r, 3200));
    expect(eventsOf(p.stateDir, "config_invalid")).toEqual([]);
    expect(server.received).toEqual([]);

    // a real typo, left there
    const typo = whole.replace('"launcher"', '"launchr"');
    const wrote = Date.now();
    writeFileSync(file, typo);
    const [invalid] = await waitFor(
      "config_invalid",
      () => {
        const e = eventsOf(p.stateDir, "config_invalid");
        return e.length > 0 ? e : null;
      },
      15_000,
    );
    expect(Date.parse(invalid?.at ?? "")).toBeGreaterThanOrEqual(wrote + 2000);
    expect(invalid?.error).toContain('unknown key "launchr"');
    await waitFor("its page", () => server.received.length > 0);
    expect(server.received).toHaveLength(1);
    expect(server.received[0]?.priority).toBe(4);
    await w.stop();
  });
});
