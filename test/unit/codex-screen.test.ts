// Codex 0.171.0's TUI screens as tmux's capture-pane showed them (test/fixtures/codex-0.171.0/
// screen-*.txt), read by the tmux launcher: its two trust dialogs and the selected option,
// another dialog, the composer; and the start watcher driven through a scripted window.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { agentScreen } from "../../src/launch/agent-screen.js";
import {
  codexDialogOnScreen,
  codexShowsComposer,
  codexShowsDialog,
  codexTrustDialog,
  codexTrustKey,
} from "../../src/launch/codex-screen.js";
import { StartFailed } from "../../src/launch/start-failed.js";
import { watchCodexStart } from "../../src/launch/tmux-codex.js";
import { FIXTURES } from "../helpers/fixtures.js";

const screen = (name: string) =>
  readFileSync(join(FIXTURES, "codex-0.171.0", `screen-${name}.txt`), "utf8");
const TRUST = screen("trust-dialog");
const HOOKS = screen("hooks-review");
const READY = screen("ready");
/** The hooks dialog with its selection moved to "Trust all" (a Down pressed). */
const HOOKS_TRUST_ALL = HOOKS.replace("› 1. Review hooks", "  1. Review hooks").replace(
  "  2. Trust all and continue",
  "› 2. Trust all and continue",
);

describe("the real 0.171.0 screens", () => {
  const table: [string, string, ReturnType<typeof codexTrustDialog>, boolean, boolean][] = [
    // name, screen, trust dialog, a dialog, the composer
    ["trust-dialog", TRUST, "folder", true, false],
    ["hooks-review", HOOKS, "hooks", true, false],
    ["ready", READY, null, false, true],
    ["turn-done", screen("turn-done"), null, false, true],
    ["request-hung", screen("request-hung"), null, false, true],
    ["interrupted", screen("interrupted"), null, false, true],
    ["usage-limit", screen("usage-limit"), null, false, true],
    ["after-quit", screen("after-quit"), null, false, false],
  ];
  for (const [name, s, trust, dialog, composer] of table)
    it(`${name}: trust ${trust}, dialog ${dialog}, composer ${composer}`, () => {
      expect(codexTrustDialog(s)).toBe(trust);
      expect(codexShowsDialog(s)).toBe(dialog);
      expect(codexShowsComposer(s)).toBe(composer);
    });

  it("the folder dialog selects Trust and continue first: Enter", () => {
    expect(codexTrustKey(TRUST)).toBe("enter");
  });
  it("the hooks dialog selects Review hooks first: Down to Trust all, then Enter", () => {
    expect(codexTrustKey(HOOKS)).toBe("down");
    expect(codexTrustKey(HOOKS_TRUST_ALL)).toBe("enter");
  });
  it("a selection below the trusting option: Up", () => {
    const third = HOOKS.replace("› 1. Review hooks", "  1. Review hooks").replace(
      "  3. Continue without trusting",
      "› 3. Continue without trusting",
    );
    expect(codexTrustKey(third)).toBe("up");
  });
  it("an unreadable screen cannot rule a dialog out; no key is pressed blind", () => {
    expect(codexShowsDialog(null)).toBe(true);
    expect(codexTrustKey(null)).toBeNull();
    expect(codexTrustKey(READY)).toBeNull();
  });
  it("another menu with Enter and Esc in its footer is a dialog, not a trust one", () => {
    const nudge = [
      "  Approaching rate limits",
      "  Switch to gpt-6-luna for lower credit usage?",
      "› 1. Switch to gpt-6-luna",
      "  2. Keep current model",
      "  3. Keep current model (never show again)",
      "",
      "  enter confirm · esc skip",
    ].join("\n");
    expect(codexShowsDialog(nudge)).toBe(true);
    expect(codexTrustKey(nudge)).toBeNull();
    expect(codexDialogOnScreen(nudge)).toBe("Approaching rate limits");
  });
});

describe("the dialog a Codex pane is held at (a nudge never types into it; a start held at it is blocked)", () => {
  const codex = agentScreen({ manager: { agent: "codex" } });
  const claude = agentScreen({ manager: { agent: "claude" } });
  it.each([
    ["hooks-review", "Hooks need review"],
    ["trust-dialog", expect.stringMatching(/^Trust this folder\? Codex can read, edit.{60,}…$/)],
    ["ready", null],
    ["turn-done", null],
    ["request-hung", null],
    ["interrupted", null],
    ["usage-limit", null],
  ])("%s: %j", (name, first) => {
    expect(codex.dialog(screen(name))).toEqual(first);
  });
  it("Claude Code's reader sees no dialog on a Codex screen: each agent's screen is read by its own", () => {
    expect(claude.dialog(HOOKS)).toBeNull();
    expect(codex.limitDialog(screen("usage-limit"))).toBe(false);
  });
});

/** A scripted window: the screens it shows in turn (each key moves to the next). */
function window(screens: (string | null)[], arrivesAfter = Number.POSITIVE_INFINITY) {
  const pressed: string[] = [];
  let at = 0;
  let reads = 0;
  return {
    pressed,
    w: {
      read: async () => {
        reads++;
        return screens[Math.min(at, screens.length - 1)] ?? null;
      },
      press: async (key: "Enter" | "Down" | "Up") => {
        pressed.push(key);
        at++;
      },
      arrived: () => reads >= arrivesAfter,
      acceptTrustDialog: true,
      root: "/loops/catalog",
      startMs: 5_000,
      arrivalMs: 600,
      pollMs: 10,
    },
  };
}

describe("watchCodexStart", () => {
  it("answers both dialogs when allowed: Enter, then Down and Enter; done once the prompt arrived", async () => {
    const { pressed, w } = window([TRUST, HOOKS, HOOKS_TRUST_ALL, READY], 5);
    await expect(watchCodexStart(w)).resolves.toBe("arrived");
    expect(pressed).toEqual(["Enter", "Down", "Enter"]);
  });
  it("without accept_trust_dialog the start fails with the screen and the fix; nothing is pressed", async () => {
    const { pressed, w } = window([TRUST]);
    const err = await watchCodexStart({ ...w, acceptTrustDialog: false }).catch((e) => e);
    expect(err).toBeInstanceOf(StartFailed);
    expect(err.reason).toMatch(/held at its trust dialog.*sheepdog init --agent codex/);
    expect(err.screen).toContain("Trust this folder?");
    expect(pressed).toEqual([]);
  });
  it("another dialog fails the start whatever accept_trust_dialog says", async () => {
    const other = "  Something else\n› 1. Yes\n  2. No\n\n  enter confirm · esc back\n";
    const { pressed, w } = window([other]);
    const err = await watchCodexStart(w).catch((e) => e);
    expect(err.reason).toMatch(/held at a dialog/);
    expect(pressed).toEqual([]);
  });
  it("the composer with no prompt arriving fails after arrivalMs", async () => {
    const { w } = window([READY]);
    const err = await watchCodexStart(w).catch((e) => e);
    expect(err.reason).toMatch(/prompt did not arrive in a rollout/);
  });
  it("a window that closed is gone", async () => {
    const { w } = window([null]);
    await expect(watchCodexStart(w)).resolves.toBe("gone");
  });
});
