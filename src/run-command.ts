import { EXIT } from "./errors.js";

/** A sheepdog error as thrown from any bundle (each hot bundle has its own copy of the classes). */
function exitCodeOf(err: unknown): number | null {
  if (!(err instanceof Error)) return null;
  const code = (err as { exitCode?: unknown }).exitCode;
  return typeof code === "number" ? code : null;
}

/** Settles a command's promise into an exit code and a one-line error on stderr. */
export function finish(result: Promise<number | undefined>): void {
  result.then(
    (code) => {
      if (code !== undefined) process.exitCode = code;
    },
    (err: unknown) => {
      const code = exitCodeOf(err);
      if (code !== null) {
        process.stderr.write(`${prefixed((err as Error).message)}\n`);
        process.exitCode = code;
      } else {
        // A system error (a full disk, a file it may not write) is the message alone; a stack is
        // for developers, shown with SHEEPDOG_DEBUG set.
        const e = err as Error & { code?: unknown };
        const text = process.env.SHEEPDOG_DEBUG
          ? (e?.stack ?? String(err))
          : typeof e?.code === "string"
            ? e.message
            : `${e?.message ?? String(err)} (unexpected; run with SHEEPDOG_DEBUG=1 to see where)`;
        process.stderr.write(`sheepdog: ${text}\n`);
        process.exitCode = EXIT.failed;
      }
    },
  );
}

/**
 * Exactly one `sheepdog: ` prefix: a message that already names itself (`sheepdog tick: …`)
 * becomes `sheepdog: tick: …`, never `sheepdog: sheepdog tick: …`.
 */
export function prefixed(message: string): string {
  if (message.startsWith("sheepdog: ")) return message;
  return `sheepdog: ${message.startsWith("sheepdog ") ? message.slice("sheepdog ".length) : message}`;
}
