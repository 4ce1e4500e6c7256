// An incident and a used token outlive the journal's rotations (DESIGN §2, §8): real
// `sheepdog tick`, `resume` and `unpause` processes against the ntfy stand-in on 127.0.0.1, the
// phone's presses sent as the Android app sends them, a journal rotated at a small size
// (SHEEPDOG_JOURNAL_MAX_BYTES) by a busy program's events (appended by this process through the
// same appendEvent, so the rotations happen between the CLI's runs).
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { appendEvent, readAllEvents, rotatedName } from "../src/journal/journal.js";
import { sheepdogAsync, tempDir } from "./helpers/cli.js";
import type { LooseEvent } from "./helpers/events.js";
import { pressHttpAction, useNtfyServer } from "./helpers/ntfy-server.js";
import { action, PAGES, phoneProgram, tick, tickUntil } from "./helpers/phone.js";

const server = useNtfyServer();
const pages = () => server.topicMessages(PAGES);
const MAX = 16 * 1024;

// The journal code of this process rotates at the same size as the CLI's.
beforeEach(() => {
  process.env.SHEEPDOG_JOURNAL_MAX_BYTES = String(MAX);
});
afterEach(() => {
  delete process.env.SHEEPDOG_JOURNAL_MAX_BYTES;
});

/** Every event of a type in every file kept (the copies made at rotation left out). */
const ofType = (stateDir: string, type: string) =>
  readAllEvents(stateDir).filter((e) => e.type === type) as LooseEvent[];

/** A busy program's events (any other process appending), until the journal has rotated once. */
function busyUntilRotated(stateDir: string): void {
  const rotated = () => readFileSync(join(stateDir, rotatedName(1)), "utf8");
  let before = "";
  try {
    before = rotated();
  } catch {}
  for (let n = 0; n < 100; n++) {
    appendEvent(stateDir, { type: "heartbeat_failed", error: `x${"-".repeat(400)}${n}` });
    let now = "";
    try {
      now = rotated();
    } catch {}
    if (now !== before) return;
  }
  throw new Error("the journal never rotated");
}

describe("a journal that rotates while an incident is open", () => {
  it("a stand-down's incident outlives three rotations and a later incident: the resume closes it in place", async () => {
    const p = phoneProgram(server);
    const env = { ...p.env, SHEEPDOG_JOURNAL_MAX_BYTES: String(MAX) };
    await tickUntil(env, "stand_down");
    const [standDown] = ofType(p.stateDir, "incident_opened");
    const page = pages()[0];
    expect(page?.sequence_id).toBe(`sheepdog-${standDown?.incident}`);

    // A second incident opens and closes after it, in the same file: program.json broken, then
    // mended.
    const config = join(p.root, "program.json");
    const good = readFileSync(config, "utf8");
    writeFileSync(config, "{ not json");
    await tick(env);
    writeFileSync(config, good);
    await tick(env);
    expect(ofType(p.stateDir, "incident_opened").map((e) => e.kind)).toEqual([
      "stood_down",
      "config_invalid",
    ]);
    expect(ofType(p.stateDir, "incident_closed").map((e) => e.kind)).toEqual(["config_invalid"]);

    // Three rotations: the file that holds both incidents drops out of replay's view, and the
    // copies made of it are carried again.
    for (let n = 0; n < 3; n++) busyUntilRotated(p.stateDir);

    const r = await sheepdogAsync(["resume"], { env });
    expect(r.code, r.stderr).toBe(0);
    const closed = ofType(p.stateDir, "incident_closed");
    expect(closed.map((e) => [e.kind, e.incident])).toEqual([
      ["config_invalid", expect.any(String)],
      ["stood_down", standDown?.incident],
    ]);
    const close = pages().at(-1);
    expect(close).toMatchObject({ title: "catalog resumed", sequence_id: page?.sequence_id });
    // and nothing closes twice on the ticks after it
    await tick(env);
    await tick(env);
    expect(ofType(p.stateDir, "incident_closed")).toHaveLength(2);
  });
});

describe("a used token after the journal rotated", () => {
  it("a press of it again is refused as a replay, not carried out a second time", async () => {
    // A manager that cannot start: its page offers "Pause 2 h", and its incident stays open
    // (it closes when a manager claims). No stand-down: ten failed starts an hour are allowed.
    const p = phoneProgram(server, {
      manager: { launcher: "command", command: [`${tempDir()}/no-such-manager`] },
      watchdog: { claim_grace: "1s", crash_loop: { starts: 10, within: "1h" } },
    });
    const env = { ...p.env, SHEEPDOG_JOURNAL_MAX_BYTES: String(MAX) };
    const failed = () => pages().filter((m) => m.title?.endsWith("did not start"));
    expect(await tick(env)).toBe("start");
    const first = action(failed()[0], "Pause 2 h");
    expect((await pressHttpAction(first)).status).toBe(200);
    await tick(env);
    expect(ofType(p.stateDir, "remote_accepted")).toMatchObject([{ verb: "pause-2h" }]);

    // Seven hours on (the clock-step hook): the pause is over, the start fails again and its
    // page (the 6 h cooldown past) offers a second token, pressed too: the newest used token.
    writeFileSync(p.clock, String(7 * 3600_000));
    expect(await tick(env)).toBe("start");
    expect(failed()).toHaveLength(2);
    const second = action(failed()[1], "Pause 2 h");
    expect(second.body).not.toBe(first.body);
    expect((await pressHttpAction(second)).status).toBe(200);
    await tick(env);
    const incident = ofType(p.stateDir, "incident_opened")[0]?.incident;
    expect(ofType(p.stateDir, "remote_accepted").map((e) => e.incident)).toEqual([
      incident,
      incident,
    ]);
    // A person ends the pause.
    const unpause = await sheepdogAsync(["unpause"], { env });
    expect(unpause.code, unpause.stderr).toBe(0);

    // Three rotations: both presses' files leave replay's view (the first token has 17 h left).
    for (let n = 0; n < 3; n++) busyUntilRotated(p.stateDir);

    // The first press sent again (someone who read the page topic, or the app retrying).
    expect((await pressHttpAction(first)).status).toBe(200);
    await tick(env);
    expect(ofType(p.stateDir, "remote_accepted")).toHaveLength(2);
    expect(ofType(p.stateDir, "remote_refused")).toMatchObject([
      { reason: "replayed", verb: "pause-2h", incident },
    ]);
    expect(ofType(p.stateDir, "paused")).toHaveLength(2); // not paused a third time
  });
});
