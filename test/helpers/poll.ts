// The tests' one way to wait for something another process does: poll a check until it gives a
// value, bounded, then fail naming what never came. Readiness signals (a fault point's marker,
// a line a stand-in prints) are what the checks look at; no test sleeps a fixed time for them.

/** waitFor's own end: what never came (anything else a check throws is passed on as it is). */
export class WaitTimeout extends Error {}

/** Polls `check` every `everyMs` until it returns a truthy value; throws WaitTimeout after `ms`. */
export async function waitFor<T>(
  what: string,
  check: () => T | null | undefined | false | 0 | "",
  ms = 30_000,
  everyMs = 100,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = check();
    if (value) return value;
    if (Date.now() > deadline)
      throw new WaitTimeout(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** waitFor's answer as a boolean: whether `check` held within `ms` (for expect(…).toBe(true)). */
export async function holdsWithin(
  check: () => boolean,
  ms = 10_000,
  everyMs = 50,
): Promise<boolean> {
  try {
    return await waitFor("it", check, ms, everyMs);
  } catch {
    return false;
  }
}
