// `--json` on the commands that print for people (DESIGN §9): one JSON document on stdout with
// snake_case keys, nothing else on stdout; errors stay on stderr with their exit codes; without
// `--json` the human line is unchanged.
import { appendFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { userInfo } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type RunResult, sheepdog, sleeper, tempDir, tempProgram } from "./helpers/cli.js";
import { standIns } from "./helpers/standins.js";
import { holder, ofType } from "./helpers/watchdog.js";

const uid = process.getuid?.() ?? 0;
const user = process.env.USER || userInfo().username;

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

/** Exit 0 and stdout is exactly one JSON document (one line); returns it. */
function json(r: RunResult): Record<string, unknown> {
  expect(r.code, r.stderr).toBe(0);
  expect(r.stdout.endsWith("\n")).toBe(true);
  expect(r.stdout.trimEnd().split("\n")).toHaveLength(1);
  return JSON.parse(r.stdout) as Record<string, unknown>;
}

/** Every key at every depth is snake_case (file contents are values, not keys). */
function keysOf(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(keysOf);
  if (value && typeof value === "object")
    return Object.entries(value).flatMap(([k, v]) => [k, ...keysOf(v)]);
  return [];
}
function expectSnakeCase(doc: unknown): void {
  for (const key of keysOf(doc)) expect(key).toMatch(/^[a-z][a-z0-9_]*$/);
}

