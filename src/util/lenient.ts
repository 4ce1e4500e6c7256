// The one way a file's reader drops a malformed field rather than the record it is in (DESIGN:
// every file sheepdog reads goes through zod). zod/mini's own `z.catch` would do the same, but it
// reaches zod's util namespace whole, some 20 KB more in the statusline's and the hooks' bundles.
import * as z from "zod/mini";

/** `schema`'s value, or `fallback` when the value is malformed or missing. */
export function orElse<T>(schema: z.ZodMiniType<T>, fallback: NoInfer<T>) {
  return z.union([schema, z.transform((): T => fallback)]);
}

/**
 * `make()`, called once on first use: a hot command that loads a reader but never reads its file
 * (the Stop hook loads the readings' appender) never builds the schema, a millisecond or two.
 */
export function onFirstUse<T>(make: () => T): () => T {
  let made: T | undefined;
  return () => {
    made ??= make();
    return made;
  };
}
