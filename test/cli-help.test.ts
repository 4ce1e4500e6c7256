// CLI usage: per-command help, did-you-mean for commands and options, one `sheepdog` prefix.
import { describe, expect, it } from "vitest";
import { sheepdog } from "./helpers/cli.js";

describe("sheepdog help and usage errors", () => {
  it.each([
    [
      ["tick", "--help"],
      /sheepdog tick \[--program P \| --all\] \[--every DURATION\] \[--dry-run\] \[--json\]/,
    ],
    [["help", "tick"], /sheepdog tick \[--program P \| --all\]/],
    [
      ["claim", "show", "-h"],
      /sheepdog claim acquire .*\n {2}sheepdog claim release .*\n {2}sheepdog claim show/,
    ],
    [["statusline", "--help"], /^ {2}sheepdog statusline\n\nClaude Code's statusLine command/m],
    [
      ["hook", "--help"],
      /^ {2}sheepdog hook stop-failure\n {2}sheepdog hook stop\n {2}sheepdog hook notification\n\nClaude Code.s StopFailure, Stop and Notification hooks/m,
    ],
    [["help", "watch"], /sheepdog watch \[--program P \| --all\] \[--json\]/],
    [["report", "-h"], /sheepdog report \[--program P \| --all\] \[--since 24h\]/],
    [["help", "merge-lock"], /sheepdog merge-lock acquire .*\n {2}sheepdog merge-lock release/],
  ])("%j prints that command's usage and exits 0", (args, usage) => {
    const r = sheepdog(args);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(usage);
    expect(r.stdout).not.toMatch(/sheepdog init DIR/); // only that command's lines
    expect(r.stderr).toBe("");
  });

  it("an unknown command: did-you-mean, exit 2", () => {
    const r = sheepdog(["tikc"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      'sheepdog: unknown command "tikc" (did you mean tick?); sheepdog --help lists them\n',
    );
    expect(sheepdog(["help", "nope"]).code).toBe(2);
  });

  it("an unknown option: did-you-mean, exit 2, one sheepdog prefix", () => {
    const r = sheepdog(["tick", "--dryrun"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      "sheepdog: tick: unknown option --dryrun (did you mean --dry-run?); sheepdog tick --help lists them\n",
    );
    const page = sheepdog(["page"]);
    expect(page.code).toBe(2);
    expect(page.stderr).toBe("sheepdog: page: expected --test\n");
  });
});
