// Claude Code 2.1.328's screens as tmux's capture-pane showed them (test/fixtures/claude-2.1.328/
// screens/), read by the launchers: the trust dialog and its selected option, another dialog,
// the input box; and the tmux start watcher driven through a scripted window.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  dialogOnScreen,
  isTrustDialog,
  showsDialog,
  showsInputBox,
  trustKey,
} from "../../src/launch/claude-screen.js";
import { StartFailed } from "../../src/launch/start-failed.js";
import { watchClaudeStart } from "../../src/launch/tmux-claude.js";

const screen = (name: string) =>
  readFileSync(join(__dirname, "../fixtures/claude-2.1.328/screens", `${name}.txt`), "utf8");
const TRUST = screen("trust-dialog");
const TRUST_YES = screen("trust-dialog-yes-selected");
const API_KEY = screen("api-key-dialog");
const INPUT = screen("input-box-after-dialogs");

describe("the real 2.1.328 screens", () => {
  it("the trust dialog is one, with No, exit selected: the key is Down, never Enter", () => {
    expect(isTrustDialog(TRUST)).toBe(true);
    expect(trustKey(TRUST)).toBe("down");
  });
  it("once Yes is selected the key is Enter", () => {
    expect(trustKey(TRUST_YES)).toBe("enter");
  });
  it("the ≤ 2.0 dialog selected Yes first: Enter", () => {
    const old = [
      "─".repeat(48),
      " Do you trust the files in this folder?",
      " ❯ 1. Yes, proceed",
      "   2. No, exit",
      " Enter to confirm · Esc to cancel",
    ].join("\n");
    expect(trustKey(old)).toBe("enter");
  });
  it("a selection above Yes moves up", () => {
    const below = TRUST.replace(" ❯ No, exit", "   No, exit").replace(
      "   Yes, I trust this folder",
      "   Yes, I trust this folder\n ❯ Something else",
    );
    expect(trustKey(below)).toBe("up");
  });
  it("the custom API key dialog is a dialog but not the trust dialog: no key for it", () => {
    expect(showsDialog(API_KEY)).toBe(true);
    expect(isTrustDialog(API_KEY)).toBe(false);
    expect(trustKey(API_KEY)).toBeNull();
  });
  it("the input box after the dialogs shows, and is no dialog", () => {
    expect(showsInputBox(INPUT)).toBe(true);
    expect(showsDialog(INPUT)).toBe(false);
    for (const s of [TRUST, TRUST_YES, API_KEY]) expect(showsInputBox(s)).toBe(false);
  });
});

describe("dialogOnScreen: a screen held at a dialog, 2.1.328 and 2.1.332", () => {
  const fixture = (version: string, name: string) =>
    readFileSync(join(__dirname, `../fixtures/claude-${version}`, name), "utf8");
  it.each([
    [
      "2.1.328",
      "screens/auto-mode-cant-check.txt",
      "Auto mode can't check actions in this session",
    ],
    [
      "2.1.332",
      "screens/auto-mode-cant-check.txt",
      "Auto mode can't check actions in this session",
    ],
    ["2.1.328", "screens/permission-prompt-manual-mode.txt", "Bash command"],
    ["2.1.332", "screens/permission-prompt-manual-mode.txt", "Bash command"],
    ["2.1.328", "screen-permission-prompt.txt", "Bash command"],
    ["2.1.328", "screens/trust-dialog.txt", "Accessing workspace:"],
    ["2.1.328", "screens/api-key-dialog.txt", "Detected a custom API key in your environment"],
  ])("%s %s is held at %s", (version, name, first) => {
    const s = fixture(version, name);
    expect(dialogOnScreen(s)).toBe(first);
    expect(showsDialog(s)).toBe(true);
    expect(showsInputBox(s)).toBe(false);
  });
  it.each([
    "screens/input-box-after-dialogs.txt",
    // the input box's own footer says "Esc to cancel": Claude continues by itself
    "screen-usage-limit-wait.txt",
    "screen-retrying.txt",
  ])("2.1.328 %s shows no dialog", (name) => {
    expect(dialogOnScreen(fixture("2.1.328", name))).toBeNull();
  });
  it("an empty screen, or one of plain output, shows none", () => {
    expect(dialogOnScreen("")).toBeNull();
    expect(dialogOnScreen("$ sleep 100\nhello\n")).toBeNull();
  });
});

