// What the herdr launcher reads off a pane's screen and off Herdr's protocol_mismatch message.
import { describe, expect, it } from "vitest";
import { isTrustDialog, showsDialog } from "../../src/launch/claude-screen.js";
import { protocolFix } from "../../src/launch/herdr.js";

const RULE = "─".repeat(48);

describe("showsDialog: a dialog waiting for an answer, not text that reads like one", () => {
  const cases: [string, string | null, boolean][] = [
    [
      "Claude's folder-trust dialog",
      [
        RULE,
        " Do you trust the files in this folder?",
        " ❯ 1. Yes, proceed",
        "   2. No, exit",
        "",
        " Enter to confirm · Esc to cancel",
      ].join("\n"),
      true,
    ],
    [
      "a Bash permission prompt",
      [
        RULE,
        " Bash command",
        "   git push",
        " Do you want to proceed?",
        " ❯ 1. Yes",
        "   2. No",
        " Esc to cancel",
      ].join("\n"),
      true,
    ],
    [
      "a selection form",
      [
        RULE,
        " Pick one",
        " ❯ 1. A",
        "   2. B",
        " Enter to select · ↑/↓ to navigate · Esc to cancel",
      ].join("\n"),
      true,
    ],
    [
      "prose Herdr's fallback rule takes for a question (#4064)",
      [
        "● I finished the refactor and the tests pass.",
        "",
        "  Would you like to open a pull request? If yes, I will push the branch.",
        "> ",
        "status: idle",
      ].join("\n"),
      false,
    ],
    [
      "an old form's footer above the last rule (it was answered)",
      [" Enter to confirm · Esc to cancel", "(trusted this folder)", RULE, "> ", RULE].join("\n"),
      false,
    ],
    ["an unreadable screen (a dialog cannot be ruled out)", null, true],
  ];
  for (const [what, screen, want] of cases)
    it(`${want ? "sees" : "sees no dialog in"} ${what}`, () => {
      expect(showsDialog(screen)).toBe(want);
    });

  it("only the trust dialog is the one accept_trust_dialog answers", () => {
    expect(isTrustDialog(cases[0]?.[1] ?? null)).toBe(true);
    expect(isTrustDialog(cases[1]?.[1] ?? null)).toBe(false);
  });
});

describe("protocolFix: the fix for the side Herdr names as the older", () => {
  const env = { PATH: "/nonexistent" };
  it("an older client: replace the herdr on PATH; the server is left alone", () => {
    const fix = protocolFix(
      "client protocol 20 is older than server protocol 22; upgrade the Herdr client before using this command",
      env,
    );
    expect(fix).toContain(
      "the herdr on PATH (herdr, protocol 20) is older than Herdr's running server (protocol 22)",
    );
    expect(fix).toContain("upgrade or replace that herdr (`which -a herdr`");
    expect(fix).not.toMatch(/quit Herdr|server stop/);
  });
  it("an older server: quit Herdr and start it again", () => {
    const fix = protocolFix(
      "client protocol 22 is newer than server protocol 20; restart the Herdr server before using this command. Stop the old server…",
      env,
    );
    expect(fix).toContain("Herdr's running server (protocol 20) is older than the herdr on PATH");
    expect(fix).toContain("quit Herdr and start it again (`herdr server stop`, then `herdr`)");
  });
  it("wording it does not know: both fixes, each for its side", () => {
    const fix = protocolFix("protocol versions differ", env);
    expect(fix).toContain("replace the herdr on PATH if it is the older");
    expect(fix).toContain("quit Herdr and start it again if the server is");
  });
});
