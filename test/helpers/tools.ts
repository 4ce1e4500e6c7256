// A test that needs a tool this machine may lack (Chromium, a real systemd, unshare). Outside CI
// it is skipped, saying so in one line that names the tool and how to install it. With CI set,
// nothing is skipped: the test runs and fails on the missing tool, since CI must have them all
// (.ci/run installs them).

/** True when the tests needing `tool` are to be skipped (`why`: what is missing, else null). */
export function skipWithout(tool: string, why: string | null, install: string): boolean {
  if (why === null) return false;
  if (process.env.CI) {
    process.stderr.write(`CI: ${tool} ${why}: its tests run and fail (install: ${install})\n`);
    return false;
  }
  process.stderr.write(`skipped: the ${tool} tests (${why}); install: ${install}\n`);
  return true;
}
