// A shared, hostile host (DESIGN §18, issue 31): what runs is the user's own, every folder
// sheepdog makes is 0700 whatever the umask (an existing one narrowed or refused, never
// widened), the host state dir is checked, and nothing is written through a link. Other users
// are played by files chowned to another uid and by `setpriv --reuid` (the tests run as root).
import { type ChildProcess, spawnSync } from "node:child_process";
import {
  chmodSync,
  chownSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { userInfo } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { CLI, sheepdog, sleeper, tempDir } from "./helpers/cli.js";
import { standIns } from "./helpers/standins.js";

const OTHER = 4242;
const asRoot = process.getuid?.() === 0;
const setpriv = spawnSync("setpriv", ["--version"]).status === 0;
// Outside CI a missing setpriv (or a run that is not root) skips out loud; in CI it fails.
if (!asRoot || !setpriv) {
  const why = !asRoot ? "the tests do not run as root" : "setpriv is not installed";
  if (process.env.CI) throw new Error(`hostile-host: ${why}`);
  console.warn(`hostile-host: skipping the other-user tests: ${why}`);
}

const mode = (path: string) => (lstatSync(path).mode & 0o777).toString(8).padStart(4, "0");
const started: ChildProcess[] = [];
afterAll(() => {
  for (const p of started) p.kill("SIGKILL");
});

/** A $SHEEPDOG_HOME with programs in it, and the env every call of a test passes. */
function home() {
  const dir = tempDir();
  const env = {
    SHEEPDOG_HOME: dir,
    SHEEPDOG_STATE_DIR: join(dir, ".state"),
    SHEEPDOG_PROGRAM: "",
    HOME: dir,
    CLAUDE_CONFIG_DIR: join(dir, ".claude"),
    XDG_CONFIG_HOME: "",
  };
  const program = (name: string, command: string[] = [process.execPath, "-e", "0"]) => {
    const root = join(dir, name);
    mkdirSync(root, { mode: 0o755 });
    writeFileSync(
      join(root, "program.json"),
      JSON.stringify({ name, manager: { launcher: "command", command } }),
      { mode: 0o644 },
    );
    return root;
  };
  return { dir, env, program };
}

/** Runs the CLI through /bin/sh with `umask 000` first. */
function underUmask000(args: string[], env: NodeJS.ProcessEnv) {
  const words = [process.execPath, CLI, ...args].map((w) => `'${w.replace(/'/g, `'\\''`)}'`);
  const r = spawnSync("/bin/sh", ["-c", `umask 000; exec ${words.join(" ")}`], {
    env: { ...process.env, ...env },
    encoding: "utf8",
    input: "",
  });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

type Tick = { programs: { program: string; root: string; decision: string; reason: string }[] };

describe("what runs is the user's own", () => {
  it.skipIf(!asRoot)(
    "a program folder another user planted under $SHEEPDOG_HOME: tick --all skips it and says so; doctor fails it with the fix",
    () => {
      const h = home();
      h.program("good");
      const marker = join(h.dir, "planted-ran");
      const evil = h.program("evil", ["sh", "-c", `id > ${marker}`]);
      for (const p of [evil, join(evil, "program.json")]) chownSync(p, OTHER, OTHER);

      const r = sheepdog(["tick", "--all"], { env: h.env });
      expect(r.stderr).toContain(
        `sheepdog tick: evil: skipped: unsafe program folder: ${evil}: owned by uid ${OTHER}, not by you`,
      );
      expect(r.stdout).toMatch(/^evil\s+skipped\s+skipped: unsafe program folder/m);
      expect(r.stdout).toMatch(/^good\s+start/m); // the others are ticked as ever
      // nothing of it was started, nor any state made for it
      expect(existsSync(join(evil, ".sheepdog"))).toBe(false);
      expect(existsSync(marker)).toBe(false);
      const json = JSON.parse(sheepdog(["tick", "--all", "--json"], { env: h.env }).stdout) as Tick;
      expect(json.programs.find((p) => p.root === evil)?.decision).toBe("skipped");

      const doctor = sheepdog(["doctor", "--all", "--json"], { env: h.env });
      expect(doctor.code).toBe(1);
      const checks = (
        JSON.parse(doctor.stdout) as {
          checks: { program: string; check: string; status: string; detail: string; fix: string }[];
        }
      ).checks;
      const folder = checks.find((c) => c.check === "folder" && c.program === "evil");
      expect(folder?.status).toBe("fail");
      expect(folder?.detail).toContain(`${evil}: owned by uid ${OTHER}`);
      expect(folder?.fix).toContain(`remove ${evil} if it is not yours`);
      expect(checks.find((c) => c.check === "folder" && c.program === "good")?.status).toBe("ok");
      expect(sheepdog(["doctor", "--all"], { env: h.env }).stdout).toContain(
        `${evil}: owned by uid ${OTHER}`,
      );
      expect(existsSync(marker)).toBe(false);
    },
  );

  const LOOSE: { what: string; make: (root: string) => string; why: RegExp; fix: string }[] = [
    {
      what: "a folder others may write (0777)",
      make: (root) => {
        chmodSync(root, 0o777);
        return root;
      },
      why: /is world-writable \(mode 0777\)/,
      fix: "chmod go-w",
    },
    {
      what: "a group-writable program.json (0664)",
      make: (root) => {
        chmodSync(join(root, "program.json"), 0o664);
        return join(root, "program.json");
      },
      why: /is group-writable \(mode 0664\)/,
      fix: "chmod go-w",
    },
    {
      what: "a world-writable prompt",
      make: (root) => {
        writeFileSync(join(root, "MANAGER-PROMPT.md"), "# prompt\n", { mode: 0o666 });
        chmodSync(join(root, "MANAGER-PROMPT.md"), 0o666);
        return join(root, "MANAGER-PROMPT.md");
      },
      why: /is world-writable \(mode 0666\)/,
      fix: "chmod go-w",
    },
    {
      what: "program.json a symbolic link",
      make: (root) => {
        const real = join(root, "..", "elsewhere.json");
        writeFileSync(real, readFileSync(join(root, "program.json")));
        rmSync(join(root, "program.json"));
        symlinkSync(real, join(root, "program.json"));
        return join(root, "program.json");
      },
      why: /is not a regular file \(a symbolic link\)/,
      fix: "replace the link",
    },
  ];
  it.each(LOOSE)("$what: refused by name with the fix, skipped by tick --all", (c) => {
    const h = home();
    const root = h.program("loose");
    const path = c.make(root);
    const status = sheepdog(["status", "--program", root], { env: h.env });
    expect(status.code).toBe(2);
    expect(status.stderr).toContain(`unsafe program folder: ${path}: `);
    expect(status.stderr).toMatch(c.why);
    expect(status.stderr).toContain(`fix with: ${c.fix}`);
    const tick = JSON.parse(sheepdog(["tick", "--all", "--json"], { env: h.env }).stdout) as Tick;
    expect(tick.programs[0]).toMatchObject({ root, decision: "skipped" });
    expect(existsSync(join(root, ".sheepdog"))).toBe(false);
  });
});

describe("under umask 000 every folder sheepdog makes is 0700, program.json 0600", () => {
  it("init: the folder and the parents it makes 0700, program.json and the prompt 0600", () => {
    const h = home();
    const root = join(h.dir, "new", "deeper", "prog");
    const r = underUmask000(["init", root], h.env);
    expect(r.code, r.stderr).toBe(0);
    for (const d of [join(h.dir, "new"), join(h.dir, "new", "deeper"), root])
      expect(`${d} ${mode(d)}`).toBe(`${d} 0700`);
    expect(mode(join(root, "program.json"))).toBe("0600");
    expect(mode(join(root, "MANAGER-PROMPT.md"))).toBe("0600");
  });

  it("init into a folder others may write narrows it; one of another user's is refused", () => {
    const h = home();
    const loose = join(h.dir, "loose");
    mkdirSync(loose);
    chmodSync(loose, 0o777);
    expect(underUmask000(["init", loose], h.env).code).toBe(0);
    expect(mode(loose)).toBe("0755"); // narrowed: write taken from the others, nothing added
    if (!asRoot) return;
    const theirs = join(h.dir, "theirs");
    mkdirSync(theirs, { mode: 0o755 });
    chownSync(theirs, OTHER, OTHER);
    const r = underUmask000(["init", theirs], h.env);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${theirs}: owned by uid ${OTHER}`);
    expect(readdirSync(theirs)).toEqual([]);
  });

  it("save, statusline and the hooks: the state folders 0700, their files 0600", () => {
    const h = home();
    const root = h.program("modes");
    const manager = sleeper();
    started.push(manager);
    const env = { ...h.env, SHEEPDOG_STATE_DIR: join(h.dir, "state", "deep", "sheepdog") };
    expect(underUmask000(["save", "--pid", String(manager.pid), "--program", root], env).code).toBe(
      0,
    );
    const reading = JSON.stringify({
      rate_limits: { five_hour: { used_percentage: 42, resets_at: Date.now() / 1000 + 3600 } },
      session_id: "4d1fdc5a-7b7e-4a1c-8c3e-0d6f8e0b9a11",
      transcript_path: "/nonexistent.jsonl",
      model: { display_name: "Opus" },
    });
    const r = spawnSync(
      "/bin/sh",
      ["-c", `umask 000; echo '${reading}' | '${process.execPath}' '${CLI}' statusline`],
      { env: { ...process.env, ...env }, encoding: "utf8" },
    );
    expect(r.status, r.stderr).toBe(0);
    const state = env.SHEEPDOG_STATE_DIR;
    for (const d of [
      join(h.dir, "state"),
      join(h.dir, "state", "deep"),
      state,
      join(state, "usage"),
    ])
      expect(`${d} ${mode(d)}`).toBe(`${d} 0700`);
    for (const f of readdirSync(join(state, "usage")))
      expect(`${f} ${mode(join(state, "usage", f))}`).toBe(`${f} 0600`);
    expect(mode(join(root, ".sheepdog"))).toBe("0700");
  });

  it("install systemd: the unit folder and its parents, the host state dir and bin/ 0700; a loose unit folder is narrowed", () => {
    const h = home();
    const root = h.program("units");
    const s = standIns(undefined, { sheepdog: false });
    s.answer("loginctl", { when: ["show-user"], stdout: "Linger=yes\n" });
    const env = {
      ...h.env,
      USER: process.env.USER || userInfo().username,
      PATH: `${s.bin}:/usr/bin:/bin`,
      XDG_DATA_HOME: "",
    };
    const r = underUmask000(["install", "systemd", "--program", root], env);
    expect(r.code, r.stderr).toBe(0);
    const config = join(h.dir, ".config");
    for (const d of [config, join(config, "systemd"), join(config, "systemd", "user")])
      expect(`${d} ${mode(d)}`).toBe(`${d} 0700`);
    const state = h.env.SHEEPDOG_STATE_DIR;
    expect(mode(state)).toBe("0700");
    expect(mode(join(state, "bin"))).toBe("0700");
    expect(mode(join(state, "bin", "sheepdog"))).toBe("0755");
    expect(mode(join(config, "systemd", "user", "sheepdog-units.service"))).toBe("0644");

    // an older install's folders, left open by a careless umask: narrowed, never widened
    chmodSync(join(config, "systemd", "user"), 0o777);
    chmodSync(state, 0o777);
    expect(underUmask000(["install", "systemd", "--program", root], env).code).toBe(0);
    expect(mode(join(config, "systemd", "user"))).toBe("0755");
    expect(mode(state)).toBe("0755");
    if (!asRoot) return;
    // another user's unit folder: refused, nothing written into it
    const other = home();
    const theirs = join(other.dir, ".config", "systemd", "user");
    mkdirSync(theirs, { recursive: true, mode: 0o755 });
    chownSync(theirs, OTHER, OTHER);
    const refused = sheepdog(["install", "systemd", "--program", root], {
      env: { ...env, HOME: other.dir, SHEEPDOG_STATE_DIR: other.env.SHEEPDOG_STATE_DIR },
    });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`${theirs}: owned by uid ${OTHER}`);
    expect(readdirSync(theirs)).toEqual([]);
  });
});

