// Issue 30, part 4: the CLI's duration flags share one parser and one error wording (the
// `duration` and `when` option types of src/cli-spec.ts, parsed in src/util/args.ts).
import { describe, expect, it } from "vitest";
import { COMMAND_SPECS, type OptionSpec } from "../../src/cli-spec.js";
import { durationOption, parseCommandArgs, whenAt, whenOption } from "../../src/util/args.js";

const options = Object.entries(COMMAND_SPECS).flatMap(([command, spec]) =>
  Object.entries(spec.options as Record<string, OptionSpec>).map(
    ([name, o]) => [command, name, o] as const,
  ),
);

describe("duration and when options", () => {
  it("every option that takes a DURATION or a WHEN is typed so, and parsed by the one parser", () => {
    for (const [command, name, o] of options) {
      if (o.arg === "DURATION") expect(o.type, `${command} --${name}`).toBe("duration");
      if (o.arg === "WHEN") expect(o.type, `${command} --${name}`).toBe("when");
    }
    expect(options.filter(([, , o]) => o.type === "duration" || o.type === "when").length).toBe(6);
  });

  it.each([
    ["90s", 90_000],
    ["5m", 300_000],
    ["1h30m", 5_400_000],
    ["1d", 86_400_000],
  ])("--every %s is %i ms", (text, ms) => {
    expect(durationOption("every", text)).toBe(ms);
    expect(parseCommandArgs("tick", ["--every", text]).values.every).toBe(ms);
  });

  it.each(["0s", "soon", "5", "-5m", ""])("%j is refused with the one wording", (text) => {
    for (const [command, flag] of [
      ["tick", "every"],
      ["wait", "every"],
    ] as const)
      expect(() => parseCommandArgs(command, [`--${flag}=${text}`])).toThrow(
        `--${flag}: expected a positive duration such as 90s, 5m, 2h or 1d, got ${JSON.stringify(text)}`,
      );
  });

  it("a when is a duration either way from now, or an ISO-8601 time", () => {
    const now = Date.parse("2026-12-01T12:00:00Z");
    expect(whenAt(whenOption("since", "2h"), now, "back")).toBe(now - 7_200_000);
    expect(whenAt(whenOption("until", "2h"), now, "ahead")).toBe(now + 7_200_000);
    expect(whenAt(whenOption("since", "2026-11-30T18:00:00Z"), now, "back")).toBe(
      Date.parse("2026-11-30T18:00:00Z"),
    );
    for (const bad of ["yesterday", "tomorrow", "Nov 30 2026", ""])
      expect(() => whenOption("since", bad)).toThrow(
        `--since: expected a duration such as 2h or an ISO-8601 time such as 2026-11-30T18:00:00Z, got ${JSON.stringify(bad)}`,
      );
  });
});
