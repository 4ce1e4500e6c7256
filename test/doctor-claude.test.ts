// `doctor` and `check` on the seat's Claude Code (DESIGN §14, §17): the version the manager
// command would run against the tested ones (a stub `claude` that prints a version, and the real
// pinned one), and hook events its settings declare that it does not know.

import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SHEEPDOG_ALLOW_RULE } from "../src/usage/claude-permissions.js";
import {
  NEWEST_TESTED_VERSION,
  PINNED_VERSION,
  TESTED_VERSIONS,
} from "../src/usage/claude-versions.js";
import { claudeBinary } from "./helpers/claude-code.js";
import { sheepdog, tempDir, tempProgram } from "./helpers/cli.js";

interface Check {
  check: string;
  status: string;
  detail: string;
  fix: string | null;
}

/** A program whose tmux manager runs `claude` (`bin`), on a seat with `hooks`. */
function program(bin: string, hooks: Record<string, unknown> = {}) {
  const home = tempDir("sd-doctor-claude-");
  const seat = join(home, "seat");
  mkdirSync(seat);
  // The manager may run sheepdog unasked (what init sets up): these tests are of hook events.
  writeFileSync(
    join(seat, "settings.json"),
    JSON.stringify({ hooks, permissions: { allow: [SHEEPDOG_ALLOW_RULE] } }),
  );
  const p = tempProgram("catalog", {
    manager: { launcher: "tmux", tmux: { session: "catalog", command: [bin, "{prompt}"] } },
    usage: { seat },
  });
  return { ...p, seat };
}

/** A `claude` that only prints `version` the way Claude Code does. */
function stubClaude(version: string): string {
  const dir = join(tempDir("sd-stub-claude-"), "bin");
  mkdirSync(dir);
  const bin = join(dir, "claude");
  writeFileSync(bin, `#!/bin/sh\necho "${version} (Claude Code)"\n`);
  chmodSync(bin, 0o755);
  return bin;
}

function doctor(p: ReturnType<typeof program>): { code: number | null; checks: Check[] } {
  const r = sheepdog(["doctor", "--program", p.root, "--json"], { env: p.env });
  return { code: r.code, checks: JSON.parse(r.stdout).checks };
}
const named = (checks: Check[], name: string) => checks.find((c) => c.check === name);

describe("doctor: the seat's claude --version", () => {
  it("a newer, untested version is a warning naming the newest tested one and how to check it", () => {
    const p = program(stubClaude("2.1.400"));
    const { checks } = doctor(p);
    const c = named(checks, "claude_version");
    expect(c?.status).toBe("warn");
    expect(c?.detail).toContain(
      `Claude Code 2.1.400 is newer than the newest tested version, ${NEWEST_TESTED_VERSION}`,
    );
    expect(c?.fix).toContain("npm run capture:claude -- --version 2.1.400");
  });

  it("an older one is an error (exit 1)", () => {
    const p = program(stubClaude("2.1.300"));
    const { code, checks } = doctor(p);
    expect(named(checks, "claude_version")).toMatchObject({ status: "fail" });
    expect(named(checks, "claude_version")?.detail).toContain(
      `older than the oldest tested version, ${PINNED_VERSION}`,
    );
    expect(code).toBe(1);
  });

  it("one between the tested versions is a warning", () => {
    const p = program(stubClaude("2.1.330"));
    expect(named(doctor(p).checks, "claude_version")).toMatchObject({ status: "warn" });
  });

  it.each(TESTED_VERSIONS)("the real %s is a tested version", async (version) => {
    const claude = await claudeBinary(version);
    if (!claude.path) throw new Error(`no claude ${version}: ${claude.why}`);
    const c = named(doctor(program(claude.path)).checks, "claude_version");
    expect(c).toMatchObject({ status: "ok" });
    expect(c?.detail).toContain(`Claude Code ${version}, a tested version`);
  });
});

describe("hook events the seat's Claude Code does not know", () => {
  const interrupt = { Interrupt: [{ hooks: [{ type: "command", command: "true" }] }] };

  it("check: exit 2 naming the file, the field, and that it blocks every start", () => {
    const p = program(stubClaude(NEWEST_TESTED_VERSION), interrupt);
    const r = sheepdog(["check", "--program", p.root], { env: p.env });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${join(p.seat, "settings.json")}: hooks.Interrupt:`);
    expect(r.stderr).toMatch(/blocking Settings Warning dialog at every start/);
  });

  it("check: one in the project's .claude/settings.local.json too", () => {
    const p = program(stubClaude(NEWEST_TESTED_VERSION));
    mkdirSync(join(p.root, ".claude"));
    writeFileSync(
      join(p.root, ".claude", "settings.local.json"),
      JSON.stringify({ hooks: interrupt }),
    );
    const r = sheepdog(["check", "--program", p.root], { env: p.env });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      `${join(p.root, ".claude", "settings.local.json")}: hooks.Interrupt:`,
    );
  });

  it("doctor: a failing hook_events check; the events a version knows pass", () => {
    const bad = doctor(program(stubClaude(NEWEST_TESTED_VERSION), interrupt));
    expect(named(bad.checks, "hook_events")).toMatchObject({ status: "fail" });
    expect(named(bad.checks, "hook_events")?.fix).toMatch(/^remove hooks\.Interrupt from /);
    expect(bad.code).toBe(1);
    // PreSkillShellCommand: 2.1.332 knows it, 2.1.328 does not.
    const skill = { PreSkillShellCommand: [{ hooks: [{ type: "command", command: "true" }] }] };
    expect(named(doctor(program(stubClaude("2.1.332"), skill)).checks, "hook_events")?.status).toBe(
      "ok",
    );
    expect(named(doctor(program(stubClaude("2.1.328"), skill)).checks, "hook_events")?.status).toBe(
      "fail",
    );
  });

  it("check passes sheepdog's own hooks", () => {
    const p = program(stubClaude(NEWEST_TESTED_VERSION), {
      StopFailure: [{ hooks: [{ type: "command", command: "sheepdog hook stop-failure" }] }],
      Stop: [{ hooks: [{ type: "command", command: "sheepdog hook stop" }] }],
    });
    const r = sheepdog(["check", "--program", p.root], { env: p.env });
    expect(r.code, r.stderr).toBe(0);
  });
});
