import { describe, expect, it } from "vitest";
import { isPassThrough } from "../../src/process/manager.js";

// Which ancestors are only in the way when a command looks for its manager (DESIGN §3). A
// sandbox or wrapper between Claude Code and its Bash tool's shell was taken for the manager
// (issue 18): a save then stamped the wrapper's pid, and the real manager looked stale.
describe("isPassThrough", () => {
  it.each([
    ["bwrap", ["bwrap", "--ro-bind", "/", "/", "--", "/bin/bash", "-c", "sheepdog save"]],
    ["sandbox-exec", ["/usr/bin/sandbox-exec", "-p", "(version 1)", "/bin/zsh", "-c", "x"]],
    ["firejail", ["firejail", "--quiet", "bash"]],
    ["sudo", ["sudo", "-u", "ops", "bash"]],
    ["setsid", ["setsid", "bash"]],
    ["stdbuf", ["stdbuf", "-oL", "bash"]],
    ["nice", ["nice", "-n", "10", "bash"]],
    ["script", ["script", "-q", "/dev/null", "bash"]],
    ["bash", ["/bin/bash", "-c", "sheepdog save"]],
    ["node", ["/usr/bin/node", "/usr/lib/node_modules/npm/bin/npx-cli.js", "sheepdog"]],
  ])("%s is in the way", (comm, argv) => {
    expect(isPassThrough(comm, argv)).toBe(true);
  });

  it.each([
    ["claude", ["claude", "--dangerously-skip-permissions"]],
    ["node", ["node", "/opt/claude-code/cli.js"]],
    ["python3", ["python3", "manager.py"]],
  ])("%s is the manager", (comm, argv) => {
    expect(isPassThrough(comm, argv)).toBe(false);
  });
});
