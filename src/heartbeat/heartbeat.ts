import { join } from "node:path";
import * as z from "zod/mini";
import { writeJsonAtomic } from "../util/fs.js";
import { readJsonFile } from "../util/json-file.js";
import { monoNow } from "../util/mono.js";
import { iso } from "../util/time.js";

export const HEARTBEAT = "heartbeat.json";

export const heartbeatSchema = z.object({
  at: z.string(),
  pid: z.number(),
  start_time: z.optional(z.string()),
  context_tokens: z.nullable(z.number()),
  /** The monotonic time of the save (util/mono.ts): a clock stepped back since is seen. */
  mono_ms: z.optional(z.number()),
  boot: z.optional(z.nullable(z.string())),
});
export type Heartbeat = z.infer<typeof heartbeatSchema>;

/** Stamps the heartbeat atomically. Only a manager's own save or hand-over calls this. */
export function stampHeartbeat(
  stateDir: string,
  manager: { pid: number; start_time?: string },
  contextTokens: number | null,
  now = Date.now(),
): Heartbeat {
  const beat: Heartbeat = {
    at: iso(now),
    pid: manager.pid,
    ...(manager.start_time ? { start_time: manager.start_time } : {}),
    context_tokens: contextTokens,
    ...monoNow(),
  };
  writeJsonAtomic(join(stateDir, HEARTBEAT), beat);
  return beat;
}

/** The heartbeat, or null when absent or unreadable (an unreadable one proves nothing). */
export function readHeartbeat(stateDir: string): Heartbeat | null {
  return readJsonFile(join(stateDir, HEARTBEAT), heartbeatSchema);
}
