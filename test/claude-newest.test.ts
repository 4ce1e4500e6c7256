// The newest tested Claude Code (src/usage/claude-versions.ts: 2.1.332) as an interactive manager
// under tmux, through real ticks: every usage-limit refusal of the shared list in one session
// (each pauses until the header's reset to the second; the StopFailure hook's text reading is
// the minute, never later), the limit dialog of a reset days away (at_limit: the pause holds, no
// blocked page, and claim_grace after the pause the manager is replaced by exact pid), a
// person's Esc during a Bash call (interrupted), a declared hook event it does not know, and its
// trust dialog. The tests run side by side, each with its own fake API, seat and tmux server.
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { showsLimitDialog } from "../src/launch/claude-screen.js";
import { readHookRecords } from "../src/usage/hook-records.js";
import { projectFolderName } from "../src/usage/transcript.js";
import { CLAUDE_CODE_NEWEST, claudeBinary, claudeInstall } from "./helpers/claude-code.js";
import { claudeProgram, managerModel, saveAnswers, typeInto } from "./helpers/claude-manager.js";
import { sheepdogAsync } from "./helpers/cli.js";
import { bash, type Rule, type Turn, useFreshFakeAnthropic } from "./helpers/fake-anthropic.js";
import { LIMIT_CASES, type LimitCase, limitCase, resetIn } from "./helpers/limit-cases.js";
import { useNtfyServer } from "./helpers/ntfy-server.js";
import { skipWithout } from "./helpers/tools.js";
import { isAlive, ofType, tickAsync, waitFor, waitForClaimBy } from "./helpers/watchdog.js";

const claude = await claudeBinary(CLAUDE_CODE_NEWEST);
const freshApi = useFreshFakeAnthropic();
const ntfy = useNtfyServer();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** A wait whose failure shows the pane. */
async function seeing<T>(wait: Promise<T>, screen: () => string): Promise<T> {
  try {
    return await wait;
  } catch (err) {
    throw new Error(`${(err as Error).message}; the screen:\n${screen()}`);
  }
}

interface Started {
  pid: number;
  start_time: string;
  pane: string;
  planned: boolean;
}
const starts = (stateDir: string) => ofType(stateDir, "manager_started") as unknown as Started[];

