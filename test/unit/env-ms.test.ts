import { describe, expect, it } from "vitest";
import { passDeadlineMs, TICK_DEADLINE_MS } from "../../src/config/load.js";
import { envMs } from "../../src/util/env-ms.js";
import { givenUpGraceMs } from "../../src/watchdog/pass/supervisor.js";

describe("envMs: a time limit from the environment", () => {
  it.each([
    ["1500", 1500],
    ["0.5", 0.5],
    [undefined, 7],
    ["", 7],
    ["0", 7],
    ["-1", 7],
    ["abc", 7],
    ["Infinity", 7],
    ["NaN", 7],
  ])("%j gives %d", (value, ms) => {
    expect(envMs("X_MS", 7, value === undefined ? {} : { X_MS: value })).toBe(ms);
  });

  it("the pass deadline and the given-up grace take no value that is no limit", () => {
    expect(passDeadlineMs({ SHEEPDOG_TICK_DEADLINE_MS: "-1" })).toBe(TICK_DEADLINE_MS);
    expect(passDeadlineMs({ SHEEPDOG_TICK_DEADLINE_MS: "2500" })).toBe(2500);
    const grace = givenUpGraceMs({});
    expect(grace).toBeGreaterThan(0);
    expect(givenUpGraceMs({ SHEEPDOG_TICK_GIVEN_UP_GRACE_MS: "-5" })).toBe(grace);
    expect(givenUpGraceMs({ SHEEPDOG_TICK_GIVEN_UP_GRACE_MS: "300" })).toBe(300);
  });
});
