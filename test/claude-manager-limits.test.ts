// The real Claude Code (2.1.328) as a subscriber's manager at its limits, through real ticks:
// a five-hour limit with the unified headers pauses the program until the header's reset, and
// the manager that waits it out and goes on by itself is not stopped; a server-side 429 ("not
// your usage limit") and a 529 storm never pause.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { projectFolderName, refusalAtEnd } from "../src/usage/transcript.js";
import { CLAUDE_CODE_VERSION, CLAUDE_INSTALL, claudeBinary } from "./helpers/claude-code.js";
import { claudeProgram, typeInto, usageOf } from "./helpers/claude-manager.js";
import {
  allowedHeaders,
  bash,
  ERRORS,
  fiveHourLimitHeaders,
  type Turn,
  useFreshFakeAnthropic,
} from "./helpers/fake-anthropic.js";
import { skipWithout } from "./helpers/tools.js";
import { isAlive, ofType, tickAsync, waitFor, waitForClaimBy } from "./helpers/watchdog.js";

const claude = await claudeBinary();

interface Started {
  at: string;
  pid: number;
  start_time: string;
  pane: string;
}
const starts = (stateDir: string) => ofType(stateDir, "manager_started") as unknown as Started[];
const said = (t: Turn, re: RegExp) => t.toolResults.some((r) => re.test(r));
const prompted = (t: Turn) =>
  t.main && t.toolResults.length === 0 && /MANAGER-PROMPT\.md/.test(t.lastUser);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Every reading recorded for the seats on this host (`$SHEEPDOG_STATE_DIR/usage/`). */
function readings(hostState: string): Record<string, unknown>[] {
  const dir = join(hostState, "usage");
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith(".jsonl"))
    .flatMap((f) =>
      readFileSync(join(dir, f), "utf8")
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l)),
    );
}

