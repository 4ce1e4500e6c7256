/**
 * A time limit from `$NAME`, in ms: a finite number above zero, else `fallback`. Tests shorten
 * the limits this way; a value that is no limit at all (0, negative, text) is never taken.
 */
export function envMs(
  name: string,
  fallback: number,
  env: NodeJS.ProcessEnv = process.env,
): number {
  const n = Number(env[name]);
  return Number.isFinite(n) && n > 0 ? n : fallback;
}
