// The herdr launcher against what real Herdr does wrong or unexpectedly, on both releases the
// stand-in models (0.8.2, 0.9.3): a protocol mismatch that names the older side, `blocked` from
// prose with no dialog open (#4064), an Enter answered with success that submitted nothing
// (#3313, #3730), a stalled or timed-out prompt wait whose prompt arrived, a manager that lands
// on a dialog, a manager that claims though its prompt was never seen, a server upgraded in
// place (agent names gone, pane ids kept).
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { tryAcquire } from "../src/claim/claim.js";
import { appendEvent } from "../src/journal/journal.js";
import { type HerdrTiming, launcher, startHerdr } from "../src/launch/herdr.js";
import { projectDirOf } from "../src/launch/herdr-arrival.js";
import { StartFailed } from "../src/launch/start-failed.js";
import { identityOf } from "../src/process/identity.js";
import { FAST } from "./helpers/herdr-launcher-suite.js";
import { herdrTestbed, STANDIN_VERSIONS, type Testbed } from "./helpers/herdr-testbed.js";
import { alive, readRecord, requestFor, TEST_BIN, waitFor } from "./helpers/launch.js";

/** The user entries of the program's transcripts that hold `prompt` (Claude got it that often). */
function entriesWith(t: Testbed, root: string, prompt: string): number {
  const dir = projectDirOf(t.seat, root);
  if (!existsSync(dir)) return 0;
  return readdirSync(dir)
    .filter((f) => f.endsWith(".jsonl"))
    .flatMap((f) => readFileSync(join(dir, f), "utf8").split("\n").filter(Boolean))
    .map((l) => JSON.parse(l) as { type: string; message: { content: string } })
    .filter((e) => e.type === "user" && e.message.content.includes(prompt)).length;
}

async function failure(p: Promise<unknown>): Promise<StartFailed> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(StartFailed);
  return err as StartFailed;
}

describe("protocol_mismatch names the older side, and the fix is for that side", () => {
  const t = herdrTestbed("0.8.2");

  it("a stale 0.8.2 herdr on PATH against a 0.9.3 server: replace that herdr, never restart Herdr", async () => {
    // The server a 0.9.3 client started.
    const made = t.herdr(["workspace", "create", "--cwd", t.dir, "--no-focus"], {
      HERDR_STANDIN_VERSION: "0.9.3",
    });
    expect(made.code).toBe(0);
    const err = await failure(startHerdr(requestFor(t.program()), FAST));
    expect(err.reason).toContain(
      "client protocol 20 is older than server protocol 22; upgrade the Herdr client",
    );
    expect(err.reason).toContain(`the herdr on PATH (${join(TEST_BIN, "herdr")}, protocol 20)`);
    expect(err.reason).toContain("upgrade or replace that herdr (`which -a herdr`");
    expect(err.reason).not.toMatch(/quit Herdr|server stop|run `herdr` again/i);
  });

  it("a 0.9.3 herdr against the 0.8.2 server it was updated from: quit Herdr and start it again", async () => {
    expect(t.herdr(["workspace", "create", "--cwd", t.dir, "--no-focus"]).code).toBe(0);
    process.env.HERDR_STANDIN_VERSION = "0.9.3";
    const err = await failure(startHerdr(requestFor(t.program()), FAST));
    // Herdr's own guidance (several lines) reaches the journal as one line.
    expect(err.reason).toContain(
      "client protocol 22 is newer than server protocol 20; restart the Herdr server before using this command. Stop the old server to use the new version. Stopping exits pane processes. Run `herdr server stop`, then run `herdr` again.",
    );
    expect(err.reason).toContain("quit Herdr and start it again");
    expect(err.reason).not.toContain("replace that herdr");
  });
});