/** The scripted watches' settings: the trust dialog may be answered, reads every 5 ms. */
const SCRIPTED = { acceptTrustDialog: true, root: "/srv/catalog", arrivalMs: 300, pollMs: 5 };

/** A window that shows `screens` in turn, moving on when a key is pressed or per poll. */
function window(steps: { screen: string | null; onKey?: Record<string, number> }[]) {
  let at = 0;
  const pressed: string[] = [];
  let arrived = false;
  return {
    pressed,
    arrive: () => {
      arrived = true;
    },
    watch: (over: Partial<Parameters<typeof watchClaudeStart>[0]> = {}) =>
      watchClaudeStart({
        read: async () => steps[at]?.screen ?? null,
        press: async (key) => {
          pressed.push(key);
          const next = steps[at]?.onKey?.[key];
          if (next !== undefined) at = next;
        },
        arrived: () => arrived || steps[at]?.screen === INPUT,
        ...SCRIPTED,
        startMs: 2_000,
        ...over,
      }),
  };
}

describe("watchClaudeStart: the tmux start past Claude's dialogs", () => {
  it("accepts the trust dialog with Down then Enter, and is done when the prompt arrives", async () => {
    const w = window([
      { screen: TRUST, onKey: { Down: 1 } },
      { screen: TRUST_YES, onKey: { Enter: 2 } },
      { screen: INPUT },
    ]);
    expect(await w.watch()).toBe("arrived");
    expect(w.pressed).toEqual(["Down", "Enter"]);
  });

  it("a pass given up stops its start's watch: no key is pressed after the abort", async () => {
    const pass = new AbortController();
    const w = window([
      { screen: TRUST, onKey: { Down: 1 } },
      { screen: TRUST_YES, onKey: { Enter: 2 } },
      { screen: INPUT },
    ]);
    const press = w.watch({
      signal: pass.signal,
      press: async (key) => {
        w.pressed.push(key);
        pass.abort(); // given up while the first key was on its way
      },
    });
    await expect(press).rejects.toThrow("tmux: Claude's start was given up with its pass");
    expect(w.pressed).toEqual(["Down"]);
  });

  it("Enter only on a Yes that holds: a late Down that moved the menu back is answered first", async () => {
    // What the pane shows at each read: Yes at first sight, then No again (a Down sent earlier
    // arrived late), so Enter now would exit Claude Code.
    let screen = TRUST;
    let reads = 0;
    const pressed: string[] = [];
    const end = await watchClaudeStart({
      read: async () => {
        reads++;
        if (pressed.length === 1 && reads === 3) screen = TRUST; // the late Down wraps to No
        return screen;
      },
      press: async (key) => {
        pressed.push(key);
        if (key === "Down") screen = screen === TRUST ? TRUST_YES : TRUST;
        if (key === "Enter") screen = screen === TRUST_YES ? INPUT : "exited";
      },
      arrived: () => screen === INPUT,
      ...SCRIPTED,
      startMs: 5_000,
    });
    expect(end).toBe("arrived");
    expect(pressed).toEqual(["Down", "Down", "Enter"]);
  });

  it("a late Down is not pressed twice: the selection gets ARROW_REPRESS_MS to move", async () => {
    // The Down lands 1 s after it was sent (a loaded host): pressed again at once, it would
    // land twice and move the menu past Yes.
    let screen = TRUST;
    const pressed: string[] = [];
    const end = await watchClaudeStart({
      read: async () => screen,
      press: async (key) => {
        pressed.push(key);
        if (key === "Down")
          setTimeout(() => (screen = screen === TRUST ? TRUST_YES : TRUST), 1_000);
        if (key === "Enter") screen = screen === TRUST_YES ? INPUT : "exited";
      },
      arrived: () => screen === INPUT,
      ...SCRIPTED,
      startMs: 5_000,
    });
    expect(end).toBe("arrived");
    expect(pressed).toEqual(["Down", "Enter"]);
  });

  it("a pass given up during Yes's hold presses no Enter", async () => {
    const pass = new AbortController();
    let screen = TRUST;
    const pressed: string[] = [];
    const end = watchClaudeStart({
      read: async () => {
        if (screen === TRUST_YES) pass.abort(); // given up while Yes is being held
        return screen;
      },
      press: async (key) => {
        pressed.push(key);
        if (key === "Down") screen = TRUST_YES;
        if (key === "Enter") screen = INPUT;
      },
      arrived: () => screen === INPUT,
      ...SCRIPTED,
      startMs: 5_000,
      signal: pass.signal,
    });
    await expect(end).rejects.toThrow("tmux: Claude's start was given up with its pass");
    expect(pressed).toEqual(["Down"]);
  });

  it("a dialog that takes no key fails the start at startMs", async () => {
    const pressed: string[] = [];
    const err = await watchClaudeStart({
      read: async () => TRUST,
      press: async (key) => {
        pressed.push(key);
      },
      arrived: () => false,
      ...SCRIPTED,
      startMs: 3_000,
    }).catch((e) => e);
    expect(err).toBeInstanceOf(StartFailed);
    expect(err.reason).toMatch(/did not show its input box within 3s/);
    expect(pressed).toEqual(["Down", "Down"]);
  });

  it("a lost key is pressed again only after the screen is re-read", async () => {
    // The first Down is lost (the dialog's first instant): the screen still selects No.
    let downs = 0;
    const steps = [
      { screen: TRUST },
      { screen: TRUST_YES, onKey: { Enter: 2 } },
      { screen: INPUT },
    ];
    let at = 0;
    const pressed: string[] = [];
    const end = await watchClaudeStart({
      read: async () => steps[at]?.screen ?? null,
      press: async (key) => {
        pressed.push(key);
        if (key === "Down" && ++downs === 2) at = 1;
        else if (key === "Enter" && at === 1) at = 2;
      },
      arrived: () => at === 2,
      ...SCRIPTED,
      startMs: 5_000,
    });
    expect(end).toBe("arrived");
    expect(pressed).toEqual(["Down", "Down", "Enter"]);
  });

  it("without accept_trust_dialog it presses nothing and fails with the screen and the fix", async () => {
    const w = window([{ screen: TRUST }]);
    const err = await w.watch({ acceptTrustDialog: false }).catch((e) => e);
    expect(err).toBeInstanceOf(StartFailed);
    expect(err.reason).toMatch(/folder-trust dialog/);
    expect(err.reason).toMatch(/manager\.tmux\.accept_trust_dialog: true/);
    expect(err.screen).toMatch(/Yes, I trust this folder/);
    expect(w.pressed).toEqual([]);
  });

  it("any other dialog fails the start with its screen, even with accept_trust_dialog", async () => {
    const w = window([{ screen: API_KEY }]);
    const err = await w.watch().catch((e) => e);
    expect(err).toBeInstanceOf(StartFailed);
    expect(err.reason).toMatch(/held at a dialog/);
    expect(err.screen).toMatch(/Detected a custom API key/);
    expect(w.pressed).toEqual([]);
  });

  it("an input box whose prompt never arrives fails once arrivalMs has passed", async () => {
    const w = window([{ screen: INPUT }]);
    const err = await w.watch({ arrived: () => false }).catch((e) => e);
    expect(err).toBeInstanceOf(StartFailed);
    expect(err.reason).toMatch(/prompt did not arrive/);
  });

  it("a window that closed ends the watch as gone (the tick judges the exit)", async () => {
    const w = window([{ screen: null }]);
    expect(await w.watch()).toBe("gone");
  });

  it("a screen that never settles fails after startMs with what it showed", async () => {
    const w = window([{ screen: "loading…" }]);
    const err = await w.watch({ startMs: 50 }).catch((e) => e);
    expect(err).toBeInstanceOf(StartFailed);
    expect(err.reason).toMatch(/did not show its input box/);
    expect(err.screen).toBe("loading…");
  });
});
