// The context an API call's `usage` block stands for (DESIGN §4), shared by the transcript
// reader and the statusline's `current_usage`.

export interface Usage {
  input_tokens?: unknown;
  cache_creation_input_tokens?: unknown;
  cache_read_input_tokens?: unknown;
  cache_creation?: unknown;
}

function num(v: unknown): number {
  return typeof v === "number" && Number.isFinite(v) && v > 0 ? v : 0;
}

/**
 * Cache writes: the larger of `cache_creation_input_tokens` and the sum of the nested
 * `cache_creation.ephemeral_*_input_tokens` (Claude Code before 2.1.152 can write 0 in the
 * former with the real amount only in the latter).
 */
export function cacheWritesOf(usage: Usage): number {
  let nested = 0;
  const cc = usage.cache_creation;
  if (cc && typeof cc === "object" && !Array.isArray(cc)) {
    for (const [key, value] of Object.entries(cc as Record<string, unknown>))
      if (/^ephemeral_.*_input_tokens$/.test(key)) nested += num(value);
  }
  return Math.max(num(usage.cache_creation_input_tokens), nested);
}

/** input + cache writes + cache reads, or null when the block has no `input_tokens`. */
export function contextOfUsage(usage: Usage | undefined | null): number | null {
  if (!usage || typeof usage !== "object" || typeof usage.input_tokens !== "number") return null;
  return num(usage.input_tokens) + cacheWritesOf(usage) + num(usage.cache_read_input_tokens);
}
