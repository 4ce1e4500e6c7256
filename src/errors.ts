/** Exit codes of the CLI contract (DESIGN §9). */
export const EXIT = { ok: 0, failed: 1, usage: 2, refused: 3 } as const;

/** An error that carries the exit code the CLI should end with. */
export class SheepdogError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
    this.name = "SheepdogError";
  }
}

/** Bad usage, bad config or bad input: exit 2. */
export class UsageError extends SheepdogError {
  constructor(message: string) {
    super(message, EXIT.usage);
  }
}

/** A rule said no (claim held, not the holder, file exists): exit 3. */
export class RefusedError extends SheepdogError {
  constructor(message: string) {
    super(message, EXIT.refused);
  }
}

/** Failed at run time: exit 1. */
export class RuntimeFailure extends SheepdogError {
  constructor(message: string) {
    super(message, EXIT.failed);
  }
}
