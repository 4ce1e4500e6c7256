import { UsageError } from "../errors.js";
import { isDuration, parseDuration } from "./duration.js";

/** `--since`: a duration back from `now` (`12h`) or an ISO-8601 time, as epoch ms. */
export function parseSince(value: string, now: number = Date.now()): number {
  if (isDuration(value)) return now - parseDuration(value);
  const at = Date.parse(value);
  if (!Number.isNaN(at)) return at;
  throw new UsageError(
    `--since: expected a duration such as 1h or an ISO-8601 time, got ${JSON.stringify(value)}`,
  );
}
