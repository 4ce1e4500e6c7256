import {
  chmodSync,
  existsSync,
  mkdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULTS } from "../src/config/schema.js";
import { isDuration, parseDuration } from "../src/util/duration.js";
import { jsonErrorLocation } from "../src/util/json-location.js";
import { nearest } from "../src/util/nearest.js";
import { sheepdog, sleeper, tempDir, tempProgram } from "./helpers/cli.js";
import { killAll, track } from "./helpers/foundation.js";

afterAll(killAll);

describe("parseDuration / isDuration", () => {
  const valid: [string, number][] = [
    ["1s", 1000],
    ["90s", 90_000],
    ["5m", 300_000],
    ["45m", 2_700_000],
    ["2h", 7_200_000],
    ["1d", 86_400_000],
    ["1h30m", 5_400_000],
    ["0s", 0],
    ["1d2h3m4s", 93_784_000],
  ];
  it.each(valid)("%s is %i ms", (text, ms) => {
    expect(isDuration(text)).toBe(true);
    expect(parseDuration(text)).toBe(ms);
  });

  const invalid = ["", "5", "m", "5 m", "5min", "1.5h", "-5m", "5M", " 5m", "5m ", "1w", "h1"];
  it.each(invalid)("%j is not a duration", (text) => {
    expect(isDuration(text)).toBe(false);
    expect(() => parseDuration(text)).toThrow(/not a duration/);
  });
});

describe("jsonErrorLocation", () => {
  const cases: [string, string, number, number][] = [
    ["empty text", "", 1, 1],
    ["trailing comma in object", '{\n  "a": 1,\n}', 3, 1],
    ["missing colon", '{"a" 1}', 1, 6],
    ["unterminated string", '{"a": "b', 1, 9],
    ["bad literal", '{"a": tru}', 1, 10],
    ["garbage after the value", '{"a": 1}\nx', 2, 1],
    ["single quotes", "{'a': 1}", 1, 2],
    ["control character in a string", '{"a": "b\tc"}', 1, 9],
    ["bad escape", '{"a": "\\q"}', 1, 9],
    ["missing colon on the third line", '{\n "a": 1,\n "b" 2\n}', 3, 6],
    ["bad number", '{"a": 01}', 1, 8],
  ];
  it.each(cases)("%s: %j → line %i, column %i", (_what, text, line, column) => {
    expect(() => JSON.parse(text)).toThrow();
    expect(jsonErrorLocation(text)).toMatchObject({ line, column });
  });

  it("points past the end for valid JSON", () => {
    expect(jsonErrorLocation('{"a": [1, 2, {"b": null}]}').offset).toBe(26);
  });
});

describe("nearest", () => {
  const keys = ["name", "manager", "watchdog", "hand_over_tokens", "usage", "merge_lock"];
  const cases: [string, readonly string[], string | undefined][] = [
    ["watchdg", keys, "watchdog"],
    ["Manager", keys, "manager"],
    ["nmae", keys, "name"],
    ["handover_tokens", keys, "hand_over_tokens"],
    ["merge-lock", keys, "merge_lock"],
    ["xyzzy", keys, undefined],
    ["completely_unrelated_key", keys, undefined],
    ["stale_afer", ["interval", "stale_after", "claim_grace"], "stale_after"],
    ["anything", [], undefined],
  ];
  it.each(cases)("%s → %s", (word, candidates, expected) => {
    expect(nearest(word, candidates)).toBe(expected);
  });
});

