// The phone's answers against someone who can read the page topic (DESIGN §8, §18): real
// `sheepdog tick` processes against the ntfy stand-in on 127.0.0.1, each press sent exactly as
// the ntfy Android app sends it. A token is worth one command, once, however it is spelt.
import { describe, expect, it } from "vitest";
import { tempDir } from "./helpers/cli.js";
import { type NtfyAction, pressHttpAction, useNtfyServer } from "./helpers/ntfy-server.js";
import { action, PAGES, phoneProgram, tick } from "./helpers/phone.js";
import { ofType } from "./helpers/watchdog.js";

const server = useNtfyServer();
const pages = () => server.topicMessages(PAGES);
const B64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/** A program whose manager cannot start: its page offers "Pause 2 h", and its incident stays open. */
async function failingStart() {
  const p = phoneProgram(server, {
    manager: { launcher: "command", command: [`${tempDir()}/no-such-manager`] },
  });
  expect(await tick(p.env)).toBe("start");
  const page = pages().find((m) => m.title?.endsWith("did not start"));
  expect(page?.actions?.map((a) => a.label)).toEqual(["Pause 2 h", "Copy command"]);
  return { ...p, pause: action(page, "Pause 2 h") };
}

describe("a token pressed again", () => {
  it("spelt another way (the same MAC to a base64 decoder) is refused, not carried out twice", async () => {
    const p = await failingStart();
    expect((await pressHttpAction(p.pause)).status).toBe(200);
    await tick(p.env);
    expect(ofType(p.stateDir, "remote_accepted")).toMatchObject([{ verb: "pause-2h" }]);
    expect(ofType(p.stateDir, "paused")).toHaveLength(1);

    // The token's last character with its two padding bits changed: another text, same bytes.
    const respelt: NtfyAction = {
      ...p.pause,
      body: (p.pause.body ?? "").replace(/(token=[A-Za-z0-9_-]{42})(.)$/, (_m, head, c) => {
        const i = B64URL.indexOf(c);
        return `${head}${B64URL[i ^ 1]}`;
      }),
    };
    expect(respelt.body).not.toBe(p.pause.body);
    expect((await pressHttpAction(respelt)).status).toBe(200);
    await tick(p.env);
    expect(ofType(p.stateDir, "remote_accepted")).toHaveLength(1);
    expect(ofType(p.stateDir, "paused")).toHaveLength(1);
    expect(ofType(p.stateDir, "remote_refused")).toMatchObject([{ reason: "forged" }]);
  });
});
