// The herdr launcher suite against the stand-in as Herdr 0.9.3 (protocol 22), and what the
// stand-in models of 0.9 beside 0.8.2: the protocol, `agent prompt --wait`'s stricter effect
// gate (PR #3506), a silent `send-keys`, answers still in the published schema's shapes.
import { describe, expect, it } from "vitest";
import { launcherSuite } from "./helpers/herdr-launcher-suite.js";
import { herdrTestbed, STANDIN_VERSIONS } from "./helpers/herdr-testbed.js";
import { answerProblems } from "./helpers/launch.js";

// The launcher's own bookkeeping (workspaces, names, env, bad answers) is release-blind: run once,
// in test/launch-herdr.test.ts.
launcherSuite("0.9.3", false);

describe("herdr stand-in as 0.9.3 beside 0.8.2", () => {
  const t = herdrTestbed("0.9.3");

  /** A workspace and an agent `m` in its pane, as `version`. */
  function agentAt(version: string) {
    const env = { HERDR_STANDIN_VERSION: version };
    const made = t.herdr(["workspace", "create", "--cwd", t.dir, "--no-focus"], env);
    const pane = JSON.parse(made.out).result.root_pane.pane_id as string;
    const started = t.herdr(
      ["agent", "start", "m", "--kind", "claude", "--pane", pane, "--timeout", "5000"],
      env,
    );
    expect(started.code).toBe(0);
    return { env, pane };
  }

  it("says its version and protocol, and its answers keep the schema's shapes", () => {
    expect(t.herdr(["--version"]).out).toBe("herdr 0.9.3\n");
    const { pane } = agentAt("0.9.3");
    const answers = [
      t.herdr(["workspace", "list"]),
      t.herdr(["agent", "list"]),
      t.herdr(["agent", "get", "m"]),
      t.herdr(["pane", "get", pane]),
      t.herdr(["pane", "process-info", "--pane", pane]),
      t.herdr(["agent", "prompt", "m", "hi", "--wait", "--until", "working", "--timeout", "6000"]),
    ];
    for (const a of answers) {
      expect(a.code).toBe(0);
      expect(answerProblems(a.out, "success_response")).toEqual([]);
    }
    // The server the state holds is 0.9.3's: an 0.8.2 client is the older side.
    const old = t.herdr(["agent", "list"], { HERDR_STANDIN_VERSION: "0.8.2" });
    expect(old.code).toBe(1);
    expect(answerProblems(old.err, "error_response")).toEqual([]);
    expect(JSON.parse(old.err).error).toEqual({
      code: "protocol_mismatch",
      message:
        "client protocol 20 is older than server protocol 22; upgrade the Herdr client before using this command",
    });
  });

  it("`send-keys` prints nothing on 0.9.3, the ok answer on 0.8.2", () => {
    for (const version of STANDIN_VERSIONS) {
      process.env.HERDR_STANDIN_STATE = `${t.stateFile}.${version}`;
      const { env } = agentAt(version);
      const r = t.herdr(["agent", "send-keys", "m", "enter"], env);
      expect(r.code).toBe(0);
      if (version === "0.9.3") expect(r.out).toBe("");
      else expect(answerProblems(r.out, "success_response")).toEqual([]);
    }
  });

  it("a prompt wait counts only `working` or `blocked` as taking effect from 0.9 (PR #3506)", () => {
    process.env.HERDR_STANDIN_TURN = "flicker";
    const wait = ["--wait", "--until", "idle", "--timeout", "6000"];
    for (const version of STANDIN_VERSIONS) {
      process.env.HERDR_STANDIN_STATE = `${t.stateFile}.${version}`;
      const { env } = agentAt(version);
      const r = t.herdr(["agent", "prompt", "m", "hi", ...wait], env);
      if (version === "0.8.2") {
        // idle → unknown → idle moved state_change_seq: 0.8.2 takes that for the prompt's effect.
        expect(r.code).toBe(0);
        continue;
      }
      expect(r.code).toBe(1);
      expect(JSON.parse(r.err).error).toEqual({
        code: "agent_prompt_stalled",
        message:
          "agent prompt produced no observed working or blocked state within 5000 ms; current status is idle",
      });
      // A caller's --timeout of 5 s or less gets the plain timeout instead.
      const short = t.herdr(["agent", "prompt", "m", "hi", "--wait", "--timeout", "4000"], env);
      expect(JSON.parse(short.err).error.code).toBe("timeout");
    }
  });

  it("0.8.2's stall names the state_change_seq that did not move", () => {
    process.env.HERDR_STANDIN_TURN = "unseen";
    const { env } = agentAt("0.8.2");
    const r = t.herdr(["agent", "prompt", "m", "hi", "--wait", "--timeout", "6000"], env);
    expect(JSON.parse(r.err).error).toEqual({
      code: "agent_prompt_stalled",
      message:
        "agent prompt produced no observed state change within 5000 ms; status is idle and state_change_seq remained 1",
    });
  });

  it("`agent read --source recent` of a working agent is refused; `visible` answers", () => {
    agentAt("0.9.3");
    t.herdr(["agent", "prompt", "m", "hi", "--wait", "--until", "working", "--timeout", "6000"]);
    const recent = t.herdr(["agent", "read", "m", "--source", "recent", "--lines", "60"]);
    expect(JSON.parse(recent.err).error.code).toBe("agent_not_idle");
    const visible = t.herdr(["agent", "read", "m", "--source", "visible"]);
    expect(visible.code).toBe(0);
    expect(visible.out).toContain("> hi");
  });
});
