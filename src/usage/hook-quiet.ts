/** A hook never fails loudly (exit 0, nothing on stderr); `SHEEPDOG_DEBUG` shows what it swallowed. */
export function quiet(what: string, err: unknown): void {
  if (process.env.SHEEPDOG_DEBUG)
    process.stderr.write(`sheepdog hook: ${what}: ${(err as Error).message}\n`);
}
