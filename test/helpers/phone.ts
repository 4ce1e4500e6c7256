// Programs with buttons on their pages, for the incident tests (page-incidents-*.test.ts): a
// crash loop whose pages go to the ntfy stand-in, real ticks, and the page's actions.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "vitest";
import { sheepdogAsync, tempProgram } from "./cli.js";
import type { NtfyAction, NtfyMessage, NtfyServer } from "./ntfy-server.js";

export const PAGES = "catalog-pages";
export const CONTROL = "catalog-ctl";

/**
 * A crash loop (the manager exits at once, one unplanned start allowed) with buttons on its
 * pages, and the clock-step hook's file (0: no step yet).
 */
export function phoneProgram(server: NtfyServer, extra: Record<string, unknown> = {}) {
  const p = tempProgram("catalog", {
    manager: { launcher: "command", command: [process.execPath, "-e", "process.exit(0)"] },
    watchdog: { claim_grace: "1s", crash_loop: { starts: 1, within: "1h" } },
    page: { ntfy: { server: server.url, topic: PAGES, control_topic: CONTROL } },
    ...extra,
  });
  const clock = join(p.home, "clock-step");
  writeFileSync(clock, "0");
  return { ...p, clock, env: { ...p.env, SHEEPDOG_CLOCK_FILE: clock } };
}

/** `sheepdog tick --json` (exit 0): the decision. */
export async function tick(env: NodeJS.ProcessEnv): Promise<string> {
  const r = await sheepdogAsync(["tick", "--json"], { env });
  expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(0);
  return JSON.parse(r.stdout).programs[0].decision;
}

export async function tickUntil(env: NodeJS.ProcessEnv, want: string, max = 12): Promise<void> {
  for (let n = 0; n < max; n++) if ((await tick(env)) === want) return;
  throw new Error(`no tick decided ${want} in ${max} ticks`);
}

/** The action labelled `label` of a stored page. */
export function action(m: NtfyMessage | undefined, label: string): NtfyAction {
  const a = m?.actions?.find((x) => x.label === label);
  if (!a) throw new Error(`no action ${label} on ${JSON.stringify(m)}`);
  return a;
}