describe.skipIf(skipWithout("claude", claude.why, CLAUDE_INSTALL))(
  `the real Claude Code ${CLAUDE_CODE_VERSION} at a subscriber's limits`,
  () => {
    const freshApi = useFreshFakeAnthropic();
    const bin = claude.path as string;

    it("a five-hour limit: the statusline, StopFailure and transcript agree, the program pauses until the header's reset, and the manager that goes on by itself is not stopped", async () => {
      const api = await freshApi();
      const ok = allowedHeaders(0.62, 0.3);
      let reset = 0;
      api.script(
        {
          when: prompted,
          reply: bash("sheepdog claim acquire", { usage: usageOf(20_000), headers: ok }),
        },
        {
          when: (t) => t.main && said(t, /claimed by pid/),
          reply: bash("sheepdog save", { usage: usageOf(20_000), headers: ok }),
        },
        {
          // Claude Code sends itself this 30–90 s after the reset (2.1.328).
          name: "resumed",
          when: (t) => t.main && /usage limit has reset/i.test(t.lastUser),
          reply: bash("sheepdog save", { usage: usageOf(21_000), headers: ok }),
        },
        {
          name: "limit",
          when: (t) => t.main && said(t, /"saved_at"/),
          reply: () => {
            // The reset in the first seconds of a minute at least 28 s ahead: the refusal's
            // text (rounded down to the minute) then names the header's reset exactly.
            reset = Math.ceil((Date.now() + 3_000) / 60_000) * 60 + 25;
            return { status: 429, error: ERRORS.rateLimit, headers: fiveHourLimitHeaders(reset) };
          },
        },
        {
          when: (t) => t.main,
          times: Number.POSITIVE_INFINITY,
          reply: { text: "Saved. Waiting.", usage: usageOf(21_000), headers: ok },
        },
      );
      const p = claudeProgram(bin, api, {
        auth: "oauth",
        // Without the pause credit, its silence through the pause would be stale at the reset.
        watchdog: { stale_after: "20s", claim_grace: "240s" },
      });
      expect((await tickAsync(p.env)).report.decision).toBe("start");
      const [a] = starts(p.stateDir);
      await waitForClaimBy(p.stateDir, a?.pid as number);
      await waitFor("the limit", () => reset > 0, 60_000);
      const until = new Date(reset * 1000).toISOString();

      // The StopFailure hook records the refusal at once, with the minute its text names
      // (rounded down); the statusline's reading of the same headers, with the exact reset,
      // follows within a second. The pause is until the later of the two: the header's.
      const host = p.env.SHEEPDOG_STATE_DIR as string;
      const minute = new Date(Math.floor(reset / 60) * 60_000).toISOString();
      await waitFor("the statusline's 100 % reading", () =>
        readings(host).some(
          (r) => r.source === "statusline" && r.used_percentage === 100 && r.resets_at === until,
        ),
      );
      const refusal = readings(host).find((r) => r.source === "refusal");
      expect(refusal).toMatchObject({
        used_percentage: 100,
        resets_at: minute,
        window: "five_hour",
      });
      expect(String(refusal?.text)).toMatch(
        /^You've hit your 5-hour limit · resets \d+(:\d\d)?[ap]m \(UTC\)$/,
      );
      // The transcript's own refusal: the text names the same minute, its structure the second.
      const folder = join(p.seat.configDir, "projects", projectFolderName(p.root, {}));
      const transcript = await waitFor("the refusal in the transcript", () =>
        readdirSync(folder)
          .filter((f) => f.endsWith(".jsonl"))
          .map((f) => join(folder, f))
          .find((f) => refusalAtEnd(f, "UTC") !== null),
      );
      // Its structured rate_limit_info: the header's reset to the second (DESIGN §5).
      expect(refusalAtEnd(transcript, "UTC")).toMatchObject({ resets_at: reset, exact: true });
      const t1 = await tickAsync(p.env);
      expect(t1.report.decision).toBe("pause");
      expect(ofType(p.stateDir, "paused")).toMatchObject([{ until, window: "five_hour" }]);
      expect((await tickAsync(p.env)).report.decision).toBe("wait_pause");

      // After the reset: not stopped; it has claim_grace to go on by itself, and it does.
      await sleep(Math.max(0, reset * 1000 - Date.now()) + 500);
      const after = await tickAsync(p.env);
      expect(after.report.decision).toBe("ok");
      expect(ofType(p.stateDir, "unpaused")).toHaveLength(1);
      const savesBefore = ofType(p.stateDir, "saved").length;
      await waitFor(
        "the manager to go on by itself",
        () => ofType(p.stateDir, "saved").length > savesBefore,
        200_000,
      );
      const resumed = ofType(p.stateDir, "saved").at(-1);
      expect(resumed?.pid).toBe(a?.pid);
      process.stderr.write(
        `claude-manager timing: reset to its own save after the limit: ${Date.parse(String(resumed?.at)) - reset * 1000} ms\n`,
      );
      expect((await tickAsync(p.env)).report.decision).toBe("ok");
      expect(ofType(p.stateDir, "manager_stopped")).toHaveLength(0);
      expect(isAlive(a?.pid as number, a?.start_time as string)).toBe(true);
    }, 300_000);

    it("a server-side 429 (not your usage limit) and a 529 storm never pause", async () => {
      const api = await freshApi();
      api.script(
        { when: prompted, reply: bash("sheepdog claim acquire", { usage: usageOf(9_000) }) },
        {
          when: (t) => t.main && said(t, /claimed by pid/),
          reply: bash("sheepdog save", { usage: usageOf(9_000) }),
        },
        // A 429 without the unified headers: the server limits requests, the seat has room.
        {
          when: (t) => t.main && said(t, /"saved_at"/),
          reply: { status: 429, error: ERRORS.rateLimit },
        },
        {
          name: "529 storm",
          when: (t) => t.main,
          times: Number.POSITIVE_INFINITY,
          reply: { status: 529, error: ERRORS.overloaded },
        },
      );
      const p = claudeProgram(bin, api, { auth: "oauth", env: { CLAUDE_CODE_MAX_RETRIES: "0" } });
      expect((await tickAsync(p.env)).report.decision).toBe("start");
      const [a] = starts(p.stateDir);
      await waitForClaimBy(p.stateDir, a?.pid as number);
      const transcriptHas = (re: RegExp) => {
        const folder = join(p.seat.configDir, "projects", projectFolderName(p.root, {}));
        return readdirSync(folder)
          .filter((f) => f.endsWith(".jsonl"))
          .some((f) => re.test(readFileSync(join(folder, f), "utf8")));
      };
      await waitFor(
        "the 429 in the transcript",
        () => transcriptHas(/not your usage limit/),
        60_000,
      );
      expect((await tickAsync(p.env)).report.decision).toBe("ok");
      // A person asks it to go on: every answer is a 529.
      await typeInto(p, a?.pane as string, "go on");
      await waitFor("the 529 in the transcript", () => transcriptHas(/529/), 60_000);
      expect((await tickAsync(p.env)).report.decision).toBe("ok");
      expect(ofType(p.stateDir, "paused")).toHaveLength(0);
      expect(
        readings(p.env.SHEEPDOG_STATE_DIR as string).filter((r) => r.source === "refusal"),
      ).toEqual([]);
    });
  },
);
