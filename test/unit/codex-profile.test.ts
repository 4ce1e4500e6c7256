// sheepdog's Codex profile (src/agent/codex/profile.ts) and how a Codex manager's settings are
// read (toml.ts, settings.ts): what init writes, what a second program adds, what doctor sees.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  hookStateKey,
  hookTrustHash,
  profilePath,
  profileText,
  setInTable,
} from "../../src/agent/codex/profile.js";
import { codexSettings } from "../../src/agent/codex/settings.js";
import { tomlEntries, tomlGet } from "../../src/agent/codex/toml.js";
import { tempDir } from "../helpers/cli.js";
import { FIXTURES } from "../helpers/fixtures.js";

const FILE = "/home/me/.codex/sheepdog.config.toml";
const HASH = hookTrustHash("Stop", { command: "sheepdog hook stop", timeout: 10 });

describe("the TOML sheepdog reads", () => {
  it("Codex's own rewritten config.toml (after Trust all)", () => {
    const text = readFileSync(
      join(FIXTURES, "codex-0.171.0", "config-after-trust-all.toml"),
      "utf8",
    );
    const e = tomlEntries(text);
    expect(tomlGet(e, [], "approval_policy")).toBe("never");
    expect(tomlGet(e, [], "notify")).toEqual([
      "sh",
      "-c",
      'printf \'%s\' "$1" > "$0/notify-$(date +%s%N).json"',
      "{CAPTURE_DIR}",
    ]);
    expect(tomlGet(e, ["projects", "{CWD}"], "trust_level")).toBe("trusted");
    expect(
      tomlGet(e, ["hooks", "state", "{CODEX_HOME}/hooks.json:stop:0:0"], "trusted_hash"),
    ).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(tomlGet(e, ["tui", "model_availability_nux"], "gpt-6.1-sol")).toBe(1);
  });
  it("arrays of tables nest (`[[hooks.Stop.hooks]]` in the last `[[hooks.Stop]]`); comments go", () => {
    const e = tomlEntries(
      '[[hooks.Stop]]\n[[hooks.Stop.hooks]]\ncommand = "a" # first\n[[hooks.Stop]]\n[[hooks.Stop.hooks]]\ncommand = "b"\n[[hooks.Stop.hooks]]\ncommand = \'c\'\n',
    );
    expect(tomlGet(e, ["hooks", "Stop", "0", "hooks", "0"], "command")).toBe("a");
    expect(tomlGet(e, ["hooks", "Stop", "1", "hooks", "0"], "command")).toBe("b");
    expect(tomlGet(e, ["hooks", "Stop", "1", "hooks", "1"], "command")).toBe("c");
  });
  it("what it cannot read is skipped, not guessed", () => {
    const e = tomlEntries('x = { a = 1 }\ny = """\nmulti\n"""\nz = "ok"\n');
    expect(tomlGet(e, [], "x")).toBeUndefined();
    expect(tomlGet(e, [], "z")).toBe("ok");
  });
});