/** Every reading recorded on this host (`$SHEEPDOG_STATE_DIR/usage/*.jsonl`). */
function readings(hostState: string): Record<string, unknown>[] {
  const dir = join(hostState, "usage");
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((f) =>
    readFileSync(join(dir, f), "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l)),
  );
}

/** The main-chain entries of every transcript in the seat's project folder for `root`. */
// biome-ignore lint/suspicious/noExplicitAny: transcript entries
function entries(configDir: string, root: string): any[] {
  const folder = join(configDir, "projects", projectFolderName(root, {}));
  if (!existsSync(folder)) return [];
  return readdirSync(folder)
    .filter((f) => f.endsWith(".jsonl"))
    .flatMap((f) => readFileSync(join(folder, f), "utf8").split("\n"))
    .filter(Boolean)
    .flatMap((l) => {
      try {
        return [JSON.parse(l)];
      } catch {
        return [];
      }
    });
}
// biome-ignore lint/suspicious/noExplicitAny: transcript entries
const textOf = (e: any): string =>
  (Array.isArray(e?.message?.content) ? e.message.content : [])
    .map((b: { text?: string }) => b.text ?? "")
    .join("");

describe.skipIf(skipWithout("claude", claude.why, claudeInstall(CLAUDE_CODE_NEWEST)))(
  `the real Claude Code ${CLAUDE_CODE_NEWEST}, interactive`,
  () => {
    const bin = claude.path as string;

    it.concurrent("every limit in one session: each pauses until the header's reset to the second, the hook's text reading is its minute; the dialog of a reset days away is at_limit: the pause holds, no blocked page, and claim_grace after the pause the manager is replaced", async ({
      onTestFinished,
    }) => {
      const api = await freshApi();
      let current: LimitCase | null = null;
      const resets = new Map<string, number>();
      const limit: Rule = {
        name: "limit",
        when: (t) => t.main && current !== null,
        times: Number.POSITIVE_INFINITY,
        reply: () => {
          const c = current as LimitCase;
          // A reset of its own per case: the CLI draws its dialog once per reset.
          const reset = resetIn(c.resetIn) + 60 * order.indexOf(c);
          resets.set(c.id, reset);
          return { status: 429, headers: c.headers(reset) };
        },
      };
      api.script(limit, ...managerModel());
      const p = claudeProgram(bin, api, {
        auth: "oauth",
        // Interactive retries of c13 and c14 end after one (10 by default: minutes).
        env: { CLAUDE_CODE_MAX_RETRIES: "1", TZ: "UTC" },
        watchdog: { stale_after: "1h", claim_grace: "4s" },
        page: { ntfy: { server: ntfy.url, topic: "catalog-alerts" } },
        onFinished: onTestFinished,
      });
      const host = p.env.SHEEPDOG_STATE_DIR as string;
      const began = Date.now();
      expect((await tickAsync(p.env)).report.decision).toBe("start");
      const [a] = starts(p.stateDir);
      await waitForClaimBy(p.stateDir, a?.pid as number);
      const [saved] = await waitFor(
        "the first save",
        () => saveAnswers(api).at(0) && saveAnswers(api),
      );
      // The Stop hook of the turn that saved: recorded for its session (DESIGN §14).
      const session = String(saved?.transcript)
        .split("/")
        .pop()
        ?.replace(/\.jsonl$/, "") as string;
      await waitFor("the Stop hook's record", () => readHookRecords(session, p.env).stop, 20_000);
      const screen = () => p.tmux("capture-pane", "-p", "-t", a?.pane as string).out;

      // The days-away dialogs last, the Fable one kept on the screen for at_limit.
      const order = [
        ...LIMIT_CASES.filter((c) => c.resetIn === "minutes"),
        ...LIMIT_CASES.filter((c) => c.resetIn === "days" && c.id !== "c05"),
        limitCase("c05"),
      ];
      for (const c of order) {
        const what = `${c.id} (${c.what})`;
        const seen = entries(p.seat.configDir, p.root).length;
        current = c;
        await typeInto(p, a?.pane as string, `go on with ${c.id}`).catch((err) => {
          throw new Error(`${what}: ${err.message}; the screen:\n${screen()}`);
        });
        const entry = await seeing(
          waitFor(
            `${what}: its refusal in the transcript`,
            () =>
              entries(p.seat.configDir, p.root)
                .slice(seen)
                .find((e) => e.type === "assistant" && e.isApiErrorMessage === true),
            60_000,
          ),
          screen,
        );
        current = null;
        const reset = resets.get(c.id) as number;
        expect(textOf(entry), what).toMatch(c.text);
        if (!c.limit) {
          expect(entry.apiErrorParams, what).toBeUndefined();
          expect((await tickAsync(p.env)).report.decision, what).toBe("ok");
          // 2.1.332 offers its rate-limit options for it too (the same dialog, "continue
          // automatically at <the header's reset>"): a person stops it.
          const dialog = await waitFor(
            `${what}: the options`,
            () => showsLimitDialog(screen()),
            5_000,
          ).catch(() => false);
          if (dialog) p.tmux("send-keys", "-t", a?.pane as string, "1");
          await seeing(
            waitFor(`${what}: the input box again`, () => !showsLimitDialog(screen()), 10_000),
            screen,
          );
          continue;
        }
        expect(entry.apiErrorParams.rate_limit_info.resetsAt, what).toBe(reset);
        // The hook ran first (interactive sessions run hooks to their end): the text's reading.
        const hook = await waitFor(
          `${what}: the StopFailure hook's reading`,
          () =>
            readings(host).find(
              (r) => r.from === "hook" && r.text === textOf(entry) && r.session === session,
            ),
          20_000,
        );
        const t = await tickAsync(p.env);
        expect(t.report.decision, `${what}: ${t.report.reason}`).toBe("pause");
        const paused = ofType(p.stateDir, "paused").at(-1);
        if (c.namesReset) {
          // From the text: rounded down to the minute, never later; the pause: exact.
          expect(hook.resets_at, what).toBe(
            new Date(Math.floor(reset / 60) * 60_000).toISOString(),
          );
          expect(paused?.until, what).toBe(new Date(reset * 1000).toISOString());
        } else {
          expect(String(paused?.needs_person), what).toMatch(c.needsPerson as RegExp);
          expect(paused?.until, what).toBe(hook.resets_at); // the fallback fixed by the hook
        }
        const pane = a?.pane as string;
        if (c.resetIn === "days") {
          // A reset more than a day away: the limit dialog, no auto-continue, no other hook.
          await seeing(
            waitFor(`${what}: the limit dialog`, () => showsLimitDialog(screen()), 10_000),
            screen,
          );
          if (c.id === "c05") break;
          p.tmux("send-keys", "-t", pane, "1"); // a person: "Stop and wait for limit to reset"
        } else {
          expect(showsLimitDialog(screen()), what).toBe(false);
        }
        // Within the day the CLI may wait to continue by itself: a person cancels it. What this
        // case drew is the screen below its own prompt: its refusal (`⎿ …`), then, when it
        // waits, "set to continue automatically", and after an Esc "Automatic continue
        // cancelled". Watched for, not raced against a deadline (a loaded machine draws late),
        // and settled when the same answer holds a second apart.
        let escAt = 0;
        let settledSince = 0;
        await seeing(
          waitFor(
            `${what}: the input box again`,
            () => {
              const s = screen();
              const own = s.slice(Math.max(0, s.lastIndexOf(`go on with ${c.id}`)));
              if (!own.includes("⎿")) return false;
              const waits =
                /set to continue automatically/.test(own) && !/continue cancelled/.test(own);
              if (waits && c.resetIn !== "days") {
                settledSince = 0;
                if (Date.now() - escAt > 1_000) {
                  escAt = Date.now();
                  p.tmux("send-keys", "-t", pane, "Escape");
                }
                return false;
              }
              if (/What do you want to do\?|Continuing automatically/.test(s)) {
                settledSince = 0;
                return false;
              }
              settledSince ||= Date.now();
              return Date.now() - settledSince >= 1_000;
            },
            20_000,
          ),
          screen,
        );
        expect((await sheepdogAsync(["unpause"], { env: p.env })).code).toBe(0);
      }
      process.stderr.write(
        `claude-newest timing: ${order.length} limits in ${Date.now() - began} ms\n`,
      );

      // c05: the dialog stays. The pause holds; then it ends (a person's unpause) ...
      expect(screen()).toMatch(/What do you want to do\?[\s\S]*Stop and wait for limit to reset/);
      expect((await tickAsync(p.env)).report.decision).toBe("wait_pause");
      expect((await sheepdogAsync(["unpause"], { env: p.env })).code).toBe(0);
      const unpausedAt = Date.parse(String(ofType(p.stateDir, "unpaused").at(-1)?.at));
      const inGrace = await tickAsync(p.env);
      expect(inGrace.report.decision).toBe("ok");
      // ... and claim_grace later, still at the dialog with no save: replaced by exact pid.
      await sleep(Math.max(0, unpausedAt + 4_500 - Date.now()));
      const replaced = await tickAsync(p.env);
      expect(replaced.report.decision, replaced.report.reason).toBe("restart_stuck");
      expect(replaced.report.reason).toMatch(/still at Claude Code's usage-limit dialog/);
      const [stopped] = ofType(p.stateDir, "manager_stopped");
      expect(stopped).toMatchObject({ pid: a?.pid, planned: true });
      expect(isAlive(a?.pid as number, a?.start_time as string)).toBe(false);
      const b = starts(p.stateDir).at(-1) as Started;
      expect(b.pid).not.toBe(a?.pid);
      expect(b.planned).toBe(true);
      await waitForClaimBy(p.stateDir, b.pid);
      // Never a blocked or stuck page, never a blocked note: only pauses (and who must act), and
      // the pause incidents' own "recovered" closes (DESIGN §8).
      expect(ofType(p.stateDir, "blocked")).toEqual([]);
      const kinds = new Set(ofType(p.stateDir, "paged").map((e) => e.kind));
      expect(
        [...kinds].filter((k) => !["paused", "needs_person", "recovered"].includes(String(k))),
      ).toEqual([]);
    }, 300_000);

    it.concurrent("Esc during a Bash call: interrupted (no hook runs); no nudge, no restart, and status says a person stopped it and when", async ({
      onTestFinished,
    }) => {
      const api = await freshApi();
      const asked = (t: Turn) =>
        t.main && /run the long command/.test(t.lastUser) && t.toolResults.length === 0;
      api.script(
        { name: "long", when: asked, reply: bash('node -e "setTimeout(() => {}, 120000)"') },
        ...managerModel(),
      );
      const p = claudeProgram(bin, api, {
        watchdog: { stale_after: "1h", quiet_after: "3s", nudge_wait: "3s" },
        // A foreground call that runs (not a permission prompt): node is allowed.
        allow: ["Bash(node:*)"],
        onFinished: onTestFinished,
      });
      expect((await tickAsync(p.env)).report.decision).toBe("start");
      const [a] = starts(p.stateDir);
      await waitForClaimBy(p.stateDir, a?.pid as number);
      const [saved] = await waitFor(
        "the first save",
        () => saveAnswers(api).at(0) && saveAnswers(api),
      );
      const session = String(saved?.transcript)
        .split("/")
        .pop()
        ?.replace(/\.jsonl$/, "") as string;
      await waitFor("the Stop hook's record", () => readHookRecords(session, p.env).stop, 20_000);
      const stopBefore = readHookRecords(session, p.env).stop?.at;
      await typeInto(p, a?.pane as string, "run the long command");
      const screen = () => p.tmux("capture-pane", "-p", "-t", a?.pane as string).out;
      await waitFor(
        "the call running",
        () => /setTimeout/.test(screen()) && /esc to interrupt/.test(screen()),
        30_000,
      );
      p.tmux("send-keys", "-t", a?.pane as string, "Escape");
      await waitFor(
        "[Request interrupted by user for tool use]",
        () =>
          textOf(
            entries(p.seat.configDir, p.root)
              .filter((e) => e.type === "user")
              .at(-1),
          ).startsWith("[Request interrupted by user for tool use]"),
        20_000,
      );
      await sleep(3_500); // quiet_after since the save, and since the Esc
      const t = await tickAsync(p.env);
      expect(t.report.decision, `${t.report.reason}\n${screen()}`).toBe("ok");
      expect(t.report.reason).toMatch(/interrupted by a person at \d{4}-\d\d-\d\dT/);
      expect((t.report.facts as { activity?: { verdict: string } }).activity?.verdict).toBe(
        "interrupted",
      );
      await sleep(3_500); // past nudge_wait too: still nothing
      expect((await tickAsync(p.env)).report.decision).toBe("ok");
      expect(ofType(p.stateDir, "nudged")).toEqual([]);
      expect(ofType(p.stateDir, "manager_stopped")).toEqual([]);
      // No hook ran for the Esc: the Stop record is the save's turn's.
      expect(readHookRecords(session, p.env).stop?.at).toBe(stopBefore);
      const status = await sheepdogAsync(["status"], { env: p.env });
      expect(status.stdout).toMatch(/interrupted by a person at \d{4}-\d\d-\d\d \d\d:\d\d/);
    }, 120_000);

    it.concurrent("a declared hook event it does not know holds the start at its Settings Warning (check says so); without it the trust dialog is answered and it claims", async ({
      onTestFinished,
    }) => {
      const api = await freshApi();
      api.script(...managerModel());
      const p = claudeProgram(bin, api, {
        trusted: false,
        accept: true,
        onFinished: onTestFinished,
      });
      const settings = join(p.seat.configDir, "settings.json");
      const good = readFileSync(settings, "utf8");
      const parsed = JSON.parse(good);
      parsed.hooks.Interrupt = [{ hooks: [{ type: "command", command: "true" }] }];
      writeFileSync(settings, JSON.stringify(parsed));
      const check = await sheepdogAsync(["check"], { env: p.env });
      expect(check.code).toBe(2);
      expect(check.stderr).toContain(`${settings}: hooks.Interrupt:`);
      const held = await tickAsync(p.env);
      expect(held.report.decision).toBe("start");
      const [failed] = ofType(p.stateDir, "manager_start_failed");
      expect(String(failed?.screen)).toMatch(/Settings Warning/);
      expect(String(failed?.screen)).toMatch(
        /hooks\.Interrupt: Unknown hook event "Interrupt" was ignored/,
      );
      // Fixed: the next start passes the trust dialog (its "No, exit" first) and claims.
      writeFileSync(settings, good);
      expect((await sheepdogAsync(["check"], { env: p.env })).code).toBe(0);
      const t = await tickAsync(p.env);
      expect(t.report.decision).toBe("start");
      const b = starts(p.stateDir).at(-1) as Started;
      await waitForClaimBy(p.stateDir, b.pid);
      const config = JSON.parse(readFileSync(join(p.seat.configDir, ".claude.json"), "utf8"));
      expect(config.projects?.[p.root]?.hasTrustDialogAccepted).toBe(true);
    }, 120_000);
  },
);