describe("the host state dir and the state folder: checked, and nothing written through a link", () => {
  const reading = (pct: number) =>
    JSON.stringify({
      rate_limits: { five_hour: { used_percentage: pct, resets_at: Date.now() / 1000 + 3600 } },
      session_id: "4d1fdc5a-7b7e-4a1c-8c3e-0d6f8e0b9a11",
      model: { display_name: "Opus" },
    });

  it.skipIf(!asRoot || !setpriv)(
    "another user swaps a usage file for a link to ~/.bashrc in a world-writable host state dir: statusline appends nothing there, the tick fails loudly, doctor names the folder",
    () => {
      const h = home();
      const root = h.program("seat");
      chmodSync(h.dir, 0o711); // another user may pass through the home, as on a real host
      const bashrc = join(h.dir, ".bashrc");
      writeFileSync(bashrc, "export PATH=$HOME/bin:$PATH\n");
      const state = h.env.SHEEPDOG_STATE_DIR;
      expect(sheepdog(["statusline"], { env: h.env, input: reading(10) }).code).toBe(0);
      const usage = join(state, "usage");
      const [file] = readdirSync(usage);
      // what an older install under umask 000 left: folders anyone may write
      chmodSync(state, 0o777);
      chmodSync(usage, 0o777);
      const swap = spawnSync(
        "setpriv",
        [
          `--reuid=${OTHER}`,
          `--regid=${OTHER}`,
          "--clear-groups",
          "--",
          "sh",
          "-c",
          `rm -f '${join(usage, file as string)}' && ln -s '${bashrc}' '${join(usage, file as string)}' && echo '{"at":"2026-01-01T00:00:00Z","seat":"x","window":"five_hour","used_percentage":100,"resets_at":"2099-01-01T00:00:00Z","source":"statusline"}' > '${join(usage, "forged.jsonl")}'`,
        ],
        { encoding: "utf8" },
      );
      expect(swap.status, swap.stderr).toBe(0);
      expect(lstatSync(join(usage, file as string)).isSymbolicLink()).toBe(true);

      const line = sheepdog(["statusline"], {
        env: { ...h.env, SHEEPDOG_DEBUG: "1" },
        input: reading(55),
      });
      expect(line.code).toBe(0);
      expect(line.stdout).toContain("5h 55%"); // the line is shown as ever
      expect(line.stderr).toContain(`unsafe host state folder: ${state}: is world-writable`);
      expect(readFileSync(bashrc, "utf8")).toBe("export PATH=$HOME/bin:$PATH\n");

      // a forged 100 % reading is not believed: the tick fails, journals it and says why
      const tick = sheepdog(["tick", "--program", root], { env: h.env });
      expect(tick.code).toBe(1);
      expect(tick.stderr).toContain(`unsafe host state folder: ${state}: is world-writable`);
      const journal = readFileSync(join(root, ".sheepdog", "journal.jsonl"), "utf8");
      expect(journal).toContain('"type":"tick_failed"');
      expect(journal).not.toContain('"type":"paused"');

      const doctor = JSON.parse(
        sheepdog(["doctor", "--json", "--program", root], { env: h.env }).stdout,
      ) as {
        checks: { check: string; status: string; detail: string; fix: string }[];
      };
      const host = doctor.checks.filter((c) => c.check === "host_folders");
      expect(host.map((c) => c.status)).toContain("fail");
      expect(host.find((c) => c.detail.startsWith(`${state}:`))?.fix).toBe(`chmod 700 ${state}`);
      expect(host.find((c) => c.detail.startsWith(`${usage}:`))?.fix).toBe(`chmod 700 ${usage}`);
    },
  );

  it("a usage file that is a link (the folders are fine): statusline does not write through it", () => {
    const h = home();
    const bashrc = join(h.dir, ".bashrc");
    writeFileSync(bashrc, "alias ll='ls -l'\n");
    expect(sheepdog(["statusline"], { env: h.env, input: reading(10) }).code).toBe(0);
    const usage = join(h.env.SHEEPDOG_STATE_DIR, "usage");
    const file = join(usage, readdirSync(usage)[0] as string);
    rmSync(file);
    symlinkSync(bashrc, file);
    const r = sheepdog(["statusline"], {
      env: { ...h.env, SHEEPDOG_DEBUG: "1" },
      input: reading(60),
    });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(`${file}: is a symbolic link`);
    expect(readFileSync(bashrc, "utf8")).toBe("alias ll='ls -l'\n");
  });

  it("a journal that is a link: save and status fail naming it, and nothing is written through it", () => {
    const h = home();
    const root = h.program("linked");
    const manager = sleeper();
    started.push(manager);
    expect(
      sheepdog(["save", "--pid", String(manager.pid), "--program", root], { env: h.env }).code,
    ).toBe(0);
    const outside = join(h.dir, "outside.txt");
    writeFileSync(outside, "mine\n");
    const journal = join(root, ".sheepdog", "journal.jsonl");
    rmSync(journal);
    symlinkSync(outside, journal);
    for (const args of [["save", "--pid", String(manager.pid)], ["status"], ["journal"]]) {
      const r = sheepdog([...args, "--program", root], { env: h.env });
      expect(r.code, args.join(" ")).not.toBe(0);
      // (status shows it in the program's row, the others on stderr)
      expect(`${r.stdout}${r.stderr}`, args.join(" ")).toContain(`${journal}: is a symbolic link`);
    }
    expect(readFileSync(outside, "utf8")).toBe("mine\n");
    expect(statSync(outside).size).toBe(5);
  });
});