describe("init --json", () => {
  it("names the program, its root, the files created and the launcher", () => {
    const home = tempDir();
    const root = join(home, "catalog");
    const doc = json(sheepdog(["init", root, "--launcher", "tmux", "--json"]));
    expect(doc).toEqual({
      program: "catalog",
      root,
      created: [
        join(root, "program.json"),
        join(root, "MANAGER-PROMPT.md"),
        join(root, ".claude", "settings.json"),
      ],
      updated: [],
      launcher: "tmux",
    });
    expectSnakeCase(doc);
    for (const path of doc.created as string[]) expect(existsSync(path)).toBe(true);
  });

  it("without --json prints the human lines; a refusal is still exit 3 on stderr", () => {
    const home = tempDir();
    const root = join(home, "catalog");
    const r = sheepdog(["init", root]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(
      `created ${join(root, "program.json")}\ncreated ${join(root, "MANAGER-PROMPT.md")}\ncreated ${join(root, ".claude", "settings.json")} (lets the manager run sheepdog unasked: Bash(sheepdog:*))\nnext: edit program.json and MANAGER-PROMPT.md, then run: sheepdog check --program ${root}\n`,
    );
    const again = sheepdog(["init", root, "--json"]);
    expect(again.code).toBe(3);
    expect(again.stdout).toBe("");
    expect(again.stderr).toMatch(/program\.json already exists/);
  });
});

describe("pause / unpause --json", () => {
  it("pause reports until and reason; unpause reports what the pause was; a second unpause was null", () => {
    const p = tempProgram();
    const paused = json(sheepdog(["pause", "--until", "2h", "--json"], { env: p.env }));
    expect(Object.keys(paused)).toEqual(["program", "paused", "until", "reason"]);
    expect(paused).toMatchObject({ program: "demo", paused: true, reason: "paused by a person" });
    const until = paused.until as string;
    expect(until).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(Math.abs(Date.parse(until) - Date.now() - 2 * 3600_000)).toBeLessThan(60_000);
    expect(ofType(p.stateDir, "paused")[0]?.until).toBe(until);

    const unpaused = json(sheepdog(["unpause", "--json"], { env: p.env }));
    expect(unpaused).toEqual({
      program: "demo",
      unpaused: true,
      was: { until, reason: "paused by a person" },
    });
    expect(ofType(p.stateDir, "unpaused")).toHaveLength(1);

    expect(json(sheepdog(["unpause", "--json"], { env: p.env }))).toEqual({
      program: "demo",
      unpaused: false,
      was: null,
    });
    expect(ofType(p.stateDir, "unpaused")).toHaveLength(1);
  });

  it("without --json the human lines are unchanged; bad input stays exit 2 with empty stdout", () => {
    const p = tempProgram();
    const r = sheepdog(["pause", "--until", "2h"], { env: p.env });
    expect(r.stdout).toMatch(
      /^demo: paused until \S+Z \(2h from now\); sheepdog unpause ends it early\n$/,
    );
    expect(sheepdog(["unpause"], { env: p.env }).stdout).toMatch(
      /^demo: unpaused \(was paused until \S+Z: paused by a person\)\n$/,
    );
    expect(sheepdog(["unpause"], { env: p.env }).stdout).toBe("demo: not paused\n");
    const bad = sheepdog(["pause", "--until", "tomorrow", "--json"], { env: p.env });
    expect(bad.code).toBe(2);
    expect(bad.stdout).toBe("");
    expect(bad.stderr).toContain(
      `--until: expected a duration such as 2h or an ISO-8601 time such as 2026-11-30T18:00:00Z, got "tomorrow"`,
    );
  });
});

describe("resume --json", () => {
  it("reports the stand-down it cleared, or was null when there was none", () => {
    const p = tempProgram();
    expect(json(sheepdog(["resume", "--json"], { env: p.env }))).toEqual({
      program: "demo",
      cleared: false,
      was: null,
    });
    // A stand-down as the tick journals it (creating the state dir through the CLI first).
    expect(sheepdog(["pause", "--until", "1h"], { env: p.env }).code).toBe(0);
    expect(sheepdog(["unpause"], { env: p.env }).code).toBe(0);
    const at = new Date(Date.now() - 60_000).toISOString();
    appendFileSync(
      join(p.stateDir, "journal.jsonl"),
      `${JSON.stringify({ at, type: "stood_down", reason: "crash loop: 3 unplanned starts within 1h" })}\n`,
    );
    const doc = json(sheepdog(["resume", "--json"], { env: p.env }));
    expect(doc).toEqual({
      program: "demo",
      cleared: true,
      was: { reason: "crash loop: 3 unplanned starts within 1h", at },
    });
    expect(ofType(p.stateDir, "cleared")).toEqual([expect.objectContaining({ stood_down_at: at })]);

    expect(sheepdog(["resume"], { env: p.env }).stdout).toBe(
      "demo: not stood down; nothing to clear\n",
    );
    appendFileSync(
      join(p.stateDir, "journal.jsonl"),
      `${JSON.stringify({ at: new Date().toISOString(), type: "stood_down", reason: "no progress" })}\n`,
    );
    expect(sheepdog(["resume"], { env: p.env }).stdout).toBe(
      "demo: stand-down cleared (it was: no progress); the next tick starts a manager if none holds it\n",
    );
  });
});

describe("finish / reopen --json", () => {
  it("finish reports the note and the pid whose claim it released; reopen what it reopened", () => {
    const p = tempProgram();
    const manager = sleeper();
    cleanups.push(() => manager.kill("SIGKILL"));
    const pid = String(manager.pid);
    expect(sheepdog(["claim", "acquire", "--pid", pid], { env: p.env }).code).toBe(0);
    const done = json(
      sheepdog(["finish", "--note", "backlog empty", "--pid", pid, "--json"], { env: p.env }),
    );
    expect(done).toEqual({
      program: "demo",
      finished: true,
      note: "backlog empty",
      released_pid: manager.pid,
      forced: false,
    });
    expect(holder(p.stateDir)).toBeNull();
    const [finished] = ofType(p.stateDir, "finished");

    const reopened = json(sheepdog(["reopen", "--json"], { env: p.env }));
    expect(reopened).toEqual({
      program: "demo",
      reopened: true,
      was: { at: finished?.at, note: "backlog empty" },
    });
    expect(ofType(p.stateDir, "reopened")).toHaveLength(1);
    expect(json(sheepdog(["reopen", "--json"], { env: p.env }))).toEqual({
      program: "demo",
      reopened: false,
      was: null,
    });
  });

  it("finish from a shell (no manager) releases nothing: released_pid is null", () => {
    const p = tempProgram();
    const doc = json(sheepdog(["finish", "--note", "done", "--json"], { env: p.env }));
    expect(doc).toEqual({
      program: "demo",
      finished: true,
      note: "done",
      released_pid: null,
      forced: false,
    });
  });

  it("without --json the human lines are unchanged; bad input stays exit 2 with empty stdout", () => {
    const p = tempProgram();
    const bad = sheepdog(["finish", "--json"], { env: p.env });
    expect(bad.code).toBe(2);
    expect(bad.stdout).toBe("");
    expect(bad.stderr).toMatch(/--note TEXT is required/);
    expect(sheepdog(["finish", "--note", "done"], { env: p.env }).stdout).toBe(
      "demo: finished; the watchdog starts nothing more until sheepdog reopen\n",
    );
    expect(sheepdog(["reopen"], { env: p.env }).stdout).toBe(
      "demo: reopened; the next tick starts a manager\n",
    );
  });
});

/** A program, a temp HOME and stand-in launchctl/systemctl/loginctl first on PATH. */
function installEnv() {
  const s = standIns();
  const p = tempProgram("demo");
  const home = tempDir("sheepdog-home-");
  const env = {
    ...p.env,
    HOME: home,
    XDG_CONFIG_HOME: "",
    USER: user,
    PATH: `${s.bin}:${process.env.PATH}`,
  };
  return { s, p, home, env };
}

describe("install / uninstall systemd --json", () => {
  it("a real install lists the files written, the commands run and the lingering warning", () => {
    const { s, p, home, env } = installEnv();
    s.answer("loginctl", { when: ["show-user"], stdout: "Linger=no\n" });
    const unitDir = join(home, ".config", "systemd", "user");
    const service = join(unitDir, "sheepdog-demo.service");
    const timer = join(unitDir, "sheepdog-demo.timer");
    const r = sheepdog(["install", "systemd", "--program", p.root, "--json"], { env });
    const doc = json(r);
    expectSnakeCase(doc);
    expect(doc).toMatchObject({
      scheduler: "systemd",
      target: { kind: "program", name: "demo", root: p.root },
      dry_run: false,
      files: [
        { path: service, action: "write", mode: "0644" },
        { path: timer, action: "write", mode: "0644" },
      ],
      dirs: [unitDir],
      commands: [
        ["systemctl", "--user", "daemon-reload"],
        ["systemctl", "--user", "enable", "--now", "sheepdog-demo.timer"],
        ["loginctl", "show-user", user, "--property=Linger"],
      ],
      warnings: [expect.stringMatching(/^lingering is off for .*loginctl enable-linger/)],
      notes: [],
      summary: expect.stringMatching(/^installed systemd timer sheepdog-demo\.timer/),
    });
    // a real run's files carry no content: they are on disk
    expect((doc.files as Record<string, unknown>[])[0]).not.toHaveProperty("content");
    expect(existsSync(service) && existsSync(timer)).toBe(true);
    // the warning still reaches a person on stderr
    expect(r.stderr).toMatch(/^warning: lingering is off/);
    expect(s.argvOf("systemctl")).toEqual([
      ["--user", "daemon-reload"],
      ["--user", "enable", "--now", "sheepdog-demo.timer"],
    ]);

    // uninstall --json: what it found, the files removed and the commands run
    s.reset();
    const u = json(sheepdog(["uninstall", "systemd", "--program", p.root, "--json"], { env }));
    expectSnakeCase(u);
    expect(u).toEqual({
      scheduler: "systemd",
      target: { kind: "program", root: p.root },
      found: ["sheepdog-demo"],
      dry_run: false,
      files: expect.arrayContaining([
        { path: service, action: "remove" },
        { path: timer, action: "remove" },
      ]),
      dirs: [],
      commands: [
        ["systemctl", "--user", "disable", "--now", "sheepdog-demo.timer"],
        ["systemctl", "--user", "daemon-reload"],
      ],
      warnings: [],
      notes: [],
      summary: "uninstalled sheepdog-demo",
    });
    expect(u.files).toHaveLength(2);
    expect(existsSync(service) || existsSync(timer)).toBe(false);
  });

  it("--dry-run --json includes each file's content, writes and runs nothing", () => {
    const { s, p, home, env } = installEnv();
    const doc = json(
      sheepdog(["install", "systemd", "--program", p.root, "--dry-run", "--json"], { env }),
    );
    expect(doc).toMatchObject({ scheduler: "systemd", dry_run: true, warnings: [], summary: null });
    const files = doc.files as { path: string; action: string; content: string }[];
    expect(files.map((f) => f.action)).toEqual(["write", "write"]);
    expect(files[0]?.content).toMatch(/^# sheepdog-managed/);
    expect(files[0]?.content).toMatch(/\nExecStart=.* tick --program /);
    expect(files[1]?.content).toMatch(/\nOnCalendar=\S+\n/);
    expect(existsSync(join(home, ".config"))).toBe(false);
    expect(s.calls()).toEqual([]);

    // the same content a real install writes
    expect(sheepdog(["install", "systemd", "--program", p.root], { env }).code).toBe(0);
    for (const f of files) expect(readFileSync(f.path, "utf8")).toBe(f.content);

    const u = json(
      sheepdog(["uninstall", "systemd", "--program", p.root, "--dry-run", "--json"], { env }),
    );
    expect(u).toMatchObject({ dry_run: true, found: ["sheepdog-demo"], summary: null });
    for (const f of files) expect(existsSync(f.path)).toBe(true);
  });

  it("without --json the human lines are unchanged", () => {
    const { s, p, home, env } = installEnv();
    s.answer("loginctl", { when: ["show-user"], stdout: "Linger=yes\n" });
    const unitDir = join(home, ".config", "systemd", "user");
    const r = sheepdog(["install", "systemd", "--program", p.root], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.split("\n").slice(0, 5)).toEqual([
      `wrote ${join(unitDir, "sheepdog-demo.service")}`,
      `wrote ${join(unitDir, "sheepdog-demo.timer")}`,
      "ran systemctl --user daemon-reload",
      "ran systemctl --user enable --now sheepdog-demo.timer",
      `lingering is on for ${user}: the timer runs while you are logged out`,
    ]);
    expect(r.stdout).toMatch(/\ninstalled systemd timer sheepdog-demo\.timer /);
    const dry = sheepdog(["install", "systemd", "--program", p.root, "--dry-run"], { env });
    expect(dry.stdout).toMatch(/^sheepdog install systemd \(dry run: nothing is written/);
    const u = sheepdog(["uninstall", "systemd", "--program", p.root], { env });
    expect(u.stdout).toMatch(/\nuninstalled sheepdog-demo\n$/);
    expect(sheepdog(["uninstall", "systemd", "--program", p.root], { env }).stdout).toBe(
      "nothing of sheepdog's is installed for that target\n",
    );
  });

  it("errors stay on stderr with their exit codes and nothing on stdout", () => {
    const { s, p, home, env } = installEnv();
    // a failed step: exit 1, what was written and what is left to run on stderr
    s.answer("systemctl", { when: ["--user", "enable"], exit: 1, stderr: "Failed to connect" });
    const failed = sheepdog(["install", "systemd", "--program", p.root, "--json"], { env });
    expect(failed.code).toBe(1);
    expect(failed.stdout).toBe("");
    expect(failed.stderr).toMatch(/Failed to connect[\s\S]*run by hand:/);

    // a file of the same name that sheepdog did not write: exit 3
    const service = join(home, ".config", "systemd", "user", "sheepdog-demo.service");
    writeFileSync(service, "[Service]\nExecStart=/bin/true\n");
    const refused = sheepdog(["install", "systemd", "--program", p.root, "--json"], { env });
    expect(refused.code).toBe(3);
    expect(refused.stdout).toBe("");
    expect(refused.stderr).toMatch(/not written by sheepdog/);

    // bad usage: exit 2
    const bad = sheepdog(["uninstall", "cron", "--json"], { env });
    expect(bad.code).toBe(2);
    expect(bad.stdout).toBe("");
  });
});

describe("install / uninstall launchd --json", () => {
  it("lists the plist written and the launchctl commands; a harmless bootout is a note", () => {
    const { s, p, home, env } = installEnv();
    s.answer("launchctl", { when: ["bootout"], exit: 3, stderr: "No such process" });
    const plist = join(home, "Library", "LaunchAgents", "dev.sheepdog.demo.plist");
    const bootout = ["launchctl", "bootout", `gui/${uid}/dev.sheepdog.demo`];
    const doc = json(sheepdog(["install", "launchd", "--program", p.root, "--json"], { env }));
    expectSnakeCase(doc);
    expect(doc).toEqual({
      scheduler: "launchd",
      target: { kind: "program", name: "demo", root: p.root },
      dry_run: false,
      files: [{ path: plist, action: "write", mode: "0644" }],
      dirs: [join(home, "Library", "LaunchAgents"), join(home, "Library", "Logs", "sheepdog")],
      commands: [bootout, ["launchctl", "bootstrap", `gui/${uid}`, plist]],
      warnings: [],
      notes: [`ran ${bootout.join(" ")} (it was not loaded)`],
      summary: expect.stringMatching(/^installed launchd agent dev\.sheepdog\.demo: /),
    });
    expect(existsSync(plist)).toBe(true);

    const dry = json(
      sheepdog(["uninstall", "launchd", "--program", p.root, "--dry-run", "--json"], { env }),
    );
    expect(dry).toMatchObject({
      scheduler: "launchd",
      found: ["dev.sheepdog.demo"],
      dry_run: true,
      files: [{ path: plist, action: "remove" }],
      commands: [bootout],
      summary: null,
    });
    expect(existsSync(plist)).toBe(true);
    const u = json(sheepdog(["uninstall", "launchd", "--program", p.root, "--json"], { env }));
    expect(u).toMatchObject({ dry_run: false, summary: "uninstalled dev.sheepdog.demo" });
    expect(existsSync(plist)).toBe(false);
  });

  it("--dry-run --json carries the plist's content; without --json the dry run is the human text", () => {
    const { s, p, env } = installEnv();
    const doc = json(
      sheepdog(["install", "launchd", "--program", p.root, "--dry-run", "--json"], { env }),
    );
    const [file] = doc.files as { path: string; content: string }[];
    expect(file?.content).toMatch(/<key>Label<\/key>\s*<string>dev\.sheepdog\.demo<\/string>/);
    expect(file && existsSync(file.path)).toBe(false);
    expect(s.calls()).toEqual([]);
    const human = sheepdog(["install", "launchd", "--program", p.root, "--dry-run"], { env });
    expect(human.stdout).toContain(`==> ${file?.path} (mode 0644) <==\n${file?.content.trimEnd()}`);
  });
});
