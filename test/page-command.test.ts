import { chmodSync, existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { sheepdogAsync, tempDir, tempProgram } from "./helpers/cli.js";
import { useNtfyServer } from "./helpers/ntfy-server.js";

const TOKEN = "tk_pagecommandsecret9876543210";

const server = useNtfyServer();

function program(ntfy: Record<string, unknown> | null, name = "catalog") {
  const page = ntfy ? { ntfy: { server: server.url, topic: "catalog-alerts", ...ntfy } } : {};
  return tempProgram(name, { page });
}

/**
 * `sheepdog page ARGS` as a real process (async: the server runs in this process's event loop),
 * its output checked for the token.
 */
async function page(args: string[], env: Record<string, string>) {
  const r = await sheepdogAsync(["page", ...args], { env });
  expect(r.stdout).not.toContain(TOKEN);
  expect(r.stderr).not.toContain(TOKEN);
  return r;
}

describe("sheepdog page --test", async () => {
  it("sends one low-priority test page with the token and reports the status and message id", async () => {
    server.token = TOKEN;
    const p = program({ token_env: "NTFY_TOKEN" });
    const r = await page(["--test", "--program", "catalog"], { ...p.env, NTFY_TOKEN: TOKEN });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(server.received).toHaveLength(1);
    const got = server.received[0];
    expect(got?.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(got?.title).toBe("catalog: sheepdog test page");
    expect(got?.priority).toBe(2);
    expect(got?.topic).toBe("catalog-alerts");
    expect(r.stdout).toContain("catalog: sheepdog test page");
    expect(r.stdout).toContain(server.url);
    expect(r.stdout).toMatch(new RegExp(`answer +200, message id ${got?.id}`));
    // A test page leaves no state behind (and so no token anywhere in it).
    expect(existsSync(join(p.root, ".sheepdog", "journal.jsonl"))).toBe(false);
  });

  it("prints JSON with --json", async () => {
    const p = program({});
    const r = await page(["--test", "--json"], p.env);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out).toEqual({
      program: "catalog",
      server: server.url,
      topic: "catalog-alerts",
      ok: true,
      status: 200,
      id: server.received[0]?.id,
      title: "catalog: sheepdog test page",
    });
  });

  it("reads the token from a 0600 file", async () => {
    server.token = TOKEN;
    const file = join(tempDir(), "ntfy-token");
    writeFileSync(file, `${TOKEN}\n`, { mode: 0o600 });
    chmodSync(file, 0o600);
    const p = program({ token_file: file });
    const r = await page(["--test"], p.env);
    expect(r.code).toBe(0);
    expect(server.received[0]?.headers.authorization).toBe(`Bearer ${TOKEN}`);
  });

  it("refuses a 0644 token file with exit 2, naming the file and its mode, and sends nothing", async () => {
    const file = join(tempDir(), "ntfy-token");
    writeFileSync(file, `${TOKEN}\n`);
    chmodSync(file, 0o644);
    const p = program({ token_file: file });
    const r = await page(["--test"], p.env);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(file);
    expect(r.stderr).toContain("0644");
    expect(r.stderr).toContain("chmod 600");
    expect(server.received).toHaveLength(0);
  });

  it("exits 2 when token_env names a variable that is not set", async () => {
    const p = program({ token_env: "SHEEPDOG_TEST_UNSET_TOKEN" });
    const r = await page(["--test"], { ...p.env, SHEEPDOG_TEST_UNSET_TOKEN: "" });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("SHEEPDOG_TEST_UNSET_TOKEN");
  });

  it("exits 1 naming the server (never the token) when the server fails", async () => {
    server.failWith = 500;
    server.echoAuthInErrors = true;
    const p = program({ token_env: "NTFY_TOKEN" });
    const r = await page(["--test"], { ...p.env, NTFY_TOKEN: TOKEN });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`ntfy server ${server.url} answered 500`);
    expect(r.stderr).toContain("[token]");
  });

  it("exits 1 on a 401 when the server wants a token and none is configured", async () => {
    server.token = TOKEN;
    const p = program({});
    const r = await page(["--test"], p.env);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("401");
  });

  it("exits 1 when the server is down", async () => {
    await server.stop();
    const p = program({});
    const r = await page(["--test"], p.env);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(server.url);
    expect(r.stderr).toContain("ECONNREFUSED");
  });

  it("exits 2 when no page.ntfy is configured", async () => {
    const p = program(null);
    const r = await page(["--test"], p.env);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("page.ntfy");
    expect(r.stderr).toContain(join(p.root, "program.json"));
  });

  it("exits 2 without --test", async () => {
    const p = program({});
    const r = await page([], p.env);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--test");
    expect(server.received).toHaveLength(0);
  });
});
