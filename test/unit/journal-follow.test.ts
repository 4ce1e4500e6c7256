// followReplay: `sheepdog wait`'s replayed state, read whole once and then only where the
// journal grew, must always equal a whole replay.
import { appendFileSync, mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { followReplay } from "../../src/journal/follow.js";
import { readEvents, rotatedName } from "../../src/journal/journal.js";
import { replay } from "../../src/journal/replay.js";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const stateDir = () => {
  const d = mkdtempSync(join(tmpdir(), "sheepdog-follow-"));
  dirs.push(d);
  return d;
};
let clock = Date.parse("2026-12-02T01:00:00Z");
function line(type: string, extra: Record<string, unknown> = {}): string {
  clock += 1000;
  return `${JSON.stringify({ at: new Date(clock).toISOString(), type, ...extra })}\n`;
}

describe("followReplay", () => {
  it("reads what was appended, a torn last line once it is whole, and a rotation whole again", () => {
    const dir = stateDir();
    const path = join(dir, "journal.jsonl");
    const followed = followReplay(dir);
    expect(followed()).toEqual(replay([]));
    appendFileSync(path, line("saved") + line("paused", { until: "2026-12-02T05:00:00Z" }));
    expect(followed().paused?.until).toBe("2026-12-02T05:00:00Z");
    const unpause = line("unpaused", { by: "person" });
    appendFileSync(path, unpause.slice(0, 20));
    expect(followed().paused).not.toBeNull(); // torn: not read yet
    appendFileSync(path, unpause.slice(20));
    expect(followed().paused).toBeNull();
    expect(followed().unpausedByPerson?.type).toBe("unpaused");
    appendFileSync(path, line("stood_down", { reason: "crash loop" }));
    expect(followed().stoodDown?.reason).toBe("crash loop");
    // Rotation: the file is renamed away and a new one starts with the carried copies.
    renameSync(path, join(dir, rotatedName(1)));
    writeFileSync(
      path,
      line("stood_down", { reason: "crash loop", carried: true }) + line("cleared"),
    );
    expect(followed()).toEqual(replay(readEvents(dir)));
    expect(followed().stoodDown).toBeNull();
    // A writer that opened the journal before the rotation appends to the rotated file.
    appendFileSync(join(dir, rotatedName(1)), line("paused", { until: "2026-12-02T09:00:00Z" }));
    expect(followed()).toEqual(replay(readEvents(dir)));
  });

  it("equals a whole replay after every append, whatever the mix", () => {
    const dir = stateDir();
    const path = join(dir, "journal.jsonl");
    const followed = followReplay(dir);
    const types = ["paused", "unpaused", "stood_down", "cleared", "finished", "reopened", "saved"];
    let seed = 7;
    for (let i = 0; i < 200; i++) {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      appendFileSync(path, line(types[seed % types.length] as string, { n: i }));
      if (i % 3 === 0) expect(followed()).toEqual(replay(readEvents(dir)));
    }
    expect(followed()).toEqual(replay(readEvents(dir)));
  });
});
