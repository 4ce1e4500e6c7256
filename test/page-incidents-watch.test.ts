// Answers from the phone under `sheepdog watch` (DESIGN §8): the watcher holds ntfy's JSON
// stream of the control topic open (a pass while it is down polls instead), opens it again when
// it drops or falls silent, and a press is carried out by the pass it asks for, not by the next
// scheduled one.
import { afterEach, describe, expect, it } from "vitest";
import { tempProgram } from "./helpers/cli.js";
import { type NtfyAction, pressHttpAction, useNtfyServer } from "./helpers/ntfy-server.js";
import { startWatch } from "./helpers/watch.js";
import { killStarted, ofType, waitFor } from "./helpers/watchdog.js";

const server = useNtfyServer();
const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0).reverse()) c();
});

const streams = () => server.subscribes.filter((s) => !s.poll && s.topics.includes("catalog-ctl"));

describe("watch and the control topic", () => {
  it("streams the control topic, reconnects after a reset and a silent drop, and acts on a press at once", async () => {
    const p = tempProgram("catalog", {
      manager: { launcher: "command", command: [process.execPath, "-e", "process.exit(0)"] },
      // The schedule is far off: only the stream can make the pass that answers the press.
      watchdog: { interval: "1h", claim_grace: "1s", crash_loop: { starts: 1, within: "1h" } },
      page: { ntfy: { server: server.url, topic: "catalog-pages", control_topic: "catalog-ctl" } },
    });
    cleanups.push(() => killStarted(p.stateDir));
    const w = startWatch({ ...p.env, SHEEPDOG_NTFY_READ_TIMEOUT_MS: "1500" }, ["--json"], cleanups);
    await server.waitForStreams(1);
    expect(streams()[0]?.url).toBe("/catalog-ctl/json?since=all");

    // The crash loop stands down within the watcher's own passes, and pages.
    const page = await waitFor("the stand-down page", () =>
      server.topicMessages("catalog-pages").find((m) => m.title === "catalog stood down"),
    );
    const resume = page.actions?.find((a) => a.label === "Resume") as NtfyAction;
    expect(resume).toBeDefined();

    // A reset connection and a path that dies silently (no keepalive: only the read timeout
    // can tell) are each followed by a new stream.
    const before = streams().length;
    server.dropStreams("reset");
    await waitFor("a new stream after the reset", () => streams().length > before);
    await server.waitForStreams(1);
    server.dropStreams("silent");
    await waitFor("a new stream after the silent drop", () => streams().length > before + 1);

    expect((await pressHttpAction(resume)).status).toBe(200);
    const cleared = await waitFor("the phone's resume", () => ofType(p.stateDir, "cleared")[0]);
    expect(cleared).toMatchObject({ by: "phone" });
    await waitFor("the incident's close", () => ofType(p.stateDir, "incident_closed")[0]);
    // The pass that carried it out was one the stream asked for.
    await waitFor("that pass's line", () =>
      w.passes().some((x) => x.trigger === "a command on the control topic"),
    );
    const carried = w
      .passes()
      .filter((x) => Date.parse(x.at) <= Date.parse(cleared.at))
      .at(-1);
    expect(carried?.trigger).toBe("a command on the control topic");

    // The same press again: read from the stream too, and refused.
    expect((await pressHttpAction(resume)).status).toBe(200);
    const replay = await waitFor(
      "the replay's refusal",
      () => ofType(p.stateDir, "remote_refused")[0],
    );
    expect(replay).toMatchObject({ reason: "replayed", verb: "resume" });
    expect(ofType(p.stateDir, "remote_accepted")).toHaveLength(1);
    expect(await w.stop()).toBe(0);
    expect(server.openStreams).toBe(0);
  });
});