for (const version of STANDIN_VERSIONS) {
  describe(`the herdr launcher and Herdr ${version}'s faults`, () => {
    const t = herdrTestbed(version);

    it("`blocked` from prose with no dialog open: no failed start, the prompt is typed into the pane", async () => {
      process.env.HERDR_STANDIN_QUESTION_PROSE = "1";
      const ctx = t.program();
      const req = requestFor(ctx);
      const launched = await startHerdr(req, FAST);
      expect(launched.agent).toBe("manager");
      // Herdr: blocked during startup (agent_not_ready), then agent_blocked for the prompt.
      expect(t.calls("agent start").map((c) => c.exit)).toEqual([1]);
      expect(t.calls("agent prompt").map((c) => c.exit)).toEqual([1]);
      expect(t.calls("pane send-text").map((c) => c.argv)).toEqual([
        ["pane", "send-text", launched.pane, req.prompt],
      ]);
      expect(t.calls("agent send-keys").map((c) => c.argv.slice(3))).toEqual([["enter"]]);
      expect(entriesWith(t, ctx.root, req.prompt)).toBe(1);
      expect(t.calls("pane close")).toEqual([]);
      expect(t.herdr(["agent", "get", "manager"]).out).toContain('"agent_status":"blocked"');
    });

    it("a real dialog still holds the start, prose or not", async () => {
      process.env.HERDR_STANDIN_QUESTION_PROSE = "1";
      process.env.HERDR_STANDIN_TRUST_DIALOG = "1";
      const err = await failure(startHerdr(requestFor(t.program()), FAST));
      expect(err.reason).toMatch(/agent manager started but is held at a dialog; Claude asks/);
      expect(err.screen).toContain("Is this a project you created or one you trust?");
      expect(t.calls("agent prompt")).toEqual([]);
      expect(t.calls("pane send-text")).toEqual([]);
    });

    it("Enter answered with success that submitted nothing: looked at again, Enter again, one copy", async () => {
      process.env.HERDR_STANDIN_COMPOSER = "1";
      process.env.HERDR_STANDIN_SEND_KEYS_NOOP = "1";
      const ctx = t.program();
      const req = requestFor(ctx);
      const launched = await startHerdr(req, FAST);
      expect(launched.agent).toBe("manager");
      expect(t.calls("agent prompt")).toHaveLength(1);
      expect(t.calls("agent send-keys").map((c) => [c.argv.slice(3), c.exit])).toEqual([
        [["enter"], 0],
        [["enter"], 0],
      ]);
      expect(entriesWith(t, ctx.root, req.prompt)).toBe(1);
    });

    it("Enter that never submits: the start fails saying so, and no second copy was sent", async () => {
      process.env.HERDR_STANDIN_COMPOSER = "1";
      process.env.HERDR_STANDIN_SEND_KEYS_NOOP = "99";
      const ctx = t.program();
      const err = await failure(startHerdr(requestFor(ctx), { ...FAST, tries: 2 }));
      expect(err.reason).toMatch(
        /send 1: agent_prompt_stalled; enter: herdr said ok, the prompt still on the screen; enter: herdr said ok/,
      );
      expect(err.reason).toContain("Herdr answered Enter with success but it submitted nothing");
      expect(t.calls("agent prompt")).toHaveLength(1);
      expect(t.calls("agent send-keys")).toHaveLength(3);
      expect(t.calls("pane close")).toHaveLength(1);
    });

    for (const turn of ["unseen", version === "0.9.3" ? "flicker" : null].filter(Boolean)) {
      it(`agent_prompt_stalled though the prompt arrived (a turn Herdr ${turn === "unseen" ? "never saw" : "saw only as idle → unknown → idle"}): the transcript decides`, async () => {
        process.env.HERDR_STANDIN_TURN = turn as string;
        const ctx = t.program();
        const req = requestFor(ctx);
        const launched = await startHerdr(req, FAST);
        expect(launched.agent).toBe("manager");
        expect(t.calls("agent prompt").map((c) => c.exit)).toEqual([1]);
        expect(t.calls("agent send-keys")).toEqual([]);
        expect(entriesWith(t, ctx.root, req.prompt)).toBe(1);
      });
    }

    it("a manager that lands on a dialog after its prompt: the wait times out, the transcript decides", async () => {
      process.env.HERDR_STANDIN_TURN = "dialog";
      const ctx = t.program();
      const req = requestFor(ctx);
      // Herdr sees `blocked` (activity), then waits for `working` until the timeout.
      const timing: HerdrTiming = { ...FAST, promptMs: 1_000 };
      const launched = await startHerdr(req, timing);
      expect(t.calls("agent prompt").map((c) => c.exit)).toEqual([1]);
      expect(entriesWith(t, ctx.root, req.prompt)).toBe(1);
      // The dialog is the manager's, later: never answered by the start.
      expect(t.calls("agent send-keys")).toEqual([]);
      expect(await launcher.screen(ctx, launched)).toContain("Do you want to proceed?");
    });

    it("a manager that claimed is a started manager, though its prompt was never seen", async () => {
      process.env.HERDR_STANDIN_DROP_PROMPTS = "3";
      const ctx = t.program();
      // The manager claims as soon as it runs (here: the test claims with its pid).
      const claimed = waitFor("the agent's record", () => readRecord(t.record)).then((rec) => {
        const id = identityOf(rec.pid);
        if (!id || !tryAcquire(ctx.stateDir, id).ok) throw new Error("could not claim");
        return rec;
      });
      // A look long enough for the claim, however slow this machine is.
      const launched = await startHerdr(requestFor(ctx), { ...FAST, arrivalMs: 5_000 });
      const rec = await claimed;
      expect(launched).toMatchObject({ agent: "manager", pid: rec.pid });
      // Seen during the first look: no second prompt for a manager at work.
      expect(t.calls("agent prompt")).toHaveLength(1);
      expect(t.calls("pane close")).toEqual([]);
      expect(alive(rec.pid)).toBe(true);
    });

    if (version === "0.8.2")
      it("a claim made and given up before the check ended still counts: the journal has it", async () => {
        process.env.HERDR_STANDIN_DROP_PROMPTS = "3";
        const ctx = t.program();
        const claimed = waitFor("the agent's record", () => readRecord(t.record)).then((rec) =>
          appendEvent(ctx.stateDir, { type: "claimed", pid: rec.pid, start_time: "x" }),
        );
        const launched = await startHerdr(requestFor(ctx), { ...FAST, tries: 2 });
        await claimed;
        expect(launched.agent).toBe("manager");
        expect(t.calls("agent prompt")).toHaveLength(2);
        expect(t.calls("pane close")).toEqual([]);
      });
  });
}