/** Each malformed program.json, the message that must name what is wrong, and the exit code 2. */
const MALFORMED: { what: string; text: string; message: RegExp }[] = [
  {
    what: "unknown top-level key",
    text: '{"name": "bad", "watchdg": {}}',
    message: /program\.json: watchdg: unknown key "watchdg" \(did you mean "watchdog"\?\)/,
  },
  {
    what: "unknown nested key",
    text: '{"name": "bad", "watchdog": {"stale_afer": "1m"}}',
    message: /watchdog\.stale_afer: unknown key "stale_afer" \(did you mean "stale_after"\?\)/,
  },
  {
    what: "unknown key with no near match lists the valid keys",
    text: '{"name": "bad", "xyzzy": 1}',
    message: /xyzzy: unknown key "xyzzy" \(valid keys: name, manager, watchdog/,
  },
  {
    what: "wrong type",
    text: '{"name": "bad", "hand_over_tokens": "200000"}',
    message: /hand_over_tokens: expected "auto" or a positive integer, got "200000"/,
  },
  {
    what: "section of the wrong type",
    text: '{"name": "bad", "watchdog": 5}',
    message: /watchdog: expected an object, got number 5/,
  },
  {
    what: "bad duration",
    text: '{"name": "bad", "watchdog": {"stale_after": "45 minutes"}}',
    message:
      /watchdog\.stale_after: expected a positive duration such as 90s, 5m, 2h or 1d, got "45 minutes"/,
  },
  {
    what: "claude under the command launcher without -p (no terminal: it answers once and exits)",
    text: '{"name": "bad", "manager": {"launcher": "command", "command": ["/usr/local/bin/claude", "{prompt}"]}}',
    message:
      /manager\.command: expected a command that runs without a terminal.*use the tmux or herdr launcher/,
  },
  {
    what: "a tmux session name tmux would rewrite",
    text: '{"name": "bad", "manager": {"launcher": "tmux", "tmux": {"session": "loops.catalog"}}}',
    message:
      /manager\.tmux\.session: expected a tmux session name without "\." or ":", got "loops\.catalog"/,
  },
  {
    what: "zero stale_after (it would stop a healthy manager on every tick)",
    text: '{"name": "bad", "watchdog": {"stale_after": "0s"}}',
    message: /watchdog\.stale_after: expected a positive duration .*got "0s"/,
  },
  {
    what: "zero claim_grace, spelled as several zero parts",
    text: '{"name": "bad", "watchdog": {"claim_grace": "0m0s"}}',
    message: /watchdog\.claim_grace: expected a positive duration .*got "0m0s"/,
  },
  {
    what: "zero pause_fallback",
    text: '{"name": "bad", "usage": {"pause_fallback": "0h"}}',
    message: /usage\.pause_fallback: expected a positive duration .*got "0h"/,
  },
  {
    what: "bad nested duration",
    text: '{"name": "bad", "watchdog": {"crash_loop": {"within": "1 hour"}}}',
    message: /watchdog\.crash_loop\.within: expected a positive duration/,
  },
  {
    what: "bad name",
    text: '{"name": "Bad Name!"}',
    message: /name: expected a name matching \[a-z0-9\]\[a-z0-9-\]\{0,62\}.*got "Bad Name!"/,
  },
  {
    what: "progress glob with a brace set (the matcher would match nothing)",
    text: '{"name": "bad", "progress": {"paths": ["runs/*.json", "runs/{a,b}/*.done"]}}',
    message: /progress\.paths\[1\]: expected a glob using only .* got "runs\/\{a,b\}\/\*\.done"/,
  },
  {
    what: "progress glob with a leading ! (negation)",
    text: '{"name": "bad", "progress": {"paths": ["!runs/tmp"]}}',
    message: /progress\.paths\[0\]: expected a glob using only/,
  },
  {
    what: "progress glob with an extglob",
    text: '{"name": "bad", "progress": {"paths": ["runs/@(a|b)/x"]}}',
    message: /progress\.paths\[0\]: expected a glob using only/,
  },
  {
    what: "pause_at_percent 0",
    text: '{"name": "bad", "usage": {"pause_at_percent": 0}}',
    message: /usage\.pause_at_percent: expected a number from 1 to 100, got 0/,
  },
  {
    what: "pause_at_percent 101",
    text: '{"name": "bad", "usage": {"pause_at_percent": 101}}',
    message: /usage\.pause_at_percent: expected a number from 1 to 100, got 101/,
  },
  {
    what: "non-positive count",
    text: '{"name": "bad", "watchdog": {"crash_loop": {"starts": 0}}}',
    message: /watchdog\.crash_loop\.starts: expected a positive integer, got 0/,
  },
  {
    what: "fractional token threshold",
    text: '{"name": "bad", "hand_over_tokens": 1.5}',
    message: /hand_over_tokens: expected "auto" or a positive integer, got 1\.5/,
  },
  {
    what: "invalid JSON (trailing comma) names line and column",
    text: '{\n  "name": "bad",\n  "watchdog": {"interval": "5m",},\n}\n',
    message: /invalid JSON at line 3, column 33/,
  },
  {
    what: "invalid JSON (truncated)",
    text: '{"name": "bad",',
    message: /invalid JSON at line 1, column 16/,
  },
  {
    what: "empty file",
    text: "",
    message: /invalid JSON at line 1, column 1/,
  },
  {
    what: "top-level array",
    text: '[{"name": "bad"}]',
    message: /program\.json: expected a JSON object at the top level/,
  },
  {
    what: "missing name",
    text: '{"manager": {"launcher": "command"}}',
    message: /name: missing; expected a name matching/,
  },
  {
    what: "bad launcher",
    text: '{"name": "bad", "manager": {"launcher": "screen"}}',
    message: /manager\.launcher: expected one of "command", "tmux", "herdr", got "screen"/,
  },
  {
    what: "env value of the wrong type",
    text: '{"name": "bad", "manager": {"env": {"CLAUDE_CONFIG_DIR": 1}}}',
    message: /manager\.env\.CLAUDE_CONFIG_DIR: expected a string, got number 1/,
  },
  {
    what: "empty string in an array",
    text: '{"name": "bad", "progress": {"paths": [""]}}',
    message: /progress\.paths\[0\]: expected a non-empty string, got ""/,
  },
];

describe("malformed program.json", () => {
  let live: ReturnType<typeof sleeper>;
  beforeAll(() => {
    live = track(sleeper());
  });

  // Every command opens the program through the same loader (openProgram; save and journal with
  // its last-valid fallback). A text that is not a JSON object fails before the schema and runs
  // through every command; a schema error runs through `check` and one other command in turn
  // (each meets several), 2 CLI runs instead of 5: the messages all come from one describeIssue.
  const others = (pid: string): string[][] => [
    ["claim", "acquire", "--pid", pid],
    ["claim", "show", "--json"],
    ["save", "--pid", pid],
    ["journal"],
  ];
  const notAnObject = (m: (typeof MALFORMED)[number]) =>
    /invalid JSON|top level/.test(m.message.source);
  let schemaErrors = 0;
  const cases = MALFORMED.map((m) => ({
    ...m,
    other: notAnObject(m) ? -1 : schemaErrors++ % others("").length,
  }));

  it.each(cases)("$what → exit 2, named, and no state created", ({ text, message, other }) => {
    const p = tempProgram("bad");
    writeFileSync(join(p.root, "program.json"), text);
    const rest = others(String(live.pid));
    const commands = [["check"], ...(other < 0 ? rest : rest.slice(other, other + 1))];
    for (const args of commands) {
      const r = sheepdog(args, { env: p.env });
      expect(r.code, `${args.join(" ")}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toMatch(message);
      expect(r.stderr).toContain(join(p.root, "program.json"));
      expect(r.stdout).toBe("");
    }
    expect(existsSync(p.stateDir)).toBe(false);
    expect(readFileSync(join(p.root, "program.json"), "utf8")).toBe(text);
  });
});

describe("init", () => {
  const OPTIONAL = ["merge_lock", "ledger", "progress", "page"];

  it.each(["command", "tmux", "herdr"])(
    "--launcher %s writes a program.json that passes check, with every default spelled out",
    (launcher) => {
      const home = tempDir();
      const root = join(home, "catalog");
      const r = sheepdog(["init", root, "--launcher", launcher]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain(join(root, "program.json"));
      const text = readFileSync(join(root, "program.json"), "utf8");
      const written = JSON.parse(text);
      expect(written.name).toBe("catalog");
      expect(written.manager.launcher).toBe(launcher);
      expect(written.manager.env).toEqual({});
      expect(written.manager[launcher]).toBeDefined();
      expect(written.watchdog).toEqual(DEFAULTS.watchdog);
      expect(written.hand_over_tokens).toBe(DEFAULTS.hand_over_tokens);
      expect(written.usage).toEqual(DEFAULTS.usage);
      for (const key of OPTIONAL) expect(written).not.toHaveProperty(key);
      expect(written.usage).not.toHaveProperty("seat");

      const check = sheepdog(["check", "--json", "--program", root]);
      expect(check.code, check.stderr).toBe(0);
      // Nothing the loader fills in is missing from the file: every default is spelled out.
      expect(JSON.parse(check.stdout).config).toEqual(written);

      expect(readFileSync(join(root, "MANAGER-PROMPT.md"), "utf8")).toMatch(/claim acquire/);
      expect(existsSync(join(root, ".sheepdog"))).toBe(false);
    },
  );

  it("allows the manager's sheepdog calls in DIR/.claude/settings.json, merged into one that is there", () => {
    const home = tempDir();
    const root = join(home, "catalog");
    mkdirSync(join(root, ".claude"), { recursive: true });
    const mine = { model: "opus", permissions: { allow: ["Bash(git:*)"], deny: ["Read(.env)"] } };
    writeFileSync(join(root, ".claude", "settings.json"), JSON.stringify(mine));
    chmodSync(join(root, ".claude", "settings.json"), 0o600);
    const r = sheepdog(["init", root, "--launcher", "tmux"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`updated ${join(root, ".claude", "settings.json")}`);
    const merged = JSON.parse(readFileSync(join(root, ".claude", "settings.json"), "utf8"));
    expect(merged).toEqual({
      model: "opus",
      permissions: { allow: ["Bash(git:*)", "Bash(sheepdog:*)"], deny: ["Read(.env)"] },
    });
    expect(statSync(join(root, ".claude", "settings.json")).mode & 0o777).toBe(0o600);
    // `check` agrees: the manager's calls run unasked.
    expect(sheepdog(["check", "--program", root]).code).toBe(0);
  });

  it("leaves a .claude/settings.json it cannot read as it is, and says what to add", () => {
    const home = tempDir();
    const root = join(home, "catalog");
    mkdirSync(join(root, ".claude"), { recursive: true });
    writeFileSync(join(root, ".claude", "settings.json"), "{ not json");
    const r = sheepdog(["init", root, "--launcher", "tmux"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(
      /settings\.json was left as it is: it is not valid JSON.*add "Bash\(sheepdog:\*\)"/,
    );
    expect(readFileSync(join(root, ".claude", "settings.json"), "utf8")).toBe("{ not json");
  });

  it("check fails (exit 1) with the fix when the manager's Claude Code would ask a person", () => {
    const home = tempDir();
    const root = join(home, "catalog");
    expect(sheepdog(["init", root, "--launcher", "tmux"]).code).toBe(0);
    rmSync(join(root, ".claude"), { recursive: true });
    // A seat of its own, with no rule either.
    const env = { CLAUDE_CONFIG_DIR: join(home, "seat"), HOME: home };
    const r = sheepdog(["check", "--program", root], { env });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /sheepdog claim acquire` would not run without a person: auto mode asks a person/,
    );
    expect(r.stderr).toContain(
      `fix: add "Bash(sheepdog:*)" to permissions.allow in ${join(root, ".claude", "settings.json")}`,
    );
    const doc = JSON.parse(sheepdog(["check", "--json", "--program", root], { env }).stdout);
    expect(doc).toMatchObject({ ok: false, errors: [{ check: "claude-permissions" }] });
    // A manager that is not Claude Code is not judged on Claude's settings.
    const toy = join(home, "toy");
    expect(sheepdog(["init", toy]).code).toBe(0);
    const cfg = JSON.parse(readFileSync(join(toy, "program.json"), "utf8"));
    cfg.manager.command = ["node", "manager.js"];
    writeFileSync(join(toy, "program.json"), JSON.stringify(cfg));
    rmSync(join(toy, ".claude"), { recursive: true });
    expect(sheepdog(["check", "--program", toy], { env }).code).toBe(0);
  });

  it("--name sets the name; a directory name that is not a valid name needs --name", () => {
    const home = tempDir();
    const bad = sheepdog(["init", join(home, "My Loop")]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/name "my loop" does not match .*pass --name/);
    expect(existsSync(join(home, "My Loop"))).toBe(false);

    const ok = sheepdog(["init", join(home, "My Loop"), "--name", "my-loop"]);
    expect(ok.code, ok.stderr).toBe(0);
    expect(JSON.parse(readFileSync(join(home, "My Loop", "program.json"), "utf8")).name).toBe(
      "my-loop",
    );
  });

  it("a bad --launcher or a missing DIR is exit 2 and writes nothing", () => {
    const home = tempDir();
    const r = sheepdog(["init", join(home, "p"), "--launcher", "screen"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--launcher: expected one of command, tmux, herdr, got "screen"/);
    expect(existsSync(join(home, "p"))).toBe(false);
    expect(sheepdog(["init"]).code).toBe(2);
  });

  it("refuses (exit 3) to overwrite program.json or MANAGER-PROMPT.md, leaving both byte-identical", () => {
    const home = tempDir();
    const root = join(home, "catalog");
    expect(sheepdog(["init", root]).code).toBe(0);
    writeFileSync(join(root, "MANAGER-PROMPT.md"), "my own prompt\n");
    const config = readFileSync(join(root, "program.json"));
    const again = sheepdog(["init", root, "--launcher", "tmux"]);
    expect(again.code).toBe(3);
    expect(again.stderr).toMatch(/program\.json already exists; not overwriting it/);
    expect(readFileSync(join(root, "program.json")).equals(config)).toBe(true);
    expect(readFileSync(join(root, "MANAGER-PROMPT.md"), "utf8")).toBe("my own prompt\n");

    // Only the prompt exists: still refused, and no program.json appears.
    const other = join(home, "other");
    mkdirSync(other);
    writeFileSync(join(other, "MANAGER-PROMPT.md"), "mine\n");
    const r = sheepdog(["init", other]);
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/MANAGER-PROMPT\.md already exists/);
    expect(existsSync(join(other, "program.json"))).toBe(false);
    expect(readFileSync(join(other, "MANAGER-PROMPT.md"), "utf8")).toBe("mine\n");
  });
});

describe("program resolution", () => {
  /** An env with no program hints but SHEEPDOG_HOME. */
  const bare = (home: string) => ({ SHEEPDOG_HOME: home, SHEEPDOG_PROGRAM: "" });
  const okFor = (r: { code: number; stdout: string; stderr: string }, root: string) => {
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`${join(root, "program.json")}: ok`);
  };

  it("--program NAME resolves under $SHEEPDOG_HOME", () => {
    const p = tempProgram("alpha");
    const elsewhere = tempDir();
    okFor(sheepdog(["check", "--program", "alpha"], { cwd: elsewhere, env: bare(p.home) }), p.root);
    const missing = sheepdog(["check", "--program", "beta"], {
      cwd: elsewhere,
      env: bare(p.home),
    });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(
      `--program "beta": no program.json in ${join(p.home, "beta")}`,
    );
  });

  it("--program PATH (absolute and relative) and it beats the working directory", () => {
    const a = tempProgram("alpha");
    const b = tempProgram("beta");
    okFor(sheepdog(["check", "--program", a.root], { cwd: b.root, env: bare(b.home) }), a.root);
    okFor(sheepdog(["check", "--program", "./beta"], { cwd: b.home, env: bare(a.home) }), b.root);
  });

  it("the nearest ancestor holding program.json, from a nested working directory, beats $SHEEPDOG_PROGRAM", () => {
    const outer = tempProgram("outer");
    const inner = join(outer.root, "sub", "inner");
    mkdirSync(join(inner, "deep", "er"), { recursive: true });
    writeFileSync(join(inner, "program.json"), '{"name": "inner"}\n');
    const other = tempProgram("other");
    const env = { SHEEPDOG_HOME: other.home, SHEEPDOG_PROGRAM: other.root };
    okFor(sheepdog(["check"], { cwd: join(inner, "deep", "er"), env }), inner);
    okFor(sheepdog(["check"], { cwd: join(outer.root, "sub"), env }), outer.root);
  });

  it("$SHEEPDOG_PROGRAM when no ancestor holds program.json", () => {
    const p = tempProgram("gamma");
    okFor(
      sheepdog(["check"], {
        cwd: tempDir(),
        env: { SHEEPDOG_HOME: p.home, SHEEPDOG_PROGRAM: p.root },
      }),
      p.root,
    );
    okFor(
      sheepdog(["check"], {
        cwd: tempDir(),
        env: { SHEEPDOG_HOME: p.home, SHEEPDOG_PROGRAM: "gamma" },
      }),
      p.root,
    );
  });

  it("no program anywhere → exit 2 saying how to name one", () => {
    const home = tempDir();
    for (const args of [["check"], ["claim", "show"], ["save", "--pid", "1"], ["journal"]]) {
      const r = sheepdog(args, { cwd: tempDir(), env: bare(home) });
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/no program: pass --program NAME\|PATH/);
    }
  });
});
