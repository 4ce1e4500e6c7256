// `sheepdog hook stop` and `sheepdog hook notification` (DESIGN §14) through the built CLI and
// the package's CommonJS fast path, fed the payloads the real Claude Code 2.1.328 sent
// (test/fixtures/claude-2.1.328/): a record per session and event in host state, no output at
// all, exit 0 whatever comes in.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { readHookRecords } from "../src/usage/hook-records.js";
import { sheepdog, tempDir } from "./helpers/cli.js";

const FIX = resolve("test/fixtures/claude-2.1.328");
const payload = (name: string) => readFileSync(join(FIX, name), "utf8");

function host() {
  const state = join(tempDir(), "state");
  return { state, env: { SHEEPDOG_STATE_DIR: state } };
}

/** Through bin/sheepdog.cjs, as Claude Code runs it. */
function viaBin(args: string[], env: Record<string, string>, input: string) {
  const r = spawnSync(process.execPath, [resolve("bin/sheepdog.cjs"), ...args], {
    env: { ...process.env, ...env },
    input,
    encoding: "utf8",
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe("sheepdog hook stop / notification", () => {
  it("Stop: the session's record (its time, background_tasks, session_crons), no output, 0600", () => {
    const h = host();
    const body = JSON.parse(payload("hook-stop.json"));
    const r = viaBin(["hook", "stop"], h.env, JSON.stringify(body));
    expect(r).toMatchObject({ code: 0, stdout: "", stderr: "" });
    const rec = readHookRecords(body.session_id, { SHEEPDOG_STATE_DIR: h.state });
    expect(rec.stop).toMatchObject({
      session_id: body.session_id,
      transcript_path: body.transcript_path,
      background_tasks: [],
      session_crons: [],
      background_count: 0,
      last_assistant_message: "Done.",
    });
    expect(Date.now() - Date.parse(String(rec.stop?.at))).toBeLessThan(60_000);
    expect(rec.notification).toBeNull();
    const file = join(h.state, "hooks", `${body.session_id}.stop.json`);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(h.state, "hooks")).mode & 0o777).toBe(0o700);
  });

  it("Notification: idle_prompt recorded beside the Stop, each in its own file", () => {
    const h = host();
    const stop = JSON.parse(payload("hook-stop.json"));
    const note = JSON.parse(payload("hook-notification-idle.json"));
    expect(sheepdog(["hook", "stop"], { env: h.env, input: JSON.stringify(stop) }).stdout).toBe("");
    const r = sheepdog(["hook", "notification"], { env: h.env, input: JSON.stringify(note) });
    expect(r).toMatchObject({ code: 0, stdout: "" });
    const rec = readHookRecords(note.session_id, { SHEEPDOG_STATE_DIR: h.state });
    expect(rec.notification).toMatchObject({
      notification_type: "idle_prompt",
      message: "Claude is waiting for your input",
    });
    expect(rec.stop?.session_id).toBe(stop.session_id);
  });

  it("background tasks and crons are kept (counted, the first ten), a long message is cut", () => {
    const h = host();
    const body = {
      ...JSON.parse(payload("hook-stop.json")),
      background_tasks: Array.from({ length: 12 }, (_, i) => ({
        id: `t${i}`,
        command: "sleep 600",
      })),
      session_crons: [{ id: "c1", schedule: "*/20 * * * *" }],
      last_assistant_message: "x".repeat(5000),
    };
    expect(viaBin(["hook", "stop"], h.env, JSON.stringify(body)).code).toBe(0);
    const { stop } = readHookRecords(body.session_id, { SHEEPDOG_STATE_DIR: h.state });
    expect(stop?.background_count).toBe(12);
    expect(stop?.background_tasks).toHaveLength(10);
    expect(stop?.cron_count).toBe(1);
    expect(String(stop?.last_assistant_message).length).toBeLessThan(210);
  });

  it("garbage, another event's payload, a session id that is no file name: exit 0, no output, nothing written", () => {
    const h = host();
    const inputs: [string, string][] = [
      ["stop", "not json"],
      ["stop", ""],
      ["stop", payload("hook-notification-idle.json")],
      ["notification", payload("hook-stop.json")],
      ["stop", JSON.stringify({ ...JSON.parse(payload("hook-stop.json")), session_id: "../../x" })],
      ["notification", "[1,2,3]"],
    ];
    for (const [event, input] of inputs) {
      const r = viaBin(["hook", event], h.env, input);
      expect(r, `${event} ${input.slice(0, 40)}`).toMatchObject({
        code: 0,
        stdout: "",
        stderr: "",
      });
    }
    expect(existsSync(join(h.state, "hooks")) ? readdirSync(join(h.state, "hooks")) : []).toEqual(
      [],
    );
  });

  it("an unwritable state folder still exits 0 with no output (SHEEPDOG_DEBUG says why)", () => {
    const env = { SHEEPDOG_STATE_DIR: "/proc/sheepdog-cannot-write" };
    const quiet = viaBin(["hook", "stop"], env, payload("hook-stop.json"));
    expect(quiet).toMatchObject({ code: 0, stdout: "", stderr: "" });
    const loud = viaBin(
      ["hook", "stop"],
      { ...env, SHEEPDOG_DEBUG: "1" },
      payload("hook-stop.json"),
    );
    expect(loud.code).toBe(0);
    expect(loud.stdout).toBe("");
    expect(loud.stderr).toMatch(/sheepdog hook: recording the stop payload/);
  });

  it("an unknown hook is a usage error naming the three", () => {
    const r = sheepdog(["hook", "pre-compact"], { input: "{}" });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/stop-failure\|stop\|notification/);
  });
});
