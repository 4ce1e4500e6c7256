// Secrets stay secret (DESIGN §18, issue 31): a URL's userinfo is refused at load (and never
// quoted in the error that is journaled and paged), the heartbeat URL is journaled and printed
// by its origin only, and under `tick --all` no manager inherits any program's token_env.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { sheepdog, sheepdogAsync, tempDir, tempProgram } from "./helpers/cli.js";
import { waitFor } from "./helpers/manager-side.js";
import { useNtfyServer } from "./helpers/ntfy-server.js";

const server = useNtfyServer();
const SECRET = "s3cr3t-kEy-9f2c";

const events = (stateDir: string) =>
  readFileSync(join(stateDir, "journal.jsonl"), "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe("a URL's user name and password", () => {
  it.each([
    [
      "page.ntfy.server",
      { ntfy: { server: `https://alerts:${SECRET}@ntfy.example.net`, topic: "t" } },
    ],
    ["page.heartbeat_url", { heartbeat_url: `https://me:${SECRET}@hc-ping.com/abc` }],
  ])("in %s: refused at load, the password never in the error", (field, page) => {
    const p = tempProgram("creds", { page });
    const r = sheepdog(["check"], { env: p.env });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      `${join(p.root, "program.json")}: ${field}: expected an http(s) URL without a user name or password`,
    );
    expect(r.stderr).not.toContain(SECRET);
  });

  it("saved into a running program: config_invalid is journaled without it", () => {
    const p = tempProgram("creds", {
      manager: { launcher: "command", command: [process.execPath, "-e", "0"] },
    });
    expect(sheepdog(["tick", "--dry-run"], { env: p.env }).code).toBe(0);
    expect(sheepdog(["tick"], { env: p.env }).code).toBe(0); // keeps the last valid copy
    writeFileSync(
      join(p.root, "program.json"),
      JSON.stringify({
        name: "creds",
        page: { heartbeat_url: `https://me:${SECRET}@hc.example/x` },
      }),
    );
    expect(sheepdog(["tick"], { env: p.env }).code).toBe(0);
    const invalid = events(p.stateDir).filter((e) => e.type === "config_invalid");
    expect(invalid).toHaveLength(1);
    expect(String(invalid[0]?.error)).toContain("page.heartbeat_url");
    expect(readFileSync(join(p.stateDir, "journal.jsonl"), "utf8")).not.toContain(SECRET);
  });
});

describe("the heartbeat URL", () => {
  it("a failed ping is journaled by the URL's origin only; check --json prints the origin only", async () => {
    const url = `http://127.0.0.1:9/hc/${SECRET}`; // the discard port: nothing listens
    const p = tempProgram("beat", {
      manager: { launcher: "command", command: [process.execPath, "-e", "0"] },
      page: { heartbeat_url: url },
    });
    const r = await sheepdogAsync(["tick"], { env: p.env });
    expect(r.code, r.stderr).toBe(0);
    const failed = events(p.stateDir).filter((e) => e.type === "heartbeat_failed");
    expect(failed).toHaveLength(1);
    expect(failed[0]?.error).toMatch(/^http:\/\/127\.0\.0\.1:9\/…: /);
    const everything = [
      readFileSync(join(p.stateDir, "journal.jsonl"), "utf8"),
      readFileSync(join(p.stateDir, "last-tick.json"), "utf8"),
      sheepdog(["journal"], { env: p.env }).stdout,
      sheepdog(["status", "--json"], { env: p.env }).stdout,
      sheepdog(["check", "--json"], { env: p.env }).stdout,
    ].join("\n");
    expect(everything).not.toContain(SECRET);
    const check = JSON.parse(sheepdog(["check", "--json"], { env: p.env }).stdout);
    expect(check.config.page.heartbeat_url).toBe("http://127.0.0.1:9/…");
  });
});

describe("tokens under tick --all", () => {
  it("no manager inherits any program's token_env: its own or another's", async () => {
    const home = tempDir();
    const dumps: Record<string, string> = {};
    for (const name of ["alpha", "beta"]) {
      const root = join(home, name);
      mkdirSync(root);
      dumps[name] = join(root, "env.json");
      const dump = `require("fs").writeFileSync(${JSON.stringify(dumps[name])}, JSON.stringify(process.env))`;
      writeFileSync(
        join(root, "program.json"),
        JSON.stringify({
          name,
          manager: { launcher: "command", command: [process.execPath, "-e", dump] },
          page: {
            ntfy: {
              server: server.url,
              topic: `${name}-alerts`,
              token_env: `TOKEN_${name.toUpperCase()}`,
            },
          },
        }),
      );
    }
    const env = {
      SHEEPDOG_HOME: home,
      SHEEPDOG_STATE_DIR: join(home, ".state"),
      SHEEPDOG_PROGRAM: "",
      TOKEN_ALPHA: "tk_alpha_secret",
      TOKEN_BETA: "tk_beta_secret",
      UNRELATED: "kept",
    };
    const r = await sheepdogAsync(["tick", "--all"], { env });
    expect(r.code, r.stderr).toBe(0);
    for (const name of ["alpha", "beta"]) {
      const file = dumps[name] as string;
      expect(
        await waitFor(() => existsSync(file) && readFileSync(file, "utf8").endsWith("}")),
      ).toBe(true);
      const seen = JSON.parse(readFileSync(file, "utf8")) as Record<string, string>;
      expect(seen.UNRELATED, name).toBe("kept");
      expect(seen.TOKEN_ALPHA, name).toBeUndefined();
      expect(seen.TOKEN_BETA, name).toBeUndefined();
      expect(JSON.stringify(seen)).not.toMatch(/tk_(alpha|beta)_secret/);
    }
  });
});