describe("the profile init writes", () => {
  const root = "/home/me/loops/catalog";
  it("a new one: permissions, the nudge hidden, the root trusted, the Stop hook and its hash", () => {
    const text = profileText(null, FILE, root);
    const e = tomlEntries(text);
    expect(tomlGet(e, [], "approval_policy")).toBe("never");
    expect(tomlGet(e, [], "sandbox_mode")).toBe("danger-full-access");
    expect(tomlGet(e, ["notice"], "hide_rate_limit_model_nudge")).toBe(true);
    expect(tomlGet(e, ["projects", root], "trust_level")).toBe("trusted");
    expect(tomlGet(e, ["hooks", "Stop", "0", "hooks", "0"], "command")).toBe("sheepdog hook stop");
    expect(tomlGet(e, ["hooks", "state", hookStateKey(FILE, "Stop", 0)], "trusted_hash")).toBe(
      HASH,
    );
  });
  it("a second program adds its root only; run again, nothing changes", () => {
    const one = profileText(null, FILE, root);
    const two = profileText(one, FILE, "/home/me/loops/dog");
    expect(two.startsWith(one.trimEnd())).toBe(true);
    expect(two.match(/\[\[hooks\.Stop\]\]/g)).toHaveLength(1);
    expect(tomlGet(tomlEntries(two), ["projects", "/home/me/loops/dog"], "trust_level")).toBe(
      "trusted",
    );
    expect(profileText(two, FILE, root)).toBe(two);
  });
  it("a table that exists is changed in place, never defined twice (TOML forbids it)", () => {
    const edited = profileText(null, FILE, root)
      .replace('trust_level = "trusted"', 'trust_level = "untrusted"')
      .replace(HASH, "sha256:old");
    const fixed = profileText(edited, FILE, root);
    expect(fixed.match(/\[projects\."\/home\/me\/loops\/catalog"\]/g)).toHaveLength(1);
    expect(fixed.match(/\[hooks\.state\./g)).toHaveLength(1);
    expect(
      tomlGet(
        tomlEntries(fixed),
        ["hooks", "state", hookStateKey(FILE, "Stop", 0)],
        "trusted_hash",
      ),
    ).toBe(HASH);
  });
  it("a person's own Stop hook first: ours is the next group, trusted as that group", () => {
    const theirs =
      '[[hooks.Stop]]\n[[hooks.Stop.hooks]]\ntype = "command"\ncommand = "notify-me"\n';
    const text = profileText(theirs, FILE, root);
    expect(tomlGet(tomlEntries(text), ["hooks", "Stop", "1", "hooks", "0"], "command")).toBe(
      "sheepdog hook stop",
    );
    expect(text).toContain(`[hooks.state."${hookStateKey(FILE, "Stop", 1)}"]`);
  });
  it("setInTable: a key added under its header, a table appended", () => {
    expect(setInTable("[a]\nx = 1\n\n[b]\n", ["a"], "y", "2")).toBe("[a]\ny = 2\nx = 1\n\n[b]\n");
    expect(setInTable("[a]\nx = 1\n", ["p", "/q r"], "k", '"v"')).toBe(
      '[a]\nx = 1\n\n[p."/q r"]\nk = "v"\n',
    );
  });
});

describe("a Codex manager's settings as doctor reads them", () => {
  function seat(files: Record<string, string>) {
    const dir = tempDir("codex-settings-");
    mkdirSync(dir, { recursive: true });
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
    return dir;
  }
  const argv = ["codex", "--no-daemon", "--profile", "sheepdog", "{prompt}"];
  it("the profile over config.toml; the trusted hook and the trusted root", () => {
    const s = seat({
      "config.toml": 'approval_policy = "on-request"\nsandbox_mode = "read-only"\n',
    });
    writeFileSync(profilePath(s), profileText(null, profilePath(s), "/loops/catalog"));
    const got = codexSettings(s, argv);
    expect(got.approval).toEqual({ value: "never", from: profilePath(s) });
    expect(got.sandbox.value).toBe("danger-full-access");
    expect(got.trusted).toEqual(["/loops/catalog"]);
    expect(got.stopHook).toEqual({ file: profilePath(s), trusted: true });
  });
  it("without --profile the profile is not read: config.toml alone, Codex's defaults", () => {
    const s = seat({ "config.toml": "" });
    writeFileSync(profilePath(s), profileText(null, profilePath(s), "/loops/catalog"));
    const got = codexSettings(s, ["codex", "--no-daemon", "{prompt}"]);
    expect(got.approval).toEqual({ value: null, from: "Codex's default" });
    expect(got.stopHook).toBeNull();
  });
  it("-c, -a, -s and the bypass flag win over the files", () => {
    const s = seat({ "config.toml": 'approval_policy = "on-request"\n' });
    expect(codexSettings(s, ["codex", "-c", 'approval_policy="never"', "x"]).approval.value).toBe(
      "never",
    );
    expect(
      codexSettings(s, ["codex", "-c", "approval_policy=never", "-s", "workspace-write", "x"])
        .sandbox,
    ).toEqual({
      value: "workspace-write",
      from: "-s workspace-write",
    });
    const bypass = codexSettings(s, ["codex", "--dangerously-bypass-approvals-and-sandbox", "x"]);
    expect([bypass.approval.value, bypass.sandbox.value]).toEqual(["never", "danger-full-access"]);
  });
  it("sheepdog's Stop hook in hooks.json: trusted only with its hash recorded for its group", () => {
    const hooks = JSON.stringify({
      hooks: {
        Stop: [
          { hooks: [{ type: "command", command: "other" }] },
          { hooks: [{ type: "command", command: "sheepdog hook stop", timeout: 10 }] },
        ],
      },
    });
    const untrusted = seat({ "hooks.json": hooks, "config.toml": "" });
    expect(codexSettings(untrusted, argv).stopHook).toEqual({
      file: join(untrusted, "hooks.json"),
      trusted: false,
    });
    const key = hookStateKey(join(untrusted, "hooks.json"), "Stop", 1);
    writeFileSync(
      join(untrusted, "config.toml"),
      `[hooks.state."${key}"]\ntrusted_hash = "${HASH}"\n`,
    );
    expect(codexSettings(untrusted, argv).stopHook?.trusted).toBe(true);
  });
});