describe("a server upgraded in place from 0.8.2 to 0.9.3: names gone, pane ids kept", () => {
  const t = herdrTestbed("0.8.2");

  it("reads and closes the manager by pane, and starts the next one", async () => {
    const ctx = t.program();
    const req = requestFor(ctx);
    const launched = await startHerdr(req, FAST);
    const rec = await waitFor("the agent's record", () => readRecord(t.record));
    const before = t.state().panes.find((p) => p.pane_id === launched.pane);

    process.env.HERDR_STANDIN_VERSION = "0.9.3";
    process.env.HERDR_STANDIN_UPGRADE = "1";
    const list = t.herdr(["agent", "list"]);
    expect(JSON.parse(list.out).result.agents).toEqual([]);
    expect(JSON.parse(t.herdr(["agent", "get", "manager"]).err).error.code).toBe("agent_not_found");
    const after = t.state().panes.find((p) => p.pane_id === launched.pane);
    expect(after?.tab_id).toBe(launched.window);
    expect(after?.terminal_id).not.toBe(before?.terminal_id);

    const screen = await launcher.screen(ctx, launched);
    expect(screen).toContain(req.prompt);
    expect(t.calls("agent read").at(-1)?.exit).toBe(1);
    expect(t.calls("pane read").at(-1)?.exit).toBe(0);

    // The next start: the old manager's name is free on the new server.
    const next = await startHerdr(requestFor(ctx, "a second start"), FAST);
    expect(next.agent).toBe("manager");
    expect(next.pane).not.toBe(launched.pane);

    await launcher.close(ctx, launched);
    await waitFor("the old manager to end", () => !alive(rec.pid));
    expect(t.state().panes.some((p) => p.pane_id === launched.pane)).toBe(false);
  });
});
